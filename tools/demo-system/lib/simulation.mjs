// The simulation: a coordinator, workers and their sub-agents, specialists and monitors on the
// SDK's AgentConnection, with heartbeats, tasks, errors and usage reports in the seed
// conventions. demo-system.mjs hands over what it uses of the process (bindHost in host.mjs)
// before it makes the Simulation.

import { log, vlog, rateLimitedLog, PROCESS_T0 } from './log.mjs';
import { host } from './host.mjs';
import { makeRng } from './rng.mjs';
import { MinHeap, TASK_TYPES, SPECIALIST_NAMES, SimAgent, AgentHost } from './agents.mjs';
import { Workflows } from './workflows.mjs';
import { Incidents } from './incidents.mjs';

export class Simulation {
  constructor(opts) {
    this.opts = opts;
    this.rng = makeRng(opts.seed);
    this.baseUrl = null;
    this.hosts = [];
    this.agents = [];
    this.byId = new Map();
    this.ownSessions = new Set();
    this.heap = new MinHeap();
    this.inflight = 0;
    this.phase = 'starting';       // starting | running | quiesced | ended | failed
    this.activityEnabled = false;
    this.budget = 0;
    this.lastTick = Date.now();
    this.activeWorkflows = 0;
    this.taskSeq = 0;
    this.msgCount = 0;
    this.heartbeatCount = 0;
    this.startupMs = null;
    this.activityStartedAt = null;
    this.scopes = {};
    this.incidents = [];
    this.tickTimer = null;
    this.durationTimer = null;
    this.maxActive = Math.max(6, Math.ceil(opts.rate * 2));
    this.quiesceRequested = false;
  }

  // ----- topology ----------------------------------------------------------------------------
  plan() {
    const N = this.opts.agents;
    const monitor = N >= 2 ? 1 : 0;
    const specialists = N >= 4 ? Math.min(8, Math.max(1, Math.floor(N / 10))) : 0;
    const rest = N - 1 - monitor - specialists;
    const workers = rest <= 0 ? 0 : Math.min(rest, Math.ceil(Math.sqrt(2 * rest)));
    const subs = Math.max(0, rest - workers);
    return { total: N, monitor, specialists, workers, subs };
  }

