// The simulated agents' parts: the client-side stream of their connections, the hosts that carry
// one AgentConnection for several agents, a timer heap, and the vocabularies they use.

import { once } from 'node:events';
import WS from 'ws';

import { rateLimitedLog } from './log.mjs';
import { host } from './host.mjs';
import { wsStream } from './wsStream.mjs';

// Client-side stream for the simulated agents' AgentConnections. It picks off `map/message`
// notifications because AgentConnection.onMessage() drops their `agentId` (needed when several
// agents share one connection).
export function clientStream(ws, onDelivered) {
  return wsStream(ws, {
    decode(text) {
      let msg;
      try { msg = JSON.parse(text); } catch { return undefined; }
      if (msg && msg.method === 'map/message' && msg.id === undefined && msg.params) {
        try { onDelivered(msg.params); } catch (err) { rateLimitedLog('deliver', `delivery handler error: ${err?.message}`); }
        return undefined;
      }
      return msg;
    },
  });
}

export class MinHeap {
  constructor() { this.a = []; this.seq = 0; }
  get size() { return this.a.length; }
  peek() { return this.a[0]; }
  less(x, y) { return x.due < y.due || (x.due === y.due && x.seq < y.seq); }
  push(item) {
    item.seq = this.seq++;
    const a = this.a;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
  clear() { this.a = []; }
}

export const TASK_TYPES = {
  coordinator: ['planning', 'triage'],
  monitor: ['health_check'],
  specialist: ['code_review', 'security_audit', 'data_analysis'],
  worker: ['code_review', 'refactoring', 'test_generation', 'documentation', 'data_analysis'],
  subagent: ['code_search', 'unit_test', 'lint', 'summarize', 'translate', 'web_lookup'],
};
export const CAPABILITIES = {
  coordinator: ['plan:decompose', 'task:assign'],
  monitor: ['health:watch'],
  specialist: ['code:review', 'security:audit', 'data:analyze'],
  worker: ['code:review', 'code:refactor', 'test:generate', 'doc:write'],
  subagent: ['code:search', 'test:unit', 'lint:run', 'text:summarize'],
};
export const SPECIALIST_NAMES = ['reviewer', 'analyst', 'auditor', 'planner', 'researcher', 'translator', 'tester', 'archivist'];

export class SimAgent {
  constructor(sim, def) {
    Object.assign(this, def); // name, role, kind, host, parent (SimAgent|null)
    this.sim = sim;
    this.id = null;
    this.control = 'running';      // running | suspended | stopped | gone
    this.behaviour = 'normal';     // normal | failed | silent | scripted (an incident's actor: no workflows)
    this.tasks = new Set();        // task ids this agent is working on
    this.ownPending = [];          // state changes requested by this agent, not yet seen on the bus
    this.pendingInjections = [];
    this.children = [];
    this.squad = null;             // scope record
    this.nextHeartbeatAt = 0;
    this.lastHeartbeatAt = 0;
    this.heartbeatReported = false;
    this.tokensUsed = sim.rng.int(1000, 20000);
    this.tokenBudget = 500000;
    this.errorCount = 0;
    this.completed = 0;
    this.failedTasks = 0;
    this.received = 0;
    this.registeredAt = Date.now();
  }
  get canAct() { return this.control === 'running' && this.behaviour === 'normal' && this.id !== null; }
  get capabilities() { return CAPABILITIES[this.kind] ?? []; }
}

export class AgentHost {
  constructor(sim, label) { this.sim = sim; this.label = label; this.conn = null; this.ws = null; this.sessionId = null; }

  async open(primary) {
    const ws = new WS(`${this.sim.baseUrl}/agent`, { perMessageDeflate: false });
    this.ws = ws;
    await Promise.race([
      once(ws, 'open'),
      once(ws, 'error').then(([err]) => { throw err; }),
    ]);
    const stream = clientStream(ws, (params) => this.sim.onDelivered(params));
    this.conn = new host.AgentConnection(stream, { name: primary.name, role: primary.role, capabilities: primary.capabilities });
    this.conn.onNotification('map/inject', (params) => this.sim.onInjectNotification(params));
    const auth = host.opts.auth ? { auth: { method: host.opts.auth, credential: host.opts.credential } } : undefined;
    const result = await this.track(this.conn.connect(auth));
    this.sessionId = result.connection.sessionId;
    this.sim.ownSessions.add(this.sessionId);
    return result.agent;
  }

  track(promise) {
    this.sim.inflight++;
    return promise.finally(() => { this.sim.inflight--; });
  }

  request(method, params) { return this.track(this.conn.callExtension(method, params)); }

  close() { try { this.ws?.terminate(); } catch { /* ignore */ } }
}
