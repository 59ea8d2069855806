#!/usr/bin/env node
// MAP extensions demo for MAP Inspector: the OFFICIAL MAPServer (@multi-agent-protocol/sdk 0.1.15)
// with mail, workspace and (wired by hand) trajectory, plus three SDK AgentConnections and one SDK
// ClientConnection that drives an ACP stream. Used by integration tests and for screenshots.
//
//   node extensions-demo.mjs --port P [--wait-clients N] [--wait-max S] [--duration S] [--verbose]
//
// stdout, one JSON object per line (nothing else): {"ready":true,"url":...,"agents":{...}},
// {"trafficDone":true,"server":{...}} and, at exit, {"summary":true,...}. Logs go to stderr.
// See README.md ("Extensions demo") for the traffic and the host glue.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import WS, { WebSocketServer } from 'ws';

import { wsStream } from './lib/wsStream.mjs';

// Node 20 has a global WebSocket only with --experimental-websocket; the SDK's helpers use it.
if (typeof globalThis.WebSocket === 'undefined') globalThis.WebSocket = WS;

// --- command line, logging --------------------------------------------------------------------
function parseArgs(argv) {
  const o = { port: null, waitClients: 0, waitMax: 30, duration: 0, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => { const v = Number(argv[++i]); if (!Number.isFinite(v) || v < 0) throw new Error(`${a} needs a number >= 0`); return v; };
    if (a === '--port') o.port = num();
    else if (a === '--wait-clients') o.waitClients = num();
    else if (a === '--wait-max') o.waitMax = num();
    else if (a === '--duration') o.duration = num();
    else if (a === '--verbose') o.verbose = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.port) || o.port > 65535) throw new Error('--port P is required (0 = any free port)');
  return o;
}
let OPTS;
try { OPTS = parseArgs(process.argv.slice(2)); } catch (e) {
  process.stderr.write(`extensions-demo: ${e.message}\nusage: node extensions-demo.mjs --port P [--wait-clients N] [--wait-max S] [--duration S] [--verbose]\n`);
  process.exit(2);
}
const T0 = Date.now();
let shuttingDown = false;
const log = (msg) => process.stderr.write(`[ext-demo ${((Date.now() - T0) / 1000).toFixed(3)}s] ${msg}\n`);
const vlog = (msg) => { if (OPTS.verbose) log(msg); };
const emit = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The SDK logs with console.*: keep stdout for the JSON lines.
for (const k of ['log', 'info', 'warn', 'error', 'debug']) {
  const str = (a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : JSON.stringify(a));
  console[k] = (...args) => { if (k !== 'debug' || OPTS.verbose) process.stderr.write(`[sdk ${k}] ${args.map(str).join(' ')}\n`); };
}

const {
  MAPServer, EventBusImpl, InMemoryTrajectoryStore, TrajectoryManagerImpl, createTrajectoryHandlers,
} = await import('@multi-agent-protocol/sdk/server');
const { AgentConnection, ClientConnection, ACPAgentAdapter, isACPEnvelope, ACP_PROTOCOL_VERSION } =
  await import('@multi-agent-protocol/sdk');

// --- workspace: a read-only file service over a temp directory -------------------------------
const WS_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'map-extensions-demo-'));
function makeWorkspace() {
  const put = (rel, text) => { const p = path.join(WS_ROOT, rel); fs.mkdirSync(path.dirname(p), { recursive: true }); fs.writeFileSync(p, text); };
  put('README.md', '# demo workspace\n\nThe files the agents of the MAP extensions demo work on.\n');
  put('src/login.ts', [
    "import { normalize } from './util/strings';", '',
    'export function login(user: string, password: string): boolean {',
    '  const name = normalize(user);',
    "  if (name === '') return false;",
    '  return password.length >= 8;',
    '}', ''].join('\n'));
  put('src/util/strings.ts', 'export function normalize(s: string): string {\n  return s.trim().toLowerCase();\n}\n');
  const lines = [];
  for (let n = 1, size = 0; size < 300 * 1024; n++) {
    const two = (v) => String(v).padStart(2, '0');
    const line = `2026-01-15T10:${two(Math.floor(n / 60) % 60)}:${two(n % 60)}.000Z INFO  auth   request ` +
      `${String(n).padStart(5, '0')} user=u${n % 97} status=${n % 41 === 0 ? 401 : 200}`;
    lines.push(line);
    size += line.length + 1;
  }
  put('logs/big.log', lines.join('\n') + '\n');
}
makeWorkspace();