  async start(baseUrl) {
    this.baseUrl = baseUrl;
    const t0 = Date.now();
    const plan = this.plan();
    log(`starting ${plan.total} agents: 1 coordinator, ${plan.monitor} monitor, ${plan.specialists} specialists, ${plan.workers} workers, ${plan.subs} sub-agents`);
    host.server.eventBus.on(['agent.state.changed', 'agent.unregistered'], (ev) => this.onBusEvent(ev));

    // Coordinator: its connection also hosts the workers and sub-agents it (and they) spawn.
    const coordHost = new AgentHost(this, 'coordinator');
    this.hosts.push(coordHost);
    const coordinator = this.addAgent({ name: 'coordinator', role: 'coordinator', kind: 'coordinator', host: coordHost, parent: null });
    coordinator.id = (await coordHost.open(coordinator)).id;
    this.indexAgent(coordinator);
    this.coordinator = coordinator;

    // Scopes
    const mkScope = async (name, metadata, parent) => {
      const r = await coordHost.request('map/scopes/create', { name, metadata, ...(parent ? { parentId: parent.id } : {}) });
      return { id: r.scope.id, name, parent };
    };
    this.scopes.project = await mkScope('project', { purpose: 'demo', description: 'everything the coordinator runs' });
    this.scopes.ops = await mkScope('ops', { purpose: 'operations' });
    const squadCount = plan.workers === 0 ? 0 : Math.max(2, Math.ceil(plan.workers / 6));
    this.scopes.squads = [];
    for (let i = 0; i < squadCount; i++) {
      this.scopes.squads.push(await mkScope(`squad-${String.fromCharCode(97 + (i % 26))}${i >= 26 ? Math.floor(i / 26) : ''}`, { team: i + 1 }, this.scopes.project));
    }

    // Monitor and specialists: one connection each.
    const standalone = [];
    if (plan.monitor) standalone.push({ name: 'monitor', role: 'monitor', kind: 'monitor' });
    for (let i = 0; i < plan.specialists; i++) {
      standalone.push({ name: `${SPECIALIST_NAMES[i % SPECIALIST_NAMES.length]}-${i + 1}`, role: 'specialist', kind: 'specialist' });
    }
    await Promise.all(standalone.map(async (def) => {
      const host = new AgentHost(this, def.name);
      this.hosts.push(host);
      const a = this.addAgent({ ...def, host, parent: null });
      a.id = (await host.open(a)).id;
      this.indexAgent(a);
    }));
    this.monitor = this.agents.find((a) => a.kind === 'monitor') ?? null;

    // Workers, spawned by the coordinator (server sets metadata.parentId).
    const workers = [];
    for (let i = 0; i < plan.workers; i++) {
      const squad = this.scopes.squads[i % this.scopes.squads.length];
      const w = this.addAgent({ name: `worker-${i + 1}`, role: 'worker', kind: 'worker', host: coordHost, parent: coordinator });
      w.squad = squad;
      workers.push(w);
    }
    await this.pool(workers, 32, async (w) => {
      const r = await coordHost.request('map/agents/spawn', {
        parent: coordinator.id, name: w.name, role: w.role,
        metadata: { squad: w.squad.name, capabilities: w.capabilities, model: this.rng.pick(['large', 'medium']) },
      });
      w.id = r.agent.id;
      this.indexAgent(w);
      coordinator.children.push(w);
    });

    // Sub-agents, spawned by their worker (same session: spawn requires a parent owned by the caller).
    const subs = [];
    for (let j = 0; j < plan.subs; j++) {
      const w = workers[j % workers.length];
      const n = Math.floor(j / workers.length) + 1;
      const s = this.addAgent({ name: `${w.name}.sub-${n}`, role: 'subagent', kind: 'subagent', host: coordHost, parent: w });
      s.squad = w.squad;
      subs.push(s);
    }
    await this.pool(subs, 32, async (s) => {
      const r = await coordHost.request('map/agents/spawn', {
        parent: s.parent.id, name: s.name, role: s.role,
        metadata: { task_type: this.rng.pick(TASK_TYPES.subagent), capabilities: s.capabilities },
      });
      s.id = r.agent.id;
      this.indexAgent(s);
      s.parent.children.push(s);
    });

    // Scope membership
    const joins = [];
    const join = (a, scope) => joins.push([a, scope]);
    join(coordinator, this.scopes.project);
    join(coordinator, this.scopes.ops);
    for (const a of this.agents) {
      if (a.kind === 'monitor' || a.kind === 'specialist') join(a, this.scopes.ops);
      if (a.kind === 'specialist') join(a, this.scopes.project);
      if (a.kind === 'worker') { join(a, this.scopes.project); join(a, a.squad); }
      if (a.kind === 'subagent') join(a, a.squad);
    }
    await this.pool(joins, 64, ([a, scope]) => this.joinScope(a, scope));

    // Incident cast
    const sub2 = subs.find((s) => s.parent === workers[1]) ?? subs[0];
    this.failing = sub2 ?? workers[workers.length - 1] ?? null;
    this.silent = this.agents.find((a) => a.kind === 'specialist' && a.name.endsWith('-2'))
      ?? this.agents.find((a) => a.kind === 'specialist')
      ?? workers.find((w) => w !== this.failing && w !== this.failing?.parent) ?? null;
    this.leaver = workers.find((w) => w !== this.failing?.parent) ?? null;
    this.unregisterer = [...subs].reverse().find((s) => s !== this.failing) ?? null;

    this.startupMs = Date.now() - t0;
    log(`ready: ${this.byId.size} agents registered on ${this.hosts.length} connections in ${this.startupMs} ms` +
      ` (failing=${this.failing?.name ?? '-'} silent=${this.silent?.name ?? '-'})`);
    if (this.quiesceRequested) {
      this.phase = 'quiesced';
      log('quiesce was requested during startup: activity not started (POST /control/activity starts it)');
    } else {
      this.startActivity();
    }
  }

  addAgent(def) {
    const a = new SimAgent(this, def);
    this.agents.push(a);
    return a;
  }

  indexAgent(a) { this.byId.set(a.id, a); }

  async pool(items, width, fn) {
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++];
        await fn(item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  }

  async joinScope(a, scope) {
    await a.host.request('map/scopes/join', { scopeId: scope.id, agentId: a.id });
  }

