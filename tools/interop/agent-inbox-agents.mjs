#!/usr/bin/env node
// agent-inbox (npm, pinned in package.json) as MAP agents on the official MAPServer
// (@multi-agent-protocol/sdk 0.1.15, mail enabled), hosted on 127.0.0.1 the way the demo system
// hosts it (`ws` package, lock-free stream adapter). No LLM is involved: agent-inbox is a message
// router, not a model.
//
//   node --experimental-websocket agent-inbox-agents.mjs --port P [--duration S]
//        [--wait-clients N] [--wait-max S] [--settle-ms MS] [--no-deliver] [--wire-log F] [--verbose]
//
// Two agent-inbox systems, "inbox-alpha" and "inbox-beta", made with agent-inbox's own
// createAgentInbox() (in-memory storage). Each opens the MAP connections agent-inbox itself makes:
//   - its MapClient: an SDK AgentConnection registered as name "agent-inbox", role "inbox",
//     which then calls the `mail/recent` extension (startup replay);
//   - a federation gateway per peer: another AgentConnection, name = own system id,
//     role "gateway", scope "federation".
// Traffic, all through agent-inbox's own code:
//   1. 15 messages routed with router.routeMessage() between local inbox agents
//      (alice@inbox-alpha, bob@inbox-beta, ...): cross-system ones go out through the federation
//      gateway as `map/send` with agent-inbox's own address shape {agentId, scope}.
//   2. 3 sends through MapClient.sendViaMap(): one to a scope made by this host ("interop"),
//      two addressed {agentId: <the other inbox's MAP agent id>}.
// The host wires MAPServer's delivery (map/message to the owning connection, message.delivered)
// unless --no-deliver, so what reaches agent-inbox's onMessage is stored in its inbox.
//
// stdout, one JSON object per line: {"ready":true,"url":...}, {"trafficDone":true,...}, and at
// exit (SIGTERM/SIGINT or --duration) {"summary":true,...}. Logs go to stderr.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { WebSocketServer } from 'ws';

import {
  ensureWebSocketGlobal, parseArgs, emit, log, setVerbose, consoleToStderr, sleep, waitFor,
  countEvents, publicAgent, runUntilDone, wireTapper, pkgVersion,
} from './lib/common.mjs';
import { wsStream } from '../demo-system/lib/wsStream.mjs';

const argv = process.argv.slice(2);
const deliver = !argv.includes('--no-deliver');
const OPTS = parseArgs(argv.filter((a) => a !== '--no-deliver'));
if (OPTS.help) {
  process.stderr.write('usage: node --experimental-websocket agent-inbox-agents.mjs --port P [--duration S] [--wait-clients N] [--wait-max S] [--settle-ms MS] [--no-deliver] [--verbose]\n');
  process.exit(0);
}
setVerbose(OPTS.verbose);
consoleToStderr();
const wsImpl = ensureWebSocketGlobal();

// agent-inbox writes per-agent inbox files under $HOME/.claude/agent-inbox: keep them in scratch.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-agent-inbox-'));
process.env.HOME = dataDir;

const { MAPServer } = await import('@multi-agent-protocol/sdk/server');
const { createAgentInbox } = await import('agent-inbox');

// --- the official server ---------------------------------------------------------------------
const server = new MAPServer({ name: 'interop official MAPServer', version: '0.1.15', mail: { enabled: true } });
const counts = countEvents(server);
const delivered = [];
if (deliver) {
  server.messages.onDeliver((agentId, message) => {
    const agent = server.agents.get(agentId);
    const router = agent?.sessionId ? routerForSession(agent.sessionId) : undefined;
    if (!router) return;
    delivered.push({ agentId, messageId: message.id });
    router.notify('map/message', { message, agentId }).catch(() => {});
  });
}
function routerForSession(sessionId) {
  for (const r of server.connections.values()) {
    try { if (r.session?.id === sessionId) return r; } catch { /* not started */ }
  }
  return undefined;
}

const tap = wireTapper(OPTS.wireLog);
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
let externalClients = 0;
const httpServer = http.createServer((req, res) => { res.writeHead(404); res.end(); });
httpServer.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => {
    const internal = /[?&]internal=1/.test(req.url ?? '');
    if (!internal) { externalClients++; ws.on('close', () => { externalClients--; }); }
    const role = (req.url ?? '').startsWith('/agent') ? 'agent' : 'client';
    const stream = wsStream(ws, { terminateOnCancel: true, decode: (t) => { try { return JSON.parse(t); } catch { return undefined; } } });
    const router = server.accept(tap(stream), { role, transportType: 'websocket' });
    router.start().catch((e) => log(`router: ${e?.message}`));
  });
});
await new Promise((resolve) => httpServer.listen({ port: OPTS.port, host: '127.0.0.1', exclusive: true }, resolve));
const port = httpServer.address().port;
const url = `ws://127.0.0.1:${port}/`;
// agent-inbox's own connections are marked so that --wait-clients counts only observers.
const inboxUrl = `ws://127.0.0.1:${port}/agent?internal=1`;

// A scope for scope-addressed sends (agent-inbox joins scopes by the name it is given; MAPServer
// scope ids are ULIDs, so this host makes the scope and tells agent-inbox its id).
const scope = server.scopes.create({ name: 'interop', metadata: { purpose: 'agent-inbox interop' } });