const MIME = { '.md': 'text/markdown', '.ts': 'text/x-typescript', '.log': 'text/plain', '.json': 'application/json' };
const mimeOf = (p) => MIME[path.extname(p).toLowerCase()] ?? 'text/plain';
function checkAgent(agentId) {
  if (!server.agents.get(agentId)) throw new Error(`Unknown agent: ${agentId}`);
}
// A path relative to the workspace root: no absolute paths, no `..` segments.
function resolveSafe(rel) {
  const p = rel === undefined || rel === null || rel === '' ? '.' : String(rel);
  if (path.isAbsolute(p) || /^[A-Za-z]:/.test(p) || p.startsWith('\\')) throw new Error(`Absolute paths are not allowed: ${p}`);
  if (p.split(/[\\/]+/).includes('..')) throw new Error(`Path escapes the workspace: ${p}`);
  const abs = path.resolve(WS_ROOT, p);
  if (abs !== WS_ROOT && !abs.startsWith(WS_ROOT + path.sep)) throw new Error(`Path escapes the workspace: ${p}`);
  return abs;
}
const relOf = (abs) => path.relative(WS_ROOT, abs).split(path.sep).join('/');
function fileResult(abs) {
  const st = fs.statSync(abs);
  return st.isDirectory() ? { path: relOf(abs), isDirectory: true }
    : { path: relOf(abs), isDirectory: false, size: st.size, mime: mimeOf(abs) };
}
const fileService = {
  async search(agentId, query, options = {}) {
    checkAgent(agentId);
    const q = String(query).toLowerCase();
    const limit = Math.max(1, Math.min(1000, Number(options.limit) || 50));
    const out = [];
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (out.length >= limit) return;
        const abs = path.join(dir, e.name);
        if (e.name.toLowerCase().includes(q)) out.push(fileResult(abs));
        if (e.isDirectory()) walk(abs);
      }
    };
    walk(resolveSafe(options.cwd));
    return out;
  },
  async list(agentId, directory) {
    checkAgent(agentId);
    const dir = resolveSafe(directory);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`No such directory: ${directory}`);
    return fs.readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => (a.isDirectory() === b.isDirectory() ? a.name.localeCompare(b.name) : a.isDirectory() ? -1 : 1))
      .map((e) => fileResult(path.join(dir, e.name)));
  },
  async read(agentId, rel, lineRange) {
    checkAgent(agentId);
    const abs = resolveSafe(rel);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) throw new Error(`No such file: ${rel}`);
    const all = fs.readFileSync(abs, 'utf8');
    let text = all;
    if (lineRange && typeof lineRange === 'object') {
      const lines = all.split('\n');
      const start = Math.max(1, Math.floor(Number(lineRange.start) || 1));
      const end = Math.min(lines.length, Math.floor(Number(lineRange.end) || lines.length));
      text = start > end ? '' : lines.slice(start - 1, end).join('\n');
    }
    return { text, mime: mimeOf(abs), size: fs.statSync(abs).size };
  },
};