  // ----- activity control --------------------------------------------------------------------
  startActivity() {
    const now = Date.now();
    const initial = this.activityStartedAt === null;
    this.activityEnabled = true;
    this.phase = 'running';
    this.budget = 0;
    this.lastTick = now;
    // Spread heartbeats again so that a pause does not end in a burst, and forget stale timings.
    for (const a of this.agents) {
      a.nextHeartbeatAt = now + (this.opts.heartbeatMs > 0 ? this.rng.real(0, this.opts.heartbeatMs) : 0);
      a.lastHeartbeatAt = now;
    }
    if (initial) {
      this.activityStartedAt = now;
      this.scheduleIncidents(now);
      if (this.opts.duration > 0) {
        this.durationTimer = setTimeout(() => {
          this.activityEnabled = false;
          this.phase = 'ended';
          this.heap.clear();
          this.activeWorkflows = 0;
          for (const a of this.agents) a.tasks.clear(); // abandoned with the workflows
          log(`duration of ${this.opts.duration}s over: simulated activity stopped, server keeps serving`);
        }, this.opts.duration * 1000);
      }
    }
    if (!this.tickTimer) this.tickTimer = setInterval(() => this.tick(), 50);
  }

  activity() {
    if (this.phase === 'starting') return { activity: 'starting' };
    this.quiesceRequested = false;
    if (!this.activityEnabled) {
      this.startActivity();
      log('activity restarted');
    }
    return { activity: 'running' };
  }

  async quiesce() {
    const t0 = Date.now();
    this.activityEnabled = false;
    if (this.phase === 'starting') this.quiesceRequested = true;
    if (this.phase === 'running') this.phase = 'quiesced';
    // wait for the agents to be up (if asked during startup) and for every request the
    // simulation has in flight to be answered
    while ((this.phase === 'starting' || this.inflight > 0) && Date.now() - t0 < 60000) {
      await new Promise((r) => setTimeout(r, 5));
    }
    // let the last frames leave the process
    await new Promise((r) => setTimeout(r, 50));
    log(`quiesced in ${Date.now() - t0} ms`);
    return {
      quiesced: this.inflight === 0, phase: this.phase, inFlight: this.inflight,
      settledMs: Date.now() - t0, eventsEmitted: host.stats.eventsEmitted, lastEventId: host.stats.lastEventId,
    };
  }

  status() {
    const plan = this.plan();
    return {
      ready: this.startupMs !== null,
      phase: this.phase,
      mode: this.opts.mode,
      url: this.baseUrl,
      seed: this.opts.seed,
      rate: this.opts.rate,
      heartbeatMs: this.opts.heartbeatMs,
      durationS: this.opts.duration,
      auth: this.opts.auth ?? 'none',
      agentsPlanned: plan.total,
      agentsRegistered: this.byId.size,
      connections: host.server.connections.size,
      startupMs: this.startupMs,
      simulatedMessages: this.msgCount,
      heartbeats: this.heartbeatCount,
      inFlight: this.inflight,
      tasks: host.extensionState.tasks ? host.extensionState.tasks.size : null,
      cast: {
        coordinator: this.coordinator?.id ?? null,
        monitor: this.monitor?.id ?? null,
        failing: this.failing?.id ?? null,
        silent: this.silent?.id ?? null,
        leaver: this.leaver?.id ?? null,
        unregisterer: this.unregisterer?.id ?? null,
        incidents: this.incidentCast ?? null,
        storm: this.stormCast ?? null,
      },
      rssMB: Math.round(process.memoryUsage().rss / 1048576),
      uptimeMs: Date.now() - PROCESS_T0,
    };
  }

  // ----- obeying the registry ---------------------------------------------------------------
  onBusEvent(ev) {
    if (ev.type === 'agent.unregistered') {
      const a = this.byId.get(ev.data?.agentId);
      if (a && a.control !== 'gone') { a.control = 'gone'; log(`${a.name} unregistered`); }
      return;
    }
    const reg = ev.data?.agent;
    const a = reg && this.byId.get(reg.id);
    if (!a) return;
    const state = reg.state;
    const own = a.ownPending.find((t) => !t.consumed && t.state === state);
    if (own) {
      own.consumed = true;
      // our own busy/idle landed after an operator suspended us: put the suspension back
      if (a.control === 'suspended' && (state === 'idle' || state === 'busy')) {
        log(`${a.name}: own '${state}' raced a suspension, re-suspending`);
        setImmediate(() => this.setState(a, 'suspended'));
      }
      return;
    }
    if (state === 'stopped') {
      if (a.control !== 'stopped') { a.control = 'stopped'; log(`${a.name} stopped by operator: no more activity`); }
    } else if (state === 'suspended') {
      if (a.control === 'running') { a.control = 'suspended'; log(`${a.name} suspended by operator`); }
    } else if (a.control === 'suspended') {
      a.control = 'running';
      log(`${a.name} resumed by operator (${state})`);
      this.onResumed(a);
    }
  }

