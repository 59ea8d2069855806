#!/usr/bin/env node
// Two OFFICIAL MAP systems federated: A and B, each the SDK's MAPServer (@multi-agent-protocol/sdk
// 0.1.15) on 127.0.0.1, built from the SDK's own federation pieces (FederationGatewayImpl,
// FederatedAgentRegistry, FederatedScopeManager, FederatedMessageRouter, createFederationHandlers).
// For the console's federation view and its integration test (issue 43 item 3).
//
//   node federation.mjs [--every-ms N] [--churn-ms N] [--bridge-events] [--port-a N] [--port-b N]
//
// stdout: one line {"ready":true,"a":"ws://127.0.0.1:PA","b":"ws://127.0.0.1:PB",...} once A's
// clients can see B's agents; logs go to stderr. Runs until SIGTERM or SIGINT. Paths on each system:
// `/` a client, `/agent` an agent, `/gateway` the gateway role (the only one map/federation/* serves).
// --every-ms N: B's bob writes to A's alice every N ms (default 10000; 0: once). --churn-ms N: every
// N ms an agent of B registers or the last one leaves (A's lists follow; A emits nothing). --bridge-events:
// A also emits `message.delivered {federated:true}` for each message that crossed (NOT what the SDK
// does: it emits nothing; off by default).
//
// This is OUR GLUE, not the SDK's behaviour. The SDK lacks three things, supplied here:
// - MAPServer does not wire federation; the pieces go in as its agents, scopes, messages and
//   additionalHandlers.
// - FederationGatewayImpl.connectPeer() only records a peer ("a placeholder", server.js) and the SDK
//   ships no PeerTransport: an in-process one below hands each envelope (copied through JSON, on
//   the next tick) to the other side's gateway.handleIncomingMessage(), and connectPeer is wrapped
//   so that map/federation/connect from a gateway client attaches it.
// - MAPServer never calls messages.onDeliver(): a message goes to its agent's connection as
//   `map/message {message, agentId}`, as the demo system does.
// The SDK's federating decorators tell a peer only when something is registered, created or
// joined (no initial sync), so the peers are linked before any agent registers.

import http from 'node:http';
import WS, { WebSocketServer } from 'ws';

import { wsStream } from './lib/wsStream.mjs';

if (typeof globalThis.WebSocket === 'undefined') globalThis.WebSocket = WS; // the SDK's client side looks for it

const {
  MAPServer, EventBusImpl, AgentRegistryImpl, ScopeManagerImpl, MessageRouterImpl,
  FederationGatewayImpl, FederatedAgentRegistry, FederatedScopeManager, FederatedMessageRouter,
  createFederationHandlers,
} = await import('@multi-agent-protocol/sdk/server');

const argv = process.argv.slice(2);
const arg = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const EVERY_MS = Number(arg('--every-ms', '10000'));
const BRIDGE_EVENTS = argv.includes('--bridge-events');
const PORT_A = Number(arg('--port-a', '0'));
const PORT_B = Number(arg('--port-b', '0'));
const CHURN_MS = Number(arg('--churn-ms', '0'));
const log = (...a) => process.stderr.write(`[federation] ${a.join(' ')}\n`);