// --- trajectory: SDK building blocks, host content provider, host-pushed chunks ---------------
const eventBus = new EventBusImpl({ onSubscriberError: (err, ev) => vlog(`event bus subscriber error on ${ev?.type}: ${err?.message}`) });
const contentByCheckpoint = new Map(); // checkpointId -> {artifacts, stream?: {artifact, bytes}}
const pendingStreams = new Map();      // streamId -> Buffer, announced by getContent, pushed by the handler
const CHUNK_BYTES = 8192;
let streamSeq = 0;
const trajectory = new TrajectoryManagerImpl({
  store: new InMemoryTrajectoryStore(),
  eventBus,
  contentProvider: {
    async getContent(checkpointId, include) {
      const want = (k) => !Array.isArray(include) || include.length === 0 || include.includes(k);
      const c = contentByCheckpoint.get(checkpointId);
      if (!c) return { checkpointId, artifacts: { metadata: trajectory.get(checkpointId)?.metadata ?? {} }, streaming: false };
      const artifacts = Object.fromEntries(Object.entries(c.artifacts).filter(([k]) => want(k)));
      if (!c.stream || !want(c.stream.artifact)) return { checkpointId, artifacts, streaming: false };
      const streamId = `traj-stream-${++streamSeq}`;
      pendingStreams.set(streamId, c.stream.bytes);
      return {
        checkpointId, artifacts, streaming: true, streamId, streamArtifact: c.stream.artifact,
        streamInfo: { totalBytes: c.stream.bytes.length, totalChunks: Math.ceil(c.stream.bytes.length / CHUNK_BYTES), encoding: 'base64' },
      };
    },
  },
});
const trajectoryHandlers = createTrajectoryHandlers({ trajectory });
const sdkContentHandler = trajectoryHandlers['trajectory/content'];
const counters = { chunksSent: 0, acpBridged: 0 };
// Nothing in the SDK sends `trajectory/content.chunk`: after answering a streaming
// `trajectory/content`, push the chunks to the connection that asked.
trajectoryHandlers['trajectory/content'] = async (params, ctx) => {
  const result = await sdkContentHandler(params, ctx);
  const c = result?.content;
  if (c?.streaming && pendingStreams.has(c.streamId)) {
    const bytes = pendingStreams.get(c.streamId);
    pendingStreams.delete(c.streamId);
    setTimeout(() => pushChunks(ctx.session.id, c.streamId, bytes).catch((e) => log(`chunks ${c.streamId}: ${e?.message}`)), 20);
  }
  return result;
};
async function pushChunks(sessionId, streamId, bytes) {
  const router = routerForSession(sessionId);
  if (!router) return;
  const total = Math.ceil(bytes.length / CHUNK_BYTES);
  const checksum = crypto.createHash('sha256').update(bytes).digest('hex');
  for (let index = 0; index < total; index++) {
    const final = index === total - 1;
    await router.notify('trajectory/content.chunk', {
      streamId, index, data: bytes.subarray(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES).toString('base64'),
      final, ...(final ? { checksum } : {}),
    });
    counters.chunksSent++;
    await sleep(10);
  }
  vlog(`pushed ${total} chunks of ${streamId} to session ${sessionId}`);
}

// --- the official server ----------------------------------------------------------------------
const server = new MAPServer({
  name: 'MAP extensions demo', version: '0.1.0', eventBus,
  mail: { enabled: true },
  workspace: { enabled: true, fileService },
  additionalHandlers: trajectoryHandlers,
});
const eventCounts = { total: 0, byType: Object.create(null) };
eventBus.on('*', (ev) => { eventCounts.total++; eventCounts.byType[ev.type] = (eventCounts.byType[ev.type] ?? 0) + 1; });

function routerForSession(sessionId) {
  for (const r of server.connections.values()) {
    try { if (r.session?.id === sessionId) return r; } catch { /* not started */ }
  }
  return undefined;
}
// Delivery glue (stock MAPServer never delivers): map/message to the connection owning the agent,
// so the ACP agent (ACPAgentAdapter on bob) receives the client's requests.
server.messages.onDeliver((agentId, message) => {
  const agent = server.agents.get(agentId);
  const router = agent?.sessionId ? routerForSession(agent.sessionId) : undefined;
  router?.notify('map/message', { message, agentId }).catch(() => {});
});