  onResumed(a) {
    const now = Date.now();
    a.lastHeartbeatAt = now;
    a.heartbeatReported = false;
    a.nextHeartbeatAt = now + 200;
    if (a.tasks.size > 0 && a.behaviour === 'normal') setTimeout(() => { if (a.canAct) this.setState(a, 'busy'); }, 100);
    const pending = a.pendingInjections.splice(0);
    for (const p of pending) this.ackInjection(a, p, this.rng.int(150, 400));
  }

  async setState(a, state) {
    const reg = host.server.agents.get(a.id);
    if (!reg || reg.state === state) return;
    const token = { state, consumed: false };
    a.ownPending.push(token);
    try {
      await a.host.request('map/agents/update', { agentId: a.id, state });
    } catch (err) {
      vlog(`${a.name}: state ${state} refused: ${err?.message}`);
    } finally {
      const i = a.ownPending.indexOf(token);
      if (i >= 0) a.ownPending.splice(i, 1);
    }
  }

  // ----- messaging ---------------------------------------------------------------------------
  envelope(from, type, toId, payload, { priority = 5, correlation, parent, extra } = {}) {
    return {
      message_id: this.rng.uuid(),
      type,
      from: from.id,
      to: toId,
      timestamp: new Date().toISOString(),
      priority,
      payload,
      metadata: {
        correlation_id: correlation ?? `corr-${this.rng.uuid().slice(0, 8)}`,
        ...(parent ? { parent_message_id: parent } : {}),
        agent_name: from.name,
      },
      ...(extra ?? {}),
    };
  }

  // direct message from agent `from` to agent `to`
  send(from, to, type, payload, options = {}) {
    const env = this.envelope(from, type, to.id, payload, options);
    this.sendEnvelope(from, { agent: to.id }, env);
    return env;
  }

  sendToScope(from, scope, type, payload, options = {}) {
    const env = this.envelope(from, type, 'broadcast', payload, options);
    env.metadata.scope_id = scope.id;
    env.metadata.scope_name = scope.name;
    this.sendEnvelope(from, { scope: scope.id }, env);
    return env;
  }

  sendEnvelope(from, address, env) {
    if (env.type === 'HEARTBEAT') this.heartbeatCount++; else this.msgCount++;
    from.host.request('map/send', { to: address, payload: env, messageType: env.type, priority: env.priority })
      .catch((err) => rateLimitedLog(`send-${env.type}`, `${from.name}: map/send ${env.type} failed: ${err?.message}`));
  }

  // task table calls (extended mode only; stock MAPServer has no map/tasks/*)
  taskCall(actor, method, params) {
    if (!host.extended) return;
    actor.host.request(method, params).catch((err) => vlog(`${actor.name}: ${method} failed: ${err?.message}`));
  }

  resourceUsage(a, extraTokens = 0) {
    a.tokensUsed += extraTokens;
    return {
      tokens_used: a.tokensUsed,
      tokens_remaining: Math.max(0, a.tokenBudget - a.tokensUsed),
      // The split an LLM API reports (simulated: about a quarter of the tokens are output).
      input_tokens: a.tokensUsed - Math.floor(a.tokensUsed / 4),
      output_tokens: Math.floor(a.tokensUsed / 4),
      cost_usd: Number((a.tokensUsed * 0.000004).toFixed(4)),
      cpu_usage: this.rng.int(5, 95),
      memory_usage: this.rng.int(10, 80),
    };
  }

  healthMetrics(a) {
    const done = a.completed + a.failedTasks;
    return {
      uptime_seconds: Math.round((Date.now() - a.registeredAt) / 1000),
      success_rate: done ? Number((a.completed / done).toFixed(3)) : 1,
      avg_latency_ms: this.rng.int(40, 900),
      error_count: a.errorCount,
    };
  }