// ---------------------------------------------------------------------------------------------
// One federated system
// ---------------------------------------------------------------------------------------------
function buildSystem(systemId) {
  const eventBus = new EventBusImpl({ onSubscriberError: () => {} });
  const gateway = new FederationGatewayImpl({ systemId });
  const localAgents = new AgentRegistryImpl({ eventBus });
  const agents = new FederatedAgentRegistry({ local: localAgents, gateway });
  const localScopes = new ScopeManagerImpl({ eventBus });
  const scopes = new FederatedScopeManager({ local: localScopes, gateway });
  const localMessages = new MessageRouterImpl({ eventBus, agents, scopes });
  const messages = new FederatedMessageRouter({ local: localMessages, gateway, agents });
  const server = new MAPServer({
    name: `system-${systemId}`,
    version: '0.1.15',
    eventBus, agents, scopes, messages,
    additionalHandlers: createFederationHandlers({ gateway }),
  });
  const sys = { systemId, eventBus, gateway, agents, scopes, messages, server, routers: new Map(), url: null };

  // Delivery (MAPServer never calls messages.onDeliver itself). FederatedMessageRouter calls this
  // for local deliveries AND for inbound federated messages (from rewritten to "<sys>:agent:<x>").
  messages.onDeliver((agentId, message) => {
    const agent = agents.get(agentId);
    const router = agent?.sessionId && routerForSession(sys, agent.sessionId);
    if (router) router.notify('map/message', { message, agentId }).catch(() => {});
    if (BRIDGE_EVENTS && typeof message?.from === 'string' && /^[^:]+:agent:/.test(message.from)) {
      // Not stock: the SDK emits nothing for inbound federated messages (server.js
      // FederatedMessageRouter.handlePeerMessage). Opt-in so an observer can see the crossing.
      eventBus.emit({ type: 'message.delivered', data: { message, agentId, federated: true } });
    }
  });
  setInterval(() => localMessages.expireMessages?.(), 10_000).unref();
  return sys;
}

function routerForSession(sys, sessionId) {
  for (const r of sys.server.connections.values()) {
    try { if (r.session?.id === sessionId) return r; } catch { /* not started */ }
  }
  return undefined;
}

function listen(sys, port) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const httpServer = http.createServer((q, res) => { res.writeHead(426); res.end('WebSocket only\n'); });
  httpServer.on('upgrade', (request, socket, head) => {
    const p = new URL(request.url, 'http://x').pathname;
    const role = p === '/agent' ? 'agent' : p === '/gateway' ? 'gateway' : 'client';
    wss.handleUpgrade(request, socket, head, (ws) => {
      const stream = wsStream(ws, { decode: (text) => { try { return JSON.parse(text); } catch { return undefined; } }, terminateOnCancel: true });
      const router = sys.server.accept(stream, { role, transportType: 'websocket' });
      router.start().catch((e) => log(`${sys.systemId}: router start failed: ${e?.message}`));
    });
  });
  return new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen({ port, host: '127.0.0.1' }, () => {
      sys.url = `ws://127.0.0.1:${httpServer.address().port}`;
      sys.httpServer = httpServer;
      resolve(sys.url);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The link: an in-process PeerTransport (the SDK has none). JSON round-trip + setImmediate so the
// receiving side sees a copy, asynchronously, as it would over a network.
// ---------------------------------------------------------------------------------------------
function makeTransport(from, to) {
  let open = true;
  return {
    async send(envelope) {
      if (!open) throw new Error('link closed');
      const copy = JSON.parse(JSON.stringify(envelope));
      setImmediate(() => to.gateway.handleIncomingMessage(from.systemId, copy));
    },
    close() { open = false; log(`link ${from.systemId}=>${to.systemId} closed`); },
  };
}

// Wrap connectPeer so map/federation/connect (gateway role) to a known peer gets a real transport,
// and the peer is also (re)connected back, since peering is one-directional in the SDK.
function wireConnect(self, other) {
  const orig = self.gateway.connectPeer.bind(self.gateway);
  self.rawConnectPeer = orig;
  self.gateway.connectPeer = async (params) => {
    if (params.systemId === other.systemId && !params.transport) {
      params = { ...params, transport: makeTransport(self, other) };
      if (other.gateway.getPeer(self.systemId)?.status !== 'connected') {
        await other.rawConnectPeer({ systemId: self.systemId, endpoint: `${self.url}/gateway`,
          transport: makeTransport(other, self) });
      }
    }
    return orig(params);
  };
}

// ---------------------------------------------------------------------------------------------
// Tiny JSON-RPC agent client over ws (role "agent" via the /agent path)
// ---------------------------------------------------------------------------------------------
function rpcClient(url, label) {
  const ws = new WS(url, { perMessageDeflate: false });
  let id = 0; const pending = new Map();
  const c = {
    label, ws, messages: [],
    call(method, params = {}) {
      const myId = ++id;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: myId, method, params }));
      return new Promise((resolve, reject) => pending.set(myId, { resolve, reject }));
    },
  };
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString('utf8'));
    if (m.id != null && pending.has(m.id)) {
      const p = pending.get(m.id); pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { rpc: m.error })); else p.resolve(m.result);
    } else if (m.method === 'map/message') {
      c.messages.push(m.params);
      log(`${label} <- map/message from=${m.params?.message?.from} payload=${JSON.stringify(m.params?.message?.payload)}`);
    }
  });
  c.opened = new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
  return c;
}

