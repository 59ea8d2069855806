#!/usr/bin/env node
// MAP demo system for MAP Inspector.
//
// Hosts the OFFICIAL MAPServer from @multi-agent-protocol/sdk on 127.0.0.1 behind the `ws` package,
// plus a population of simulated agents built on the SDK's AgentConnection, plus a few plain HTTP
// endpoints for tests. See README.md in this folder.
//
// stdout: exactly one line, the listening URL. Everything else goes to stderr. With --stdio, stdout
// carries MAP (NDJSON) and the listening line goes to stderr (lib/streamHost.mjs).

import fs from 'node:fs';
import http from 'node:http';
import WS, { WebSocketServer } from 'ws';

import { parseArgs } from './lib/options.mjs';
import { log, rateLimitedLog, setVerbose } from './lib/log.mjs';
import { bindHost } from './lib/host.mjs';
import { wsStream } from './lib/wsStream.mjs';
import { Simulation } from './lib/simulation.mjs';
import { serveStdio, serveUnix } from './lib/streamHost.mjs';

// Node 20 has no global WebSocket; the SDK's helpers use the global one.
if (typeof globalThis.WebSocket === 'undefined') globalThis.WebSocket = WS;

const { MAPServer, EventBusImpl, createSimpleAPIKeyAuthenticator, JWTAuthenticator } =
  await import('@multi-agent-protocol/sdk/server');
const { AgentConnection } = await import('@multi-agent-protocol/sdk');

const VERSION = '0.1.0';

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

// (lib/options.mjs)

const OPTS = parseArgs(process.argv.slice(2));
// A server whose clock is off (tests of the client's skew correction): every timestamp the SDK
// makes comes from Date.now().
if (OPTS.clockSkewMs) {
  const realNow = Date.now;
  Date.now = () => realNow() + OPTS.clockSkewMs;
}
const EXTENDED = OPTS.mode === 'extended';
setVerbose(OPTS.verbose);

// ---------------------------------------------------------------------------------------------
// The official server
// ---------------------------------------------------------------------------------------------

// Same EventBusImpl MAPServer would create itself; only its error callback is replaced so that a
// broken subscriber (e.g. a `map/subscribe` without `filter`) does not flood stderr once per event.
const eventBus = new EventBusImpl({
  onSubscriberError: (err, event) => rateLimitedLog('bus-error', `event bus subscriber error on ${event?.type}: ${err?.message}`),
});

function buildAuthConfig() {
  if (!OPTS.auth) return undefined;
  const secret = OPTS.credential;
  let authenticator;
  if (OPTS.auth === 'api-key') {
    authenticator = createSimpleAPIKeyAuthenticator({ [secret]: 'demo-operator' });
  } else {
    // Bearer: the credential itself is accepted as an opaque token; a JWT signed HS256 with it is
    // verified by the SDK's JWTAuthenticator (so `exp` and map/auth/expiring can be exercised).
    const jwt = new JWTAuthenticator({ secret });
    authenticator = {
      methods: ['bearer'],
      async authenticate(credentials, context) {
        const token = credentials?.credential;
        if (typeof token === 'string' && token === secret) {
          return { success: true, principal: { id: 'demo-bearer', issuer: 'map-demo-system' } };
        }
        if (typeof token === 'string' && token.split('.').length === 3) return jwt.authenticate(credentials, context);
        return { success: false, error: { code: 'invalid_credentials', message: 'Invalid bearer token' } };
      },
    };
  }
  // map/auth/expiring: MAPServer's monitor looks every checkIntervalMs for credentials (a JWT's
  // `exp`) that end within five minutes.
  return {
    required: true,
    authenticators: [authenticator],
    expirationNotification: { checkIntervalMs: Math.max(100, OPTS.authCheckMs) },
  };
}

const extensionState = { sessionRouters: new Map(), tasks: null };
// One counter for every task id, whether the simulation or a client (map/tasks/create) makes it.
let taskIdSeq = 0;
const nextTaskId = () => `task-${String(++taskIdSeq).padStart(6, '0')}`;
const server = new MAPServer({
  name: 'MAP demo system',
  version: VERSION,
  eventBus,
  auth: buildAuthConfig(),
  additionalHandlers: EXTENDED ? createExtensionHandlers() : undefined,
});