  heartbeatTarget(a) {
    if (this.monitor && a !== this.monitor && this.monitor.control !== 'gone') return this.monitor;
    return this.coordinator;
  }

  supervisorOf(a) {
    if (a.parent && a.parent.control !== 'gone') return a.parent;
    if (a !== this.coordinator) return this.coordinator;
    return this.monitor ?? this.coordinator;
  }

  // ----- delivered messages and injections (extended mode) ----------------------------------
  onDelivered(params) {
    const a = this.byId.get(params?.agentId);
    if (!a) return;
    a.received++;
    const msg = params.message;
    const env = msg?.payload;
    if (!env || typeof env !== 'object') return;
    const fromOurs = this.byId.has(env.from) || this.ownSessions.has(msg.from);
    if (fromOurs) return; // the scripted workflows already answer the simulation's own traffic
    if (a.control !== 'running' || a.behaviour !== 'normal') return;
    const type = String(env.type ?? '').toUpperCase();
    // answer operators: STATUS_QUERY -> STATUS_RESPONSE, STEERING -> STEERING_ACK
    if (type === 'STATUS_QUERY' || type === 'STEERING' || env.steering === true) {
      setTimeout(() => {
        if (a.control !== 'running') return;
        const replyTo = env.from ?? msg.from;
        const isQuery = type === 'STATUS_QUERY';
        const payload = isQuery
          ? { query_id: env.message_id ?? msg.id, status: a.tasks.size ? 'RUNNING' : 'IDLE', progress: a.tasks.size ? this.rng.int(5, 95) : 100,
            tasks_running: a.tasks.size, estimated_remaining: a.tasks.size ? this.rng.int(5, 120) : 0 }
          : { in_reply_to: env.message_id ?? msg.id, content: env.payload ?? env.content ?? null, delivery: 'message', injected_by: msg.from, status: 'APPLIED' };
        const reply = this.envelope(a, isQuery ? 'STATUS_RESPONSE' : 'STEERING_ACK', replyTo, payload,
          { priority: isQuery ? 3 : 7, correlation: env.metadata?.correlation_id, parent: env.message_id ?? msg.id,
            extra: isQuery ? undefined : { in_reply_to: env.message_id ?? msg.id } });
        this.sendEnvelope(a, { agent: replyTo }, reply);
      }, this.rng.int(30, 150));
    }
  }

  onInjectNotification(p) {
    const a = this.byId.get(p?.agentId);
    if (!a) return;
    log(`${a.name} received injection ${p.injectionId} (${p.delivery})`);
    if (a.control === 'stopped' || a.control === 'gone') return;
    if (a.behaviour !== 'normal') { log(`${a.name} is ${a.behaviour}: injection not acknowledged`); return; }
    if (a.control === 'suspended') { a.pendingInjections.push(p); return; }
    const delay = p.delivery === 'interrupt' ? this.rng.int(20, 80)
      : (a.tasks.size > 0 ? this.rng.int(800, 2000) : this.rng.int(150, 400));
    this.ackInjection(a, p, delay);
  }

  ackInjection(a, p, delayMs) {
    setTimeout(() => {
      if (a.control === 'suspended') { a.pendingInjections.push(p); return; }
      if (a.control !== 'running' || a.behaviour !== 'normal') return;
      const to = this.supervisorOf(a);
      const env = this.envelope(a, 'STEERING_ACK', to.id, {
        in_reply_to: p.injectionId, content: p.content ?? null, delivery: p.delivery, injected_by: p.from,
        status: 'APPLIED', applied_at: new Date().toISOString(),
      }, { priority: 7, correlation: p.injectionId, parent: p.injectionId, extra: { in_reply_to: p.injectionId } });
      this.sendEnvelope(a, { agent: to.id }, env);
      log(`${a.name} acknowledged injection ${p.injectionId}`);
    }, delayMs);
  }

  // ----- scheduler ---------------------------------------------------------------------------
  at(delayMs, actor, run, { msg = true, wf = null } = {}) {
    this.heap.push({ due: Date.now() + delayMs, actor, run, msg, wf });
  }

  // a timed simulation action that is not tied to one agent's workflow (paused by quiesce too)
  later(delayMs, fn) {
    this.heap.push({ due: Date.now() + delayMs, actor: null, msg: false, wf: null, always: true, run: fn });
  }