async function startAgent(sys, name, role) {
  const c = rpcClient(`${sys.url}/agent`, `${sys.systemId}/${name}`);
  await c.opened;
  const conn = await c.call('map/connect', { protocolVersion: 1, participantType: 'agent', name });
  const { agent } = await c.call('map/agents/register', { name, role, metadata: { system: sys.systemId } });
  c.sessionId = conn.sessionId; c.agentId = agent.id;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------
const A = buildSystem('A');
const B = buildSystem('B');
await listen(A, PORT_A);
await listen(B, PORT_B);
wireConnect(A, B);
wireConnect(B, A);

// Peer FIRST: the decorators only broadcast at register/create/join time to peers that are
// connected then; there is no initial snapshot, so anything registered earlier never federates.
await A.gateway.connectPeer({ systemId: 'B', endpoint: `${B.url}/gateway` }); // also connects B->A

const aAgents = [await startAgent(A, 'alice', 'analyst'), await startAgent(A, 'arthur', 'planner')];
const bAgents = [await startAgent(B, 'bob', 'worker'), await startAgent(B, 'beth', 'worker'),
  await startAgent(B, 'bert', 'reviewer')];
const [bob, beth] = bAgents;
const { scope } = await bob.call('map/scopes/create', { name: 'b-team', metadata: { purpose: 'federation demo' } });
await bob.call('map/scopes/join', { scopeId: scope.id, agentId: bob.agentId });
await bob.call('map/scopes/join', { scopeId: scope.id, agentId: beth.agentId });
await bob.call('map/agents/update', { agentId: bob.agentId, state: 'busy' }).catch(() => {});

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
await wait(50); // let the setImmediate link drain

let seq = 0;
async function crossOnce() {
  const alice = aAgents[0];
  seq++;
  const r = await bob.call('map/send', { to: `A:agent:${alice.agentId}`, payload: { text: 'hello from B', seq } });
  log(`bob -> A:agent:${alice.agentId} messageId=${r?.messageId}`);
}
await crossOnce();
await wait(50);
if (EVERY_MS > 0) setInterval(() => crossOnce().catch((e) => log(`cross failed: ${e.message}`)), EVERY_MS).unref();

// Churn on B: A's registry follows through the link, and A emits no event about it.
if (CHURN_MS > 0) {
  let joined = 0;
  let temp = null;
  let busy = false; // one step at a time: a slow registration must not overlap the next
  setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      if (temp) {
        await temp.call('map/agents/unregister', { agentId: temp.agentId });
        temp.ws.terminate();
        temp = null;
      } else {
        temp = await startAgent(B, `temp-${++joined}`, 'worker');
      }
    } catch (e) { log(`churn: ${e.message}`); } finally { busy = false; }
  }, CHURN_MS).unref();
}

const ready = {
  ready: true, a: A.url, b: B.url,
  paths: { client: '/', agent: '/agent', gateway: '/gateway' },
  agentsA: aAgents.map((c) => ({ name: c.label, id: c.agentId, sessionId: c.sessionId })),
  agentsB: bAgents.map((c) => ({ name: c.label, id: c.agentId, sessionId: c.sessionId, onA: `B:agent:${c.agentId}` })),
  scopeB: { id: scope.id, onA: `B:scope:${scope.id}` },
  crossed: aAgents[0].messages.length > 0,
};
process.stdout.write(JSON.stringify(ready) + '\n');

const keepAlive = setInterval(() => {}, 1 << 30);
function shutdown(sig) {
  log(`${sig}: shutting down`);
  clearInterval(keepAlive);
  for (const c of [...aAgents, ...bAgents]) { try { c.ws.terminate(); } catch {} }
  A.httpServer?.close(); B.httpServer?.close();
  setTimeout(() => process.exit(0), 100).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