// --- /stats: count everything the bus publishes (what a `filter:{}` subscriber would receive) ---
const stats = { eventsEmitted: 0, byType: Object.create(null), lastEventId: null };
server.eventBus.on('*', (event) => {
  stats.eventsEmitted++;
  stats.byType[event.type] = (stats.byType[event.type] ?? 0) + 1;
  stats.lastEventId = event.id;
});

// --- memory guard ---------------------------------------------------------------------------
// SubscriptionManagerImpl keeps, per subscription, a queue of every matched event (only read by
// its in-process async iterator, which MAPServer never uses for wire delivery) and a set of every
// event id seen. Draining them changes nothing on the wire but keeps a long run's memory flat.
if (OPTS.memoryGuard) {
  setInterval(() => {
    const states = server.subscriptions?.states;
    if (!states || typeof states.values !== 'function') return;
    for (const st of states.values()) {
      if (Array.isArray(st?.eventQueue) && (!st.resolvers || st.resolvers.length === 0)) st.eventQueue.length = 0;
      if (st?.buffer && typeof st.buffer.clear === 'function' && st.buffer.pendingCount === 0) st.buffer.clear();
    }
  }, 5000).unref();
}

function routerForSession(sessionId) {
  const router = extensionState.sessionRouters.get(sessionId);
  if (router && server.connections.get(router.__routerId) === router) return router;
  for (const r of server.connections.values()) {
    try { if (r.session?.id === sessionId) { extensionState.sessionRouters.set(sessionId, r); return r; } } catch { /* not started */ }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Extended mode: extension handlers, message delivery, queue expiry
// ---------------------------------------------------------------------------------------------

function publicAgent(a) {
  return {
    id: a.id, name: a.name, role: a.role, state: a.state, metadata: a.metadata,
    capabilities: a.capabilities, capabilityDescriptor: a.capabilityDescriptor,
    persistentIdentity: a.persistentIdentity, visibility: 'public',
  };
}

function requireAgent(params) {
  const agentId = params?.agentId;
  if (typeof agentId !== 'string' || agentId === '') throw new Error('agentId is required');
  const agent = server.agents.get(agentId);
  if (!agent) throw new Error(`Agent not found: ${agentId}`);
  return agent;
}

function createTaskTable() {
  const STATUSES = ['open', 'in_progress', 'blocked', 'completed', 'failed'];
  const MAX_TASKS = 5000;
  const tasks = new Map();
  const newId = nextTaskId;
  const emit = (type, data, task) => server.eventBus.emit({
    type, data, ...(task?.assignee ? { source: { agentId: task.assignee } } : {}),
  });
  const copy = (t) => JSON.parse(JSON.stringify(t));
  const checkStatus = (s) => { if (!STATUSES.includes(s)) throw new Error(`Invalid task status: ${s}`); };
  const evict = () => {
    if (tasks.size <= MAX_TASKS) return;
    for (const [id, t] of tasks) {
      if (tasks.size <= MAX_TASKS) break;
      if (t.status === 'completed' || t.status === 'failed') tasks.delete(id);
    }
    while (tasks.size > MAX_TASKS) tasks.delete(tasks.keys().next().value);
  };
  return {
    create(input) {
      if (!input || typeof input !== 'object') throw new Error('task is required');
      const id = input.id ?? newId();
      if (typeof id !== 'string' || id === '') throw new Error('task.id must be a non-empty string');
      if (tasks.has(id)) throw new Error(`Task already exists: ${id}`);
      const status = input.status ?? 'open';
      checkStatus(status);
      const assignee = input.assignee ?? null;
      if (assignee !== null && !server.agents.get(assignee)) throw new Error(`Agent not found: ${assignee}`);
      const now = Date.now();
      const task = {
        id, assignee, title: input.title ?? id, status,
        ...(input.description !== undefined ? { description: input.description } : {}),
        meta: { ...(input.meta ?? {}) }, createdAt: now, updatedAt: now,
      };
      tasks.set(id, task);
      evict();
      emit('task.created', { task: copy(task) }, task);
      if (assignee) emit('task.assigned', { taskId: id, agentId: assignee }, task);
      return copy(task);
    },
    get(id) {
      const t = tasks.get(id);
      if (!t) throw new Error(`Task not found: ${id}`);
      return t;
    },
    assign(taskId, agentId) {
      const t = this.get(taskId);
      if (typeof agentId !== 'string' || !server.agents.get(agentId)) throw new Error(`Agent not found: ${agentId}`);
      t.assignee = agentId;
      t.updatedAt = Date.now();
      emit('task.assigned', { taskId, agentId }, t);
      return copy(t);
    },
    update(params) {
      const t = this.get(params.taskId);
      const prevStatus = t.status;
      const prevAssignee = t.assignee;
      if (params.status !== undefined) { checkStatus(params.status); t.status = params.status; }
      if (params.title !== undefined) t.title = params.title;
      if (params.description !== undefined) t.description = params.description;
      if (params.assignee !== undefined) {
        if (params.assignee !== null && !server.agents.get(params.assignee)) throw new Error(`Agent not found: ${params.assignee}`);
        t.assignee = params.assignee;
      }
      if (params.meta && typeof params.meta === 'object') t.meta = { ...t.meta, ...params.meta };
      t.updatedAt = Date.now();
      if (t.assignee && t.assignee !== prevAssignee) emit('task.assigned', { taskId: t.id, agentId: t.assignee }, t);
      if (t.status !== prevStatus) {
        emit('task.status', { taskId: t.id, previous: prevStatus, current: t.status }, t);
        if (t.status === 'completed') emit('task.completed', { taskId: t.id, result: t.meta?.result }, t);
      }
      return copy(t);
    },
    list(params) {
      const filter = params?.filter ?? {};
      const statuses = filter.status === undefined ? null : (Array.isArray(filter.status) ? filter.status : [filter.status]);
      let all = [...tasks.values()];
      if (filter.assignee !== undefined) all = all.filter((t) => t.assignee === filter.assignee);
      if (statuses) all = all.filter((t) => statuses.includes(t.status));
      const offset = Math.max(0, parseInt(params?.cursor ?? '0', 10) || 0);
      const limit = Math.min(1000, Math.max(1, Math.floor(Number(params?.limit ?? 100)) || 100));
      const page = all.slice(offset, offset + limit).map(copy);
      const hasMore = offset + limit < all.length;
      return { tasks: page, hasMore, ...(hasMore ? { nextCursor: String(offset + limit) } : {}) };
    },
    get size() { return tasks.size; },
  };
}

function createExtensionHandlers() {
  const tasks = createTaskTable();
  extensionState.tasks = tasks;
  let injectionSeq = 0;
  const DELIVERY = ['interrupt', 'queue', 'best-effort'];
  return {
    'map/inject': async (params, ctx) => {
      const agent = requireAgent(params);
      const requested = params.delivery ?? 'best-effort';
      if (!DELIVERY.includes(requested)) throw new Error(`Invalid delivery mode: ${requested}`);
      let used = requested;
      if (requested === 'best-effort') used = (agent.state === 'busy' || agent.state === 'suspended') ? 'queue' : 'interrupt';
      if (used === 'interrupt' && agent.state === 'suspended') used = 'queue';
      if (agent.state === 'stopped') return { injected: false, delivery: used, reason: 'Agent is stopped' };
      const router = routerForSession(agent.sessionId);
      if (!router) return { injected: false, delivery: used, reason: 'Agent is not connected' };
      const injectionId = `inj-${Date.now().toString(36)}-${(++injectionSeq).toString(36)}`;
      router.notify('map/inject', {
        injectionId, agentId: agent.id, content: params.content, delivery: used,
        from: ctx.session.id, timestamp: Date.now(),
      }).catch(() => {});
      log(`inject ${injectionId} -> ${agent.name} (${used})`);
      return { injected: true, delivery: used, injectionId };
    },
    'map/agents/stop': async (params) => {
      const agent = requireAgent(params);
      const updated = agent.state === 'stopped' ? agent : server.agents.updateState(agent.id, 'stopped');
      log(`stop ${agent.name}${params.reason ? ` (${params.reason})` : ''}${params.force ? ' force' : ''}`);
      return { stopping: true, agent: publicAgent(updated) };
    },
    'map/agents/suspend': async (params) => {
      const agent = requireAgent(params);
      const updated = server.agents.updateState(agent.id, 'suspended');
      log(`suspend ${agent.name}${params.reason ? ` (${params.reason})` : ''}`);
      return { suspended: true, agent: publicAgent(updated) };
    },
    'map/agents/resume': async (params) => {
      const agent = requireAgent(params);
      if (agent.state !== 'suspended') return { resumed: false, agent: publicAgent(agent), reason: `Agent is ${agent.state}, not suspended` };
      const updated = server.agents.updateState(agent.id, 'idle');
      log(`resume ${agent.name}`);
      return { resumed: true, agent: publicAgent(updated) };
    },
    'map/tasks/list': async (params) => tasks.list(params ?? {}),
    'map/tasks/create': async (params) => ({ task: tasks.create(params?.task) }),
    'map/tasks/assign': async (params) => ({ task: tasks.assign(params?.taskId, params?.agentId) }),
    'map/tasks/update': async (params) => {
      if (!params?.taskId) throw new Error('taskId is required');
      return { task: tasks.update(params) };
    },
  };
}

if (EXTENDED) {
  // Real delivery: push `map/message {message, agentId}` to the connection owning the agent.
  // MessageRouterImpl then emits `message.delivered`.
  server.messages.onDeliver((agentId, message) => {
    const agent = server.agents.get(agentId);
    const router = agent && routerForSession(agent.sessionId);
    if (!router) return;
    router.notify('map/message', { message, agentId }).catch(() => {});
  });
  // Nobody else calls it: without this, queued messages (to stopped or unknown agents) never expire.
  setInterval(() => server.messages.expireMessages(), 10_000).unref();
}

// ---------------------------------------------------------------------------------------------
// WebSocket + HTTP hosting
// ---------------------------------------------------------------------------------------------

// The server's side of a client connection, for MAPServer.accept(): frames that are not JSON are
// dropped (and said, rate limited).
function serverStream(ws) {
  return wsStream(ws, {
    terminateOnCancel: true,
    decode(text) {
      try { return JSON.parse(text); } catch {
        rateLimitedLog('bad-json', `dropped a frame that is not JSON (${text.length} chars)`);
        return undefined;
      }
    },
  });
}

const sockets = new Set();
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });

function attachWebSocket(ws, role, resumeToken, name) {
  sockets.add(ws);
  ws.on('close', () => sockets.delete(ws));
  const router = server.accept(serverStream(ws), {
    role, resumeToken: resumeToken || undefined, name: name || undefined, transportType: 'websocket',
  });
  router.start().catch((err) => log(`router start failed: ${err?.message}`));
  try {
    const sessionId = router.session.id;
    extensionState.sessionRouters.set(sessionId, router);
    router.closed.then(() => {
      if (extensionState.sessionRouters.get(sessionId) === router) extensionState.sessionRouters.delete(sessionId);
    });
    if (role === 'client') log(`client connected session=${sessionId}${resumeToken ? ' (resume requested)' : ''}`);
  } catch { /* not started */ }
}

function sendJson(res, code, body) {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function buildView() {
  const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const agents = server.agents.list().sort(byId).map((a) => ({
    id: a.id,
    name: a.name ?? null,
    role: a.role ?? null,
    state: a.state,
    parentId: a.metadata?.parentId ?? null,
    sessionId: a.sessionId ?? null,
    scopes: server.scopes.getScopesForAgent(a.id).slice().sort(),
  }));
  const scopes = server.scopes.list().sort(byId).map((s) => ({
    id: s.id,
    name: s.name ?? null,
    parentId: s.parentId ?? null,
    members: server.scopes.getMembers(s.id).slice().sort(),
  }));
  return { agents, scopes };
}

const httpServer = http.createServer((req, res) => {
  let path;
  try { path = new URL(req.url, 'http://127.0.0.1').pathname; } catch { path = req.url; }
  const method = req.method;
  req.resume(); // bodies are not used
  const route = `${method} ${path}`;
  if (route === 'GET /view') return sendJson(res, 200, buildView());
  if (route === 'GET /stats') return sendJson(res, 200, { eventsEmitted: stats.eventsEmitted, byType: { ...stats.byType }, lastEventId: stats.lastEventId });
  if (route === 'GET /status') return sendJson(res, 200, sim.status());
  if (route === 'POST /control/quiesce') {
    sim.quiesce().then((r) => sendJson(res, 200, r), (err) => sendJson(res, 500, { error: String(err?.message ?? err) }));
    return;
  }
  if (route === 'POST /control/activity') return sendJson(res, 200, sim.activity());
  if (['/view', '/stats', '/status', '/control/quiesce', '/control/activity'].includes(path)) {
    return sendJson(res, 405, { error: `method ${method} not allowed on ${path}` });
  }
  if (path === '/' || path === '/agent') {
    return sendJson(res, 426, { error: 'WebSocket upgrade required: clients on /, agents on /agent' });
  }
  return sendJson(res, 404, { error: `no such endpoint: ${path}` });
});

httpServer.on('upgrade', (req, socket, head) => {
  let url;
  try { url = new URL(req.url, 'http://127.0.0.1'); } catch { socket.destroy(); return; }
  const role = url.pathname === '/agent' ? 'agent' : 'client';
  const resumeToken = url.searchParams.get('resumeToken');
  const name = url.searchParams.get('name');
  wss.handleUpgrade(req, socket, head, (ws) => attachWebSocket(ws, role, resumeToken, name));
});

bindHost({ opts: OPTS, extended: EXTENDED, server, stats, extensionState, nextTaskId, AgentConnection });
const sim = new Simulation(OPTS);

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

let shuttingDown = false;
function shutdown(signal) {
  if (shuttingDown) return;
  shuttingDown = true;
  log(`${signal}: shutting down`);
  sim.shutdown();
  for (const ws of sockets) { try { ws.terminate(); } catch { /* ignore */ } }
  httpServer.close();
  setTimeout(() => process.exit(0), 100).unref();
  setImmediate(() => process.exit(0));
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('unhandledRejection', (err) => rateLimitedLog('unhandled', `unhandled rejection: ${err?.stack ?? err}`));

httpServer.on('error', (err) => {
  process.stderr.write(`demo-system: cannot listen on 127.0.0.1:${OPTS.port}: ${err.message}\n`);
  process.exit(1);
});
httpServer.listen({ port: OPTS.port, host: '127.0.0.1', exclusive: true }, () => {
  const { port } = httpServer.address();
  const url = `ws://127.0.0.1:${port}`;
  const listening = `MAP demo system listening on ${url} mode=${OPTS.mode} agents=${OPTS.agents} seed=${OPTS.seed}` +
    `${OPTS.auth ? ` auth=${OPTS.auth}` : ''}\n`;
  if (OPTS.stdio) {
    process.stderr.write(listening);
    serveStdio(server, OPTS.stdio, log, () => shutdown('stdin EOF'));
  } else {
    process.stdout.write(listening);
  }
  if (OPTS.unix) serveUnix(server, OPTS.unix, OPTS.unixWrites, log);
  if (OPTS.urlFile) fs.writeFileSync(OPTS.urlFile, url);
  log(`MAPServer (sdk 0.1.15) mode=${OPTS.mode} rate=${OPTS.rate}/s heartbeat=${OPTS.heartbeatMs}ms duration=${OPTS.duration || 'forever'}` +
    ` http: GET /view /stats /status, POST /control/quiesce /control/activity`);
  // --agents-via-file: the agents' address (a tap in front of this server) comes later, in a file.
  const agentsUrl = () => new Promise((resolve) => {
    if (!OPTS.agentsViaFile) return resolve(url);
    const poll = setInterval(() => {
      let text = '';
      try { text = fs.readFileSync(OPTS.agentsViaFile, 'utf8').trim(); } catch { return; }
      if (!/^wss?:\/\/\S+$/.test(text)) return; // not written whole yet
      clearInterval(poll);
      log(`agents connect through ${text}`);
      resolve(text.replace(/\/+$/, ''));
    }, 50);
  });
  setTimeout(async () => {
    sim.start(await agentsUrl()).catch((err) => {
      sim.phase = 'failed';
      log(`simulation failed to start: ${err?.stack ?? err}`);
    });
  }, OPTS.startDelayMs);
});