  tick() {
    const now = Date.now();
    const dt = Math.min(1, (now - this.lastTick) / 1000);
    this.lastTick = now;
    if (!this.activityEnabled) return;

    this.heartbeats(now);
    this.watchHeartbeats(now);

    this.budget = Math.min(this.budget + this.opts.rate * dt, Math.max(1, this.opts.rate * 0.5));
    this.processDue();
    let guard = 0;
    while (this.activityEnabled && this.budget >= 1 && this.activeWorkflows < this.maxActive && guard++ < 50) {
      if (!this.startWorkflow()) break;
      this.processDue(); // runs the new workflow's first step now, paying for it from the budget
    }
  }

  processDue() {
    while (this.activityEnabled && this.heap.size && this.heap.peek().due <= Date.now()) {
      const step = this.heap.peek();
      if (step.msg && this.budget < 1) break;
      this.heap.pop();
      const actor = step.actor;
      if (actor && actor.control === 'suspended') { step.due = Date.now() + 500; this.heap.push(step); continue; }
      if (actor && !actor.canAct && !step.always) { if (step.wf) this.endWorkflow(step.wf); continue; }
      if (step.msg) this.budget -= 1;
      try { step.run(); } catch (err) { log(`step error: ${err?.stack ?? err}`); }
    }
  }

  heartbeats(now) {
    const every = this.opts.heartbeatMs;
    if (!(every > 0)) return;
    for (const a of this.agents) {
      if (a.id === null || a.nextHeartbeatAt > now) continue;
      a.nextHeartbeatAt = now + every;
      if (a.control !== 'running' || a.behaviour === 'silent') continue;
      const target = this.heartbeatTarget(a);
      const failed = a.behaviour === 'failed';
      const running = a.tasks.size;
      a.lastHeartbeatAt = now;
      this.send(a, target, 'HEARTBEAT', {
        status: failed ? 'ERROR' : running ? 'BUSY' : (this.rng.chance(0.5) ? 'IDLE' : 'ACTIVE'),
        load: failed ? 0 : Number(Math.min(1, running * 0.3 + this.rng.real(0, 0.25)).toFixed(2)),
        tasks_running: failed ? 0 : running,
        tasks_queued: failed ? 0 : this.rng.int(0, 3),
        capabilities: a.capabilities,
      }, { priority: 1 });
    }
  }

  watchHeartbeats(now) {
    const every = this.opts.heartbeatMs;
    if (!(every > 0)) return;
    const watcher = (this.monitor && this.monitor.canAct) ? this.monitor : (this.coordinator.canAct ? this.coordinator : null);
    if (!watcher) return;
    for (const a of this.agents) {
      if (a === watcher || a.control !== 'running' || a.heartbeatReported || a.id === null) continue;
      if (now - a.lastHeartbeatAt > 3 * every + 500) {
        a.heartbeatReported = true;
        const to = watcher === this.coordinator ? (this.monitor ?? this.coordinator) : this.coordinator;
        this.send(watcher, to, 'ERROR_REPORT', {
          error_id: this.rng.uuid(), agent_id: a.id, error_type: 'TIMEOUT', severity: 'WARNING', error_code: 'HEARTBEAT_MISSED',
          message: `No heartbeat from ${a.name} for ${Math.round((now - a.lastHeartbeatAt) / 1000)} s (3 intervals): marking unavailable`,
          context: { last_heartbeat: new Date(a.lastHeartbeatAt).toISOString(), interval_ms: every },
          recovery_attempts: [], suggested_actions: ['check the agent process', 'reassign its tasks'],
        }, { priority: 8 });
        log(`${watcher.name} reports missed heartbeats of ${a.name}`);
      }
    }
  }

  endWorkflow(wf) { if (wf && !wf.ended) { wf.ended = true; this.activeWorkflows--; } }

}

// The workflows and the incidents live in files of their own (workflows.mjs, incidents.mjs) and
// are Simulation's methods all the same.
for (const part of [Workflows, Incidents])
  for (const name of Object.getOwnPropertyNames(part.prototype))
    if (name !== 'constructor') Object.defineProperty(Simulation.prototype, name, Object.getOwnPropertyDescriptor(part.prototype, name));