// ACP accounting + reply bridge. The adapter answers with map/send {to:{participant:<client
// session>}}, which MAPServer treats as an agent id and only queues; and the SDK's ACP stream
// waits for a `message_delivered` event (underscore) from the target agent. So each
// agent-to-client ACP frame is also handed, as such an event, to the client's own ACP
// subscription, on that connection only (other subscribers never see these synthetic events).
const acpStreams = new Map(); // streamId -> {clientToAgent, agentToClient}
const bridgeSeq = new Map();  // subscriptionId -> last sequence number the bridge used
eventBus.on('message.sent', (ev) => {
  const message = ev.data?.message;
  if (!message || !isACPEnvelope(message.payload)) return;
  const { streamId, direction } = message.payload.acpContext;
  const s = acpStreams.get(streamId) ?? { clientToAgent: 0, agentToClient: 0 };
  if (direction === 'agent-to-client') s.agentToClient++; else s.clientToAgent++;
  acpStreams.set(streamId, s);
  if (direction !== 'agent-to-client' || typeof message.to !== 'string') return;
  const router = routerForSession(message.to);
  if (!router) return;
  const senders = new Set(server.agents.list().filter((a) => a.sessionId === message.from).map((a) => a.id));
  for (const sub of server.subscriptions.store.list({ sessionId: message.to })) {
    const from = (sub.filter?.fromAgents ?? []).find((id) => senders.has(id));
    if (!from) continue;
    const seq = (bridgeSeq.get(sub.id) ?? 0) + 1;
    bridgeSeq.set(sub.id, seq);
    const id = `acp-bridge-${crypto.randomUUID()}`;
    const event = { id, type: 'message_delivered', timestamp: Date.now(), source: { agentId: from }, data: { messageId: message.id, message } };
    router.notify('map/event', { subscriptionId: sub.id, sequenceNumber: seq, eventId: id, timestamp: event.timestamp, event }).catch(() => {});
    counters.acpBridged++;
  }
});

// --- WebSocket hosting ------------------------------------------------------------------------
// Path /agent = role agent, anything else = role client. `?internal=1` marks this program's own
// connections, which --wait-clients does not count.
const sockets = new Set();
const externalClients = new Set(); // routers of external client-role connections
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
const httpServer = http.createServer((req, res) => { res.writeHead(426, { 'Content-Type': 'text/plain' }); res.end('WebSocket only\n'); });
httpServer.on('upgrade', (req, socket, head) => {
  let url;
  try { url = new URL(req.url ?? '/', 'http://127.0.0.1'); } catch { socket.destroy(); return; }
  wss.handleUpgrade(req, socket, head, (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    const role = url.pathname.startsWith('/agent') ? 'agent' : 'client';
    const stream = wsStream(ws, { terminateOnCancel: true, decode: (t) => { try { return JSON.parse(t); } catch { return undefined; } } });
    const router = server.accept(stream, { role, transportType: 'websocket', name: url.searchParams.get('name') || undefined });
    router.start().catch((e) => log(`router: ${e?.message}`));
    if (role === 'client' && url.searchParams.get('internal') !== '1') {
      externalClients.add(router);
      ws.on('close', () => externalClients.delete(router));
      vlog('external client connected');
    }
  });
});
const subscribedExternalClients = () => [...externalClients].filter((r) => {
  try { return server.subscriptions.store.list({ sessionId: r.session.id }).length > 0; } catch { return false; }
}).length;

async function openSocket(url) {
  const ws = new WS(url, { perMessageDeflate: false });
  await Promise.race([once(ws, 'open'), once(ws, 'error').then(([e]) => { throw e; })]);
  sockets.add(ws);
  return ws;
}
const sdkStream = (ws) => wsStream(ws, { decode: (t) => { try { return JSON.parse(t); } catch { return undefined; } } });

// --- start ------------------------------------------------------------------------------------
httpServer.on('error', (err) => { process.stderr.write(`extensions-demo: cannot listen on 127.0.0.1:${OPTS.port}: ${err.message}\n`); process.exit(1); });
await new Promise((resolve) => httpServer.listen({ port: OPTS.port, host: '127.0.0.1', exclusive: true }, resolve));
const PORT = httpServer.address().port;
const URL_BASE = `ws://127.0.0.1:${PORT}`;

// alice and bob register before any observer connects (an observer learns their sessions from
// nothing: MAPServer's lists do not carry them); carol after (her agent.registered event names her
// session, so her session-id participations read as her).
const agents = {};
async function registerAgent(name, role) {
  const conn = new AgentConnection(sdkStream(await openSocket(`${URL_BASE}/agent?internal=1&name=${name}`)), { name, role, capabilities: [`${role}:work`] });
  const { agent, connection } = await conn.connect();
  agents[name] = { conn, id: agent.id, sessionId: connection.sessionId };
  vlog(`agent ${name} = ${agent.id} (session ${connection.sessionId})`);
  return agents[name];
}
const alice = await registerAgent('alice', 'planner');
const bob = await registerAgent('bob', 'coder');
let carol = null;
const errors = [];
// A text turn (mail/turn) by one of the agents.
const say = (who, conversationId, text, extra = {}) =>
  who.conn.recordTurn({ conversationId, contentType: 'text', content: { text }, ...extra });

