#!/usr/bin/env node
// macro-agent (npm, pinned in package.json) hosting its own MAP server on 127.0.0.1, with no LLM:
// acp-factory's AgentFactory.spawn is stubbed the way macro-agent's own e2e tests stub it, so
// "agents" are records in macro-agent's store with no Claude Code process behind them.
//
//   node --experimental-websocket macro-agent-server.mjs --port P [--duration S]
//        [--wait-clients N] [--wait-max S] [--settle-ms MS] [--data-dir D] [--wire-log F] [--verbose]
//
// What runs is macro-agent's own code: bootV2() with `mapServer` (its MAP server, MAPServer from
// @multi-agent-protocol/sdk behind its own `ws` host at path /map) and `map` (its sidecar, an SDK
// AgentConnection) pointed at that same server. Traffic, in order:
//   1. agentManager.spawn(): 1 coordinator + 3 workers, each with a task. macro-agent registers
//      each in its MAP server's registry; the sidecar registers each again (map/agents/register)
//      and sends `task.created` to scope swarm:macro-agent.
//   2. Three peer agents (SDK AgentConnection, as cc-swarm hooks would connect) send 15 direct
//      messages, 3 of them to macro-agent's agents, plus one scope send.
//   3. The sidecar's emitEvent() sends one custom event to the scope.
//   4. Tasks end: worker 1 terminated "completed" (task.status + task.completed), worker 2
//      "failed" (task.status failed); worker 3 stays open. Terminating unregisters the agent.
//
// stdout, one JSON object per line: {"ready":true,"url":...}, then {"trafficDone":true,...},
// then at exit (SIGTERM/SIGINT or --duration) {"summary":true,...}. Logs go to stderr.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';

import {
  ensureWebSocketGlobal, parseArgs, emit, log, debug, setVerbose, consoleToStderr, sleep, waitFor,
  countEvents, publicAgent, runUntilDone, wireTapper, pkgVersion,
} from './lib/common.mjs';

const OPTS = parseArgs(process.argv.slice(2));
if (OPTS.help) {
  process.stderr.write('usage: node --experimental-websocket macro-agent-server.mjs --port P [--duration S] [--wait-clients N] [--wait-max S] [--settle-ms MS] [--data-dir D] [--verbose]\n');
  process.exit(0);
}
setVerbose(OPTS.verbose);
consoleToStderr();
const wsImpl = ensureWebSocketGlobal();

// All of macro-agent's files (agents.db, inbox.db, sockets) and anything it writes under $HOME
// (agent-inbox's per-agent inbox files) go to a scratch directory.
const ownDataDir = !OPTS.dataDir;
const dataDir = OPTS.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'interop-macro-agent-'));
fs.mkdirSync(dataDir, { recursive: true });
process.env.HOME = dataDir;

// --- the stub agent factory (no LLM, no Claude Code process) --------------------------------
const { AgentFactory } = await import('acp-factory');
let stubSeq = 0;
const stubSpawns = [];
AgentFactory.spawn = async (agentType) => {
  stubSpawns.push(agentType);
  const emptyPrompt = () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true, value: undefined }) }) });
  return {
    createSession: async () => ({
      id: `stub-session-${++stubSeq}`,
      prompt: emptyPrompt,
      cancel: async () => {},
      forkWithFlush: async () => ({ id: `stub-fork-${++stubSeq}` }),
    }),
    loadSession: async () => ({ id: `stub-loaded-${++stubSeq}`, prompt: emptyPrompt }),
    close: async () => {},
    isRunning: () => true,
  };
};

// --- catch macro-agent's MAPServer instance (it is private to createMAPServerInstance) --------
const { MAPServer } = await import('@multi-agent-protocol/sdk/server');
let mapServer = null;
let counts = null;
const tap = wireTapper(OPTS.wireLog);
const origAccept = MAPServer.prototype.accept;
MAPServer.prototype.accept = function patchedAccept(stream, options) {
  if (!mapServer) { mapServer = this; counts = countEvents(this); }
  return origAccept.call(this, tap(stream), options);
};

const { bootV2 } = await import('macro-agent/dist/boot-v2.js');
const { AgentConnection } = await import('@multi-agent-protocol/sdk');

const SCOPE = 'swarm:macro-agent';
const system = await bootV2({
  baseDir: dataDir,
  cwd: dataDir,
  instanceId: 'interop',
  defaultPermissionMode: 'auto-approve',
  inbox: { socketPath: path.join(dataDir, 'inbox.sock') },
  mapServer: { enabled: true, port: OPTS.port, host: '127.0.0.1' },
  // The sidecar is started after the MAP server, so its URL is only known for a fixed port.
  ...(OPTS.port > 0 ? {
    map: {
      enabled: true,
      server: `ws://127.0.0.1:${OPTS.port}/map`,
      scope: SCOPE,
      agentName: 'macro-agent-sidecar',
      trajectorySyncLevel: 'off',
      reconnection: { enabled: false },
      reconnectIntervalMs: 3_600_000,
    },
  } : {}),
});
if (!system.mapServerInstance) { log('macro-agent did not start its MAP server'); process.exit(2); }
const url = system.mapServerInstance.getUrl();
const port = Number(new URL(url).port);
const internalConnections = system.mapServerInstance.getConnectionCount(); // the sidecar's
const sidecarConnected = Boolean(system.mapSidecar?.connected);

const did = {
  spawned: [],          // macro-agent agents: { localId, mapId, name, role, task, taskId }
  peers: [],            // SDK AgentConnections: { agentId, name, sessionId }
  directMessages: 0,
  scopeMessages: 0,
  sidecarEvents: 0,
  terminated: [],       // { localId, reason }
  errors: [],
};