// --- two agent-inbox systems -----------------------------------------------------------------
const SYSTEMS = ['inbox-alpha', 'inbox-beta'];
const inboxes = {};
for (const sys of SYSTEMS) {
  const peer = SYSTEMS.find((s) => s !== sys);
  inboxes[sys] = await createAgentInbox({
    config: {
      socketPath: path.join(dataDir, `${sys}.sock`),
      scope: 'default',
      map: { enabled: true, server: inboxUrl, scope: scope.id, systemId: sys },
      federation: { systemId: sys, peers: [{ systemId: peer, url: inboxUrl }] },
    },
    enableFederation: true,
  });
}
const mapAgentOf = (sys) => inboxes[sys].mapClient.getConnection()?.agentId ?? null;

const did = { routed: [], sendViaMap: [], errors: [] };
const stop = runUntilDone(OPTS, async (why) => {
  emit({ summary: true, program: 'agent-inbox', reason: why, ...report() });
  for (const sys of SYSTEMS) { try { await inboxes[sys].stop(); } catch (e) { log(`stop ${sys}: ${e?.message}`); } }
  try { await server.close?.({ force: true }); } catch { /* ignore */ }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

emit({
  ready: true, program: 'agent-inbox', version: pkgVersion('agent-inbox'), sdk: pkgVersion('@multi-agent-protocol/sdk'),
  url, port, websocket: wsImpl, deliver, scope: { id: scope.id, name: scope.name },
  inboxAgents: Object.fromEntries(SYSTEMS.map((s) => [s, mapAgentOf(s)])),
});

if (OPTS.waitClients > 0) {
  const ok = await waitFor(() => externalClients >= OPTS.waitClients, OPTS.waitMax * 1000, 50);
  if (!ok) log(`only ${externalClients} of ${OPTS.waitClients} clients came`);
}
await sleep(OPTS.settleMs);

try {
  await driveTraffic();
} catch (e) {
  did.errors.push(String(e?.message ?? e));
  log(`traffic failed: ${e?.stack ?? e}`);
}
await sleep(500);
emit({ trafficDone: true, program: 'agent-inbox', ...report() });

async function driveTraffic() {
  const people = { 'inbox-alpha': ['alice', 'carol'], 'inbox-beta': ['bob', 'dave'] };
  for (let n = 0; n < 15; n++) {
    const fromSys = SYSTEMS[n % 2];
    const toSys = n % 3 === 2 ? fromSys : SYSTEMS[(n + 1) % 2]; // every third one stays local
    const from = people[fromSys][Math.floor(n / 2) % 2];
    const toName = people[toSys][Math.floor(n / 3) % 2];
    const to = toSys === fromSys ? toName : `${toName}@${toSys}`;
    try {
      const r = await inboxes[fromSys].router.routeMessage({
        from, to, payload: `interop message ${n + 1} of 15`, subject: `note ${n + 1}`, threadTag: 'interop',
      });
      did.routed.push({ n: n + 1, system: fromSys, from, to, result: brief(r) });
    } catch (e) {
      did.routed.push({ n: n + 1, system: fromSys, from, to, error: String(e?.message ?? e) });
    }
    await sleep(20);
  }
  const alpha = inboxes['inbox-alpha'].mapClient;
  const beta = inboxes['inbox-beta'].mapClient;
  did.sendViaMap.push({ to: { scope: scope.id }, ok: await alpha.sendViaMap({ scope: scope.id }, { text: 'hello interop scope' }) });
  did.sendViaMap.push({ to: { agentId: mapAgentOf('inbox-beta') }, ok: await alpha.sendViaMap({ agentId: mapAgentOf('inbox-beta') }, { text: 'alpha to beta' }) });
  did.sendViaMap.push({ to: { agentId: mapAgentOf('inbox-alpha') }, ok: await beta.sendViaMap({ agentId: mapAgentOf('inbox-alpha') }, { text: 'beta to alpha' }) });
}

function brief(r) {
  if (!r || typeof r !== 'object') return r;
  return { id: r.id ?? r.message?.id, recipients: (r.recipients ?? r.message?.recipients)?.map((x) => x.agent_id) };
}

function report() {
  const agents = server.agents.list().map(publicAgent);
  const inboxState = {};
  for (const sys of SYSTEMS) {
    const st = inboxes[sys].storage;
    let stored = null;
    try { stored = typeof st.countMessages === 'function' ? st.countMessages() : (st.messages?.size ?? null); } catch { /* ignore */ }
    inboxState[sys] = { mapAgentId: mapAgentOf(sys), storedMessages: stored, federationPeers: inboxes[sys].federation?.listPeers?.().map((p) => p.peerId ?? p) ?? null };
  }
  return {
    did,
    inboxes: inboxState,
    server: {
      agents, agentCount: agents.length,
      scopes: server.scopes.list().map((s) => ({ id: s.id, name: s.name, members: server.scopes.getMembers(s.id) })),
      messagesSent: counts.byType['message.sent'] ?? 0,
      delivered: delivered.length,
      events: { total: counts.total, byType: { ...counts.byType } },
    },
  };
}


void stop;