// History only: a conversation that exists before any observer connects.
{
  const { conversation, initialTurn } = await alice.conn.createConversation({
    type: 'incident', subject: 'Earlier incident', metadata: { severity: 'minor', service: 'auth' },
    initialParticipants: [{ id: bob.id, role: 'responder' }],
    initialTurn: { contentType: 'text', content: { text: 'Login latency spiked to 4 s at 09:12.' } },
  });
  const t2 = await say(bob, conversation.id, 'The session cache was cold after the deploy.', { inReplyTo: initialTurn.id });
  await say(alice, conversation.id, 'Can we warm it on start?', { inReplyTo: t2.turn.id });
  await say(bob, conversation.id, 'Done, latency is back to 80 ms.');
  await alice.conn.closeConversation(conversation.id, 'resolved');
}

emit({ ready: true, url: URL_BASE, agents: { alice: alice.id, bob: bob.id } });
log(`ready on ${URL_BASE} (workspace ${WS_ROOT})`);
if (OPTS.duration > 0) setTimeout(() => shutdown('duration'), OPTS.duration * 1000);
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

if (OPTS.waitClients > 0) {
  const end = Date.now() + OPTS.waitMax * 1000;
  while (subscribedExternalClients() < OPTS.waitClients && Date.now() < end) await sleep(50);
  if (subscribedExternalClients() < OPTS.waitClients) log(`only ${subscribedExternalClients()} of ${OPTS.waitClients} subscribed clients came; going on`);
}
await sleep(300);
carol = await registerAgent('carol', 'reviewer');

const step = async (what, fn) => {
  try { const r = await fn(); vlog(`ok: ${what}`); return r; } catch (e) {
    errors.push(`${what}: ${e?.message ?? e}`);
    log(`FAILED ${what}: ${e?.message ?? e}`);
    return undefined;
  }
};
await step('mail traffic', mailTraffic);
await step('trajectory traffic', trajectoryTraffic);
const acpInfo = await step('acp stream', acpTraffic);
await sleep(500);
emit({ trafficDone: true, errors, agents: Object.fromEntries(Object.entries(agents).map(([n, a]) => [n, { id: a.id, sessionId: a.sessionId }])), acp: acpInfo ?? null, server: await step('server query', queryServer) ?? null });
log('traffic done');

// --- traffic ----------------------------------------------------------------------------------
async function mailTraffic() {
  const { conversation, initialTurn } = await alice.conn.createConversation({
    type: 'task', subject: 'Fix login bug', metadata: { ticket: 'BUG-17' },
    initialParticipants: [{ id: bob.id, role: 'assistant' }],
    initialTurn: { contentType: 'text', content: { text: 'Can you look at the login bug?' } },
  });
  const cid = conversation.id;
  await carol.conn.joinConversation({ conversationId: cid, role: 'reviewer', catchUp: { limit: 10 } });
  const reply = await say(bob, cid, 'On it. It fails for names with spaces around them.', { inReplyTo: initialTurn.id });
  const { thread } = await alice.conn.createThread({ conversationId: cid, rootTurnId: reply.turn.id, subject: 'repro steps' });
  await say(bob, cid, '1. Open /login  2. Enter " Alice "  3. Login is refused.', { threadId: thread.id });
  await bob.conn.sendWithMail({ agent: alice.id }, { kind: 'patch', file: 'src/login.ts', diff: '-  const name = user;\n+  const name = normalize(user);' }, cid);
  await say(carol, cid, 'Looks good to me.');
  await alice.conn.closeConversation(cid, 'fixed');

  const notes = await alice.conn.createConversation({
    type: 'multi-agent', subject: 'Release notes', metadata: { release: '1.4.0' },
    initialParticipants: [{ id: bob.id, role: 'contributor' }, { id: carol.id, role: 'contributor' }],
  });
  const nid = notes.conversation.id;
  await say(alice, nid, 'Drafting the notes for 1.4.0.');
  await say(bob, nid, 'Fixed: login refused names with surrounding spaces (BUG-17).');
  await say(carol, nid, 'Please also mention the new session cache warm-up.');
}