const stop = runUntilDone(OPTS, async (why) => {
  emit({ summary: true, program: 'macro-agent', reason: why, ...(await report()) });
  for (const p of peerConns) { try { await p.disconnect(); } catch { /* ignore */ } }
  try { await system.shutdown(); } catch (e) { log(`shutdown: ${e?.message}`); }
  if (ownDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

emit({
  ready: true, program: 'macro-agent', version: pkgVersion('macro-agent'), sdk: pkgVersion('@multi-agent-protocol/sdk'),
  url, port, websocket: wsImpl, sidecarConnected, dataDir,
});

// --- wait for the observers the test asked for ---------------------------------------------
if (OPTS.waitClients > 0) {
  const ok = await waitFor(() => system.mapServerInstance.getConnectionCount() - internalConnections >= OPTS.waitClients, OPTS.waitMax * 1000, 50);
  if (!ok) log(`only ${system.mapServerInstance.getConnectionCount() - internalConnections} of ${OPTS.waitClients} clients came`);
}
await sleep(OPTS.settleMs);

const peerConns = [];
try {
  await driveTraffic();
} catch (e) {
  did.errors.push(String(e?.message ?? e));
  log(`traffic failed: ${e?.stack ?? e}`);
}
emit({ trafficDone: true, program: 'macro-agent', ...(await report()) });
if (OPTS.duration === 0 && process.stdin.isTTY === false) { /* keep running until killed */ }

async function driveTraffic() {
  const am = system.agentManager;
  // 1. macro-agent agents, each with a task
  const coord = await am.spawn({ task: 'Coordinate the interop run' });
  did.spawned.push(describeSpawn(coord, 'Coordinate the interop run'));
  const titles = ['Parse the input files', 'Write the report', 'Publish the results'];
  const workers = [];
  for (const title of titles) {
    const w = await am.spawn({ task: title, parent: coord.id, role: 'worker' });
    workers.push(w);
    did.spawned.push(describeSpawn(w, title));
  }
  // The MAP ids appear asynchronously (lifecycle listeners).
  await waitFor(() => did.spawned.every((s) => system.mapServerInstance.getLocalMapId(s.localId)), 3000);
  for (const s of did.spawned) s.mapId = system.mapServerInstance.getLocalMapId(s.localId) ?? null;
  await sleep(300);

  // 2. peer agents over the SDK, 15 direct messages + 1 scope message
  for (let i = 1; i <= 3; i++) {
    const conn = await AgentConnection.connect(url, {
      name: `interop-peer-${i}`,
      role: 'peer',
      scopes: [SCOPE],
      capabilities: { messaging: { canSend: true, canReceive: true } },
      reconnection: { enabled: false },
    });
    peerConns.push(conn);
    did.peers.push({ agentId: conn.agentId, name: `interop-peer-${i}`, sessionId: conn.sessionId ?? null });
  }
  const targets = [
    ...peerConns.map((c) => c.agentId),
    ...did.spawned.slice(1).map((s) => s.mapId).filter(Boolean),
  ];
  for (let n = 0; n < 15; n++) {
    const from = peerConns[n % 3];
    let to = targets[(n + 1) % targets.length];
    if (to === from.agentId) to = targets[(n + 2) % targets.length];
    await from.send({ agent: to }, { kind: 'interop.chat', seq: n + 1, text: `message ${n + 1} of 15` });
    did.directMessages++;
    await sleep(20);
  }
  await peerConns[0].send({ scope: SCOPE }, { kind: 'interop.broadcast', text: 'hello scope' });
  did.scopeMessages++;

  // 3. a custom event through macro-agent's sidecar (a scope send made by macro-agent itself)
  if (system.mapSidecar?.emitEvent && system.mapSidecar.connected) {
    await system.mapSidecar.emitEvent({ type: 'interop.checkpoint', note: 'traffic half way' });
    did.sidecarEvents++;
  }
  await sleep(200);

  // 4. tasks end
  await am.terminate(workers[0].id, 'completed');
  did.terminated.push({ localId: workers[0].id, reason: 'completed' });
  await am.terminate(workers[1].id, 'failed');
  did.terminated.push({ localId: workers[1].id, reason: 'failed' });
  await sleep(500);
}

function describeSpawn(s, task) {
  return { localId: s.id, mapId: null, name: s.agent?.name ?? s.name ?? null, role: s.agent?.role ?? null, task, taskId: s.agent?.task_id ?? null };
}

async function report() {
  const agents = mapServer ? mapServer.agents.list().map(publicAgent) : [];
  return {
    did,
    stubSpawns: stubSpawns.length,
    server: {
      agents,
      agentCount: agents.length,
      scopes: mapServer ? mapServer.scopes.list().map((s) => ({ id: s.id, name: s.name, members: safeMembers(s.id) })) : [],
      messagesSent: counts?.byType['message.sent'] ?? 0,
      events: counts ? { total: counts.total, byType: { ...counts.byType } } : null,
      health: await health(),
      macroAgentAgents: system.agentManager.list().map((a) => ({ id: a.id, name: a.name, role: a.role, state: a.state })),
    },
  };
}

function safeMembers(scopeId) {
  try { return mapServer.scopes.getMembers(scopeId); } catch { return null; }
}

function health() {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => { try { resolve(JSON.parse(body)); } catch { resolve(body); } });
    });
    req.on('error', (e) => resolve({ error: e.message }));
  });
}


void stop;
void debug;