async function trajectoryTraffic() {
  const bigTranscript = [];
  for (let i = 0; bigTranscript.length < 120; i++) {
    bigTranscript.push({ role: 'user', text: `Step ${i + 1}: run the login tests again and show me the failures in detail.` });
    bigTranscript.push({ role: 'assistant', text: `Ran npm test (pass ${i + 1}). ${'The normalize() call trims and lower-cases the user name before the lookup. '.repeat(2)}` });
  }
  const cps = [
    [bob, { id: 'cp-bob-1', label: 'reproduced bug', sessionId: 'work-42', metadata: { tokens: 1200, files: ['src/login.ts'], commit: null } },
      { transcript: [{ role: 'user', text: 'Reproduce BUG-17' }, { role: 'assistant', text: 'Reproduced: " Alice " is refused.' }], prompts: ['Reproduce BUG-17'] }],
    [bob, { id: 'cp-bob-2', label: 'fix committed', sessionId: 'work-42', metadata: { tokens: 3400, files: ['src/login.ts', 'src/util/strings.ts'], commit: 'a1b2c3d' } },
      { prompts: ['Fix BUG-17', 'Commit the fix'], metadata: { note: 'transcript is streamed' } }, bigTranscript],
    [bob, { id: 'cp-bob-3', label: 'tests green', sessionId: 'work-42', metadata: { tokens: 900, files: ['test/login.test.ts'], commit: 'a1b2c3d', tests: { passed: 42, failed: 0 } } },
      { transcript: [{ role: 'user', text: 'Run the tests' }, { role: 'assistant', text: '42 passed, 0 failed.' }], prompts: ['Run the tests'] }],
    [carol, { id: 'cp-carol-1', label: 'review done', sessionId: 'review-7', metadata: { tokens: 800, files: ['src/login.ts'], commit: 'a1b2c3d', verdict: 'approved' } },
      { transcript: [{ role: 'user', text: 'Review a1b2c3d' }, { role: 'assistant', text: 'Approved: small, tested change.' }], prompts: ['Review a1b2c3d'] }],
  ];
  for (const [who, checkpoint, artifacts, streamed] of cps) {
    contentByCheckpoint.set(checkpoint.id, { artifacts, ...(streamed ? { stream: { artifact: 'transcript', bytes: Buffer.from(JSON.stringify(streamed)) } } : {}) });
    await who.conn.callExtension('trajectory/checkpoint', { checkpoint: { ...checkpoint, agentId: who.id } });
    await sleep(15); // distinct timestamps, so trajectory/list's order is stable
  }
}

async function acpTraffic() {
  let updates = 0;
  const adapter = new ACPAgentAdapter(bob.conn, {
    initialize: async () => ({ protocolVersion: ACP_PROTOCOL_VERSION, agentCapabilities: { loadSession: false } }),
    newSession: async () => ({ sessionId: 'acp-session-1' }),
    prompt: async (params, ctx) => {
      const sessionId = params.sessionId;
      const send = (update) => adapter.sendSessionUpdate(ctx.streamId, { sessionId, update });
      await send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Looking at src/login.ts…' } });
      await send({ sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Read src/login.ts', kind: 'read', status: 'pending', locations: [{ path: 'src/login.ts' }] });
      await send({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'completed' });
      await send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'The user name is not normalized; the fix is one line.' } });
      return { stopReason: 'end_turn' };
    },
    cancel: async () => {},
  }, { clientRequestTimeout: 1500 });
  const ide = new ClientConnection(sdkStream(await openSocket(`${URL_BASE}/?internal=1&name=ide`)), { name: 'ide' });
  await ide.connect();
  const stream = ide.createACPStream({
    targetAgent: bob.id, timeout: 1500,
    client: { requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }), sessionUpdate: async () => { updates++; } },
  });
  stream.on('error', (e) => log(`acp stream error: ${e?.message}`));
  const info = { streamId: stream.streamId, steps: {} };
  try {
    info.steps.initialize = await stream.initialize({ protocolVersion: ACP_PROTOCOL_VERSION, clientInfo: { name: 'IDE', version: '1.0' } });
    info.steps.newSession = await stream.newSession({ cwd: '/workspace', mcpServers: [] });
    info.steps.prompt = await stream.prompt({ sessionId: stream.sessionId, prompt: [{ type: 'text', text: 'Fix the login bug in src/login.ts' }] });
  } finally {
    await sleep(100);
    info.sessionUpdatesReceived = updates;
    await stream.close().catch(() => {});
  }
  return info;
}

// --- what the server itself answers, through a raw JSON-RPC client ----------------------------
async function queryServer() {
  const ws = await openSocket(`${URL_BASE}/?internal=1&name=query`);
  let nextId = 1;
  const pending = new Map();
  ws.on('message', (d) => {
    let m; try { m = JSON.parse(String(d)); } catch { return; }
    const p = m.id !== undefined && pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(`${m.error.code} ${m.error.message}`)); else p.resolve(m.result);
  });
  const rpc = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    const timer = setTimeout(() => { pending.delete(id); reject(new Error(`${method} timed out`)); }, 5000);
    pending.set(id, { resolve: (r) => { clearTimeout(timer); resolve(r); }, reject: (e) => { clearTimeout(timer); reject(e); } });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
  const allPages = async (method, params, key) => {
    const items = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const r = await rpc(method, { ...params, ...(cursor ? { cursor } : {}) });
      items.push(...(r[key] ?? []));
      if (!r.hasMore || !r.nextCursor) break;
      cursor = r.nextCursor;
    }
    return items;
  };
  try {
    await rpc('map/connect', { protocolVersion: 1, participantType: 'client', name: 'extensions-demo-query' });
    const conversations = await allPages('mail/list', { limit: 50 }, 'conversations');
    const details = {};
    for (const c of conversations) {
      details[c.id] = {
        get: await rpc('mail/get', { conversationId: c.id, include: { participants: true, threads: true, stats: true } }),
        turns: await rpc('mail/turns/list', { conversationId: c.id, limit: 1000 }),
        threads: await rpc('mail/thread/list', { conversationId: c.id }),
      };
    }
    const checkpoints = await allPages('trajectory/list', { limit: 50 }, 'checkpoints');
    const agentsList = await rpc('map/agents/list', {});
    const workspaceFiles = {};
    for (const a of agentsList.agents ?? []) workspaceFiles[a.id] = await rpc('workspace/list', { agentId: a.id });
    return {
      mailList: { conversations }, conversations: details, trajectoryList: { checkpoints }, agentsList,
      acpStreamIds: [...acpStreams].map(([streamId, n]) => ({ streamId, ...n })), workspaceFiles,
    };
  } finally {
    ws.close();
  }
}

// --- shutdown ---------------------------------------------------------------------------------
async function shutdown(reason) {
  if (shuttingDown) return;
  shuttingDown = true;
  let turns = 0;
  let threads = 0;
  const convs = server.conversations?.list?.() ?? [];
  try {
    for (const c of convs) {
      turns += server.turns.list({ conversationId: c.id, limit: 100000 }).length;
      threads += server.threads.list(c.id).length;
    }
  } catch { /* ignore */ }
  const acp = { clientToAgent: 0, agentToClient: 0 };
  for (const n of acpStreams.values()) { acp.clientToAgent += n.clientToAgent; acp.agentToClient += n.agentToClient; }
  emit({
    summary: true, reason, conversations: Array.isArray(convs) ? convs.length : null, turns, threads,
    checkpoints: trajectory.store.list().length, acpStreams: acpStreams.size, acpFrames: acp,
    acpBridged: counters.acpBridged, trajectoryChunksSent: counters.chunksSent, agents: server.agents.list().length,
    externalClients: externalClients.size, errors: errors.length, events: { total: eventCounts.total, byType: { ...eventCounts.byType } },
  });
  log(`${reason}: shutting down`);
  for (const ws of sockets) { try { ws.terminate(); } catch { /* ignore */ } }
  httpServer.close();
  await Promise.race([server.close({ force: true }).catch(() => {}), sleep(500)]);
  try { fs.rmSync(WS_ROOT, { recursive: true, force: true }); } catch { /* ignore */ }
  process.exit(0);
}
