// The simulation: a coordinator, workers and their sub-agents, specialists and monitors on the
// SDK's AgentConnection, with heartbeats, tasks, errors and usage reports in the seed
// conventions. demo-system.mjs hands over what it uses of the process (bindHost in host.mjs)
// before it makes the Simulation.

import { log, vlog, rateLimitedLog, PROCESS_T0 } from './log.mjs';
import { host } from './host.mjs';
import { makeRng } from './rng.mjs';
import { MinHeap, TASK_TYPES, SPECIALIST_NAMES, SimAgent, AgentHost } from './agents.mjs';

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

  // ----- workflows ---------------------------------------------------------------------------
  actors(filter) { return this.agents.filter((a) => a.canAct && filter(a)); }

  startWorkflow() {
    const kind = this.rng.weighted([['task', 55], ['status_query', 12], ['status_update', 12], ['broadcast', 8], ['error', 8], ['metadata', 5]]);
    const wf = { id: ++this.taskSeq, ended: false };
    this.activeWorkflows++;
    let ok = false;
    try {
      if (kind === 'task') ok = this.wfTask(wf);
      else if (kind === 'status_query') ok = this.wfStatusQuery(wf);
      else if (kind === 'status_update') ok = this.wfStatusUpdate(wf);
      else if (kind === 'broadcast') ok = this.wfBroadcast(wf);
      else if (kind === 'error') ok = this.wfError(wf);
      else ok = this.wfMetadata(wf);
    } catch (err) { log(`workflow error: ${err?.stack ?? err}`); }
    if (!ok) this.endWorkflow(wf);
    return ok;
  }

  pickRequest() {
    const coord = this.coordinator;
    const targetsOfCoord = this.actors((a) => a.kind === 'worker' || a.kind === 'specialist');
    const workersWithSubs = this.actors((a) => a.kind === 'worker' && a.children.some((c) => c.canAct));
    if (coord.canAct && targetsOfCoord.length && (this.rng.chance(0.45) || !workersWithSubs.length)) {
      return [coord, this.rng.pick(targetsOfCoord)];
    }
    if (!workersWithSubs.length) return null;
    const w = this.rng.pick(workersWithSubs);
    return [w, this.rng.pick(w.children.filter((c) => c.canAct))];
  }

  peersOf(a) {
    const pool = a.parent ? a.parent.children : this.agents.filter((x) => x.kind === a.kind);
    return pool.filter((x) => x !== a && x.canAct);
  }

  wfTask(wf, prior = null) {
    const pair = prior ? [prior.requester, prior.assignee] : this.pickRequest();
    if (!pair) return false;
    const [req, asg] = pair;
    const taskId = prior?.taskId ?? host.nextTaskId();
    const taskType = prior?.taskType ?? this.rng.pick(TASK_TYPES[asg.kind] ?? TASK_TYPES.worker);
    const corr = prior?.corr ?? `corr-${taskId}`;
    const attempt = (prior?.attempt ?? 0) + 1;
    const t = { taskId, taskType, corr, attempt, requester: req, assignee: asg, last: null, started: 0 };

    this.at(0, req, () => {
      const env = this.send(req, asg, 'TASK_REQUEST', {
        task_id: taskId, task_type: taskType,
        input: this.rng.pick(['function add(a, b) { return a + b; }', { repo: 'demo/app', path: 'src/main.cpp' },
          { dataset: 'events-2026-11', rows: this.rng.int(100, 90000) }, 'Summarise the last 50 events']),
        requirements: { language: this.rng.pick(['javascript', 'cpp', 'python']), check_security: this.rng.chance(0.3) },
        timeout: this.rng.pick([60, 120, 300]), attempt,
      }, { priority: this.rng.int(4, 7), correlation: corr, parent: prior?.last });
      t.last = env.message_id;
      if (attempt === 1) {
        this.taskCall(req, 'map/tasks/create', { task: { id: taskId, title: `${taskType} #${wf.id}`, status: 'open',
          description: `${taskType} requested by ${req.name}`, meta: { task_type: taskType, requester: req.id, correlation_id: corr } } });
      }
      this.taskCall(req, 'map/tasks/assign', { taskId, agentId: asg.id });
      this.at(this.rng.int(100, 500), asg, () => this.taskDecide(wf, t), { wf });
    }, { wf });
    return true;
  }

  taskDecide(wf, t) {
    const asg = t.assignee;
    const peers = this.peersOf(asg);
    const busy = asg.tasks.size >= 2;
    const choice = this.rng.weighted([['accept', busy ? 40 : 76], ['reject', busy ? 40 : 12], ['handoff', peers.length ? 12 : 0]]);
    if (choice === 'reject' || (choice === 'handoff' && !peers.length)) {
      const suggested = peers.slice(0, 2);
      const env = this.send(asg, t.requester, 'TASK_REJECT', {
        task_id: t.taskId, reason: busy ? 'OVERLOADED' : this.rng.pick(['CAPABILITY_MISMATCH', 'RESOURCE_UNAVAILABLE', 'OVERLOADED']),
        message: busy ? `${asg.name} already runs ${asg.tasks.size} tasks` : `${asg.name} cannot take ${t.taskType} now`,
        suggested_agents: suggested.map((p) => p.id),
      }, { priority: 5, correlation: t.corr, parent: t.last });
      t.last = env.message_id;
      this.taskCall(asg, 'map/tasks/update', { taskId: t.taskId, status: 'open', assignee: null, meta: { rejected_by: asg.id } });
      if (suggested.length && t.attempt < 3) {
        // the requester retries with the first suggested agent
        this.endWorkflow(wf);
        const retry = { id: wf.id, ended: false };
        this.activeWorkflows++;
        this.at(this.rng.int(200, 600), t.requester, () => {
          if (!suggested[0].canAct) { this.endWorkflow(retry); return; }
          this.wfTask(retry, { ...t, assignee: suggested[0] });
        }, { msg: false, wf: retry });
      } else {
        this.endWorkflow(wf);
      }
      return;
    }
    if (choice === 'handoff') {
      const to = this.rng.pick(peers);
      const env = this.send(asg, to, 'TASK_HANDOFF', {
        task_id: t.taskId, from_agent: asg.id, to_agent: to.id,
        reason: this.rng.pick(['CAPABILITY_LIMIT', 'RATE_LIMIT', 'LOAD_BALANCING', 'ESCALATION']),
        context: { task_id: t.taskId, task_type: t.taskType, priority: 'normal', dependencies: [], history: [] },
        constraints: { max_tokens: this.rng.pick([8000, 32000, 100000]), required_capabilities: to.capabilities.slice(0, 2) },
        deadline: new Date(Date.now() + 300000).toISOString(),
      }, { priority: 7, correlation: t.corr, parent: t.last });
      t.last = env.message_id;
      this.taskCall(asg, 'map/tasks/assign', { taskId: t.taskId, agentId: to.id });
      t.assignee = to;
      this.at(this.rng.int(150, 500), to, () => this.taskAccept(wf, t), { wf });
      return;
    }
    this.taskAccept(wf, t);
  }

  taskAccept(wf, t) {
    const asg = t.assignee;
    const est = this.rng.int(2, 12);
    const env = this.send(asg, t.requester, 'TASK_ACCEPT', {
      task_id: t.taskId, estimated_duration: est, accepted_at: new Date().toISOString(),
    }, { priority: 5, correlation: t.corr, parent: t.last });
    t.last = env.message_id;
    t.started = Date.now();
    asg.tasks.add(t.taskId);
    if (asg.tasks.size === 1) this.setState(asg, 'busy');
    this.taskCall(asg, 'map/tasks/update', { taskId: t.taskId, status: 'in_progress', assignee: asg.id });
    const updates = this.rng.int(1, 3);
    let progress = 0;
    const stepUpdate = (k) => {
      if (k > updates) { this.taskFinish(wf, t); return; }
      progress = Math.min(95, progress + this.rng.int(15, 45));
      const e = this.send(asg, t.requester, 'STATUS_UPDATE', {
        agent_id: asg.id, task_id: t.taskId, progress, status: { state: 'BUSY', capability_level: this.rng.int(60, 100) },
        current_tasks: [...asg.tasks], resource_usage: this.resourceUsage(asg, this.rng.int(200, 4000)), health_metrics: this.healthMetrics(asg),
      }, { priority: 4, correlation: t.corr, parent: t.last });
      t.last = e.message_id;
      if (k === 1 && this.rng.chance(0.12)) {
        const helper = this.supervisorOf(asg);
        if (helper.canAct && helper !== asg) {
          const hr = this.send(asg, helper, 'HELP_REQUEST', {
            requester_id: asg.id, task_id: t.taskId, help_type: this.rng.pick(['TECHNICAL_GUIDANCE', 'DEBUGGING_ASSISTANCE', 'CODE_REVIEW', 'RESOURCE_SHARING']),
            description: `stuck on ${t.taskType}: ${this.rng.pick(['flaky test', 'ambiguous spec', 'missing credentials', 'rate limited upstream'])}`,
            context: { current_state: `progress ${progress}%`, attempted_solutions: ['retry', 'narrow the input'] },
            urgency: this.rng.pick(['low', 'medium', 'high']),
          }, { priority: 7, correlation: t.corr, parent: t.last });
          this.at(this.rng.int(200, 800), helper, () => {
            this.send(helper, asg, 'HELP_RESPONSE', {
              responder_id: helper.id, request_id: hr.message_id, response_type: this.rng.pick(['DIRECT_ANSWER', 'RESOURCE_PROVISION', 'ESCALATION']),
              content: 'Split the input and retry with a smaller batch.', follow_up_required: false, estimated_effort: this.rng.int(1, 15),
            }, { priority: 6, correlation: t.corr, parent: hr.message_id });
          });
        }
      }
      this.at(this.rng.int(500, 2000), asg, () => stepUpdate(k + 1), { wf });
    };
    this.at(this.rng.int(300, 1200), asg, () => stepUpdate(1), { wf });
  }

  taskFinish(wf, t) {
    const asg = t.assignee;
    const duration = Math.max(1, Math.round((Date.now() - t.started) / 1000));
    if (this.rng.chance(0.85)) {
      const status = this.rng.chance(0.8) ? 'SUCCESS' : 'PARTIAL';
      this.send(asg, t.requester, 'TASK_COMPLETE', {
        task_id: t.taskId, status, duration, completed_at: new Date().toISOString(),
        output: { result: status === 'SUCCESS' ? 'PASS' : 'INCOMPLETE', issues: this.rng.int(0, 4), tokens: this.rng.int(500, 9000),
          suggestions: status === 'SUCCESS' ? ['Consider adding input validation'] : ['Retry the remaining 20%'] },
      }, { priority: 5, correlation: t.corr, parent: t.last });
      asg.completed++;
      this.taskCall(asg, 'map/tasks/update', { taskId: t.taskId, status: 'completed', meta: { result: status, duration } });
    } else {
      const code = this.rng.pick(['EXECUTION_ERROR', 'TIMEOUT', 'RATE_LIMIT', 'VALIDATION_ERROR']);
      this.send(asg, t.requester, 'TASK_FAILED', {
        task_id: t.taskId, error_code: code, error_message: `${t.taskType} failed: ${code.toLowerCase().replace('_', ' ')}`,
        error_details: { step: this.rng.int(1, 5) }, retry_possible: code !== 'VALIDATION_ERROR',
      }, { priority: 8, correlation: t.corr, parent: t.last });
      asg.failedTasks++;
      asg.errorCount++;
      this.taskCall(asg, 'map/tasks/update', { taskId: t.taskId, status: 'failed', meta: { error_code: code } });
      if (this.rng.chance(0.5)) {
        this.send(asg, this.coordinator.canAct ? this.coordinator : this.supervisorOf(asg), 'ERROR_REPORT', {
          error_id: this.rng.uuid(), agent_id: asg.id, task_id: t.taskId, error_type: code === 'TIMEOUT' ? 'TIMEOUT' : 'INTERNAL_ERROR',
          severity: this.rng.pick(['WARNING', 'ERROR']), error_code: code, message: `task ${t.taskId} failed`,
          recovery_attempts: [{ attempt_number: 1, timestamp: new Date().toISOString(), strategy: 'retry', outcome: 'failure', details: 'same error' }],
          suggested_actions: ['retry later'],
        }, { priority: 8, correlation: t.corr });
      }
    }
    asg.tasks.delete(t.taskId);
    if (asg.tasks.size === 0) this.setState(asg, 'idle');
    this.endWorkflow(wf);
  }

  wfStatusQuery(wf) {
    const coord = this.coordinator;
    if (!coord.canAct) return false;
    const targets = this.actors((a) => a !== coord && (a.kind === 'worker' || a.kind === 'specialist'));
    if (!targets.length) return false;
    const x = this.rng.pick(targets);
    const taskId = x.tasks.size ? [...x.tasks][0] : undefined;
    this.at(0, coord, () => {
      const q = this.send(coord, x, 'STATUS_QUERY', { query_type: taskId ? 'TASK_STATUS' : 'AGENT_STATUS', ...(taskId ? { task_id: taskId } : {}) }, { priority: 3 });
      this.at(this.rng.int(100, 600), x, () => {
        this.send(x, coord, 'STATUS_RESPONSE', {
          query_id: q.message_id, ...(taskId ? { task_id: taskId } : {}), status: x.tasks.size ? 'RUNNING' : 'IDLE',
          progress: x.tasks.size ? this.rng.int(5, 95) : 100, estimated_remaining: x.tasks.size ? this.rng.int(5, 120) : 0,
          tasks_running: x.tasks.size,
        }, { priority: 3, correlation: q.metadata.correlation_id, parent: q.message_id });
        this.endWorkflow(wf);
      }, { wf });
    }, { wf });
    return true;
  }

  wfStatusUpdate(wf) {
    const cands = this.actors((a) => a !== this.coordinator);
    if (!cands.length) return false;
    const a = this.rng.pick(cands);
    this.at(0, a, () => {
      this.send(a, this.supervisorOf(a), 'STATUS_UPDATE', {
        agent_id: a.id, ...(a.tasks.size ? { task_id: [...a.tasks][0], progress: this.rng.int(5, 95) } : { progress: 100 }),
        status: { state: a.tasks.size ? 'BUSY' : 'IDLE', capability_level: this.rng.int(50, 100), error_rate: Number(this.rng.real(0, 0.1).toFixed(3)),
          avg_response_time_ms: this.rng.int(50, 1500), last_heartbeat: new Date(a.lastHeartbeatAt).toISOString() },
        current_tasks: [...a.tasks], resource_usage: this.resourceUsage(a, this.rng.int(50, 800)), health_metrics: this.healthMetrics(a),
      }, { priority: 4 });
      this.endWorkflow(wf);
    }, { wf });
    return true;
  }

  wfBroadcast(wf) {
    const coord = this.coordinator;
    const options = [];
    if (coord.canAct) options.push([coord, this.scopes.ops, 'PLAN_UPDATED']);
    for (const w of this.actors((a) => a.kind === 'worker' && a.squad && !a.leftSquad)) options.push([w, w.squad, 'CONTEXT_SHARED']);
    if (!options.length) return false;
    const [from, scope, event] = this.rng.pick(options);
    this.at(0, from, () => {
      this.sendToScope(from, scope, 'BROADCAST', {
        event, message: event === 'PLAN_UPDATED' ? `plan revision ${this.rng.int(2, 40)} published` : `${from.name} shares findings with ${scope.name}`,
        ...(event === 'CONTEXT_SHARED' ? { artifacts: [`notes/${from.name}-${this.rng.int(1, 99)}.md`] } : {}),
      }, { priority: event === 'PLAN_UPDATED' ? 7 : 5 });
      this.endWorkflow(wf);
    }, { wf });
    return true;
  }

  wfError(wf) {
    const cands = this.actors((a) => a !== this.coordinator);
    if (!cands.length) return false;
    const a = this.rng.pick(cands);
    const to = this.coordinator.canAct ? this.coordinator : this.supervisorOf(a);
    this.at(0, a, () => {
      if (this.rng.chance(0.3)) {
        this.send(a, to, 'ERROR', {
          error_type: this.rng.pick(['PROTOCOL_ERROR', 'VALIDATION_ERROR', 'EXECUTION_ERROR', 'TIMEOUT_ERROR', 'RESOURCE_ERROR']),
          error_code: this.rng.pick(['INVALID_MESSAGE_FORMAT', 'MISSING_FIELD', 'UPSTREAM_TIMEOUT']),
          error_message: 'Missing required field: task_id', original_message_id: this.rng.uuid(), severity: this.rng.pick(['INFO', 'WARNING', 'ERROR']),
        }, { priority: 9 });
      } else {
        a.errorCount++;
        this.send(a, to, 'ERROR_REPORT', {
          error_id: this.rng.uuid(), agent_id: a.id, error_type: this.rng.pick(['TIMEOUT', 'RATE_LIMIT', 'NETWORK_ERROR', 'RESOURCE_EXHAUSTED', 'EXTERNAL_SERVICE_ERROR']),
          severity: this.rng.weighted([['INFO', 40], ['WARNING', 45], ['ERROR', 15]]), error_code: this.rng.pick(['E_UPSTREAM_429', 'E_SLOW_DISK', 'E_RETRYING']),
          message: this.rng.pick(['upstream API rate limited, backing off', 'tool call took 12 s', 'retrying after transient network error']),
          recovery_attempts: [], suggested_actions: ['none needed'],
        }, { priority: 6 });
      }
      this.endWorkflow(wf);
    }, { wf });
    return true;
  }

  wfMetadata(wf) {
    const cands = this.actors((a) => a.kind === 'worker' || a.kind === 'specialist');
    if (!cands.length) return false;
    const a = this.rng.pick(cands);
    this.at(0, a, () => {
      // metadata only: never state and metadata in one map/agents/update
      a.host.request('map/agents/update', { agentId: a.id, metadata: {
        last_report: new Date().toISOString(), tokens_used: a.tokensUsed, tasks_completed: a.completed,
      } }).catch((err) => vlog(`${a.name}: metadata update failed: ${err?.message}`));
      this.endWorkflow(wf);
    }, { msg: false, wf });
    return true;
  }

  // ----- incidents ---------------------------------------------------------------------------
  scheduleIncidents(now) {
    const D = this.opts.duration;
    const when = (fraction, foreverS) => (D > 0 ? D * fraction : foreverS) * 1000;
    const incident = (delay, name, fn) => this.later(delay - (Date.now() - now), () => {
      try { fn(); } catch (err) { log(`incident ${name} failed: ${err?.stack ?? err}`); }
    });
    incident(when(0.35, 8), 'failure', () => this.incidentFailure(when(0.8, 25) - when(0.35, 8)));
    incident(when(0.5, 12), 'silent', () => this.incidentSilent());
    incident(when(0.6, 15), 'leave', () => this.incidentLeave());
    incident(when(0.9, 45), 'unregister', () => this.incidentUnregister());
    if (this.opts.scenario === 'incidents') this.scheduleAlertIncidents(when(0.05, 3));
    if (this.opts.scenario === 'storm') incident(when(0.3, 10), 'storm', () => this.incidentStorm());
  }

  // ----- the storm scenario: a whole squad falls silent at once (a shared dependency's outage
  // as an operator sees it: many unresponsive agents in one scope). The incidents' cast is spared.
  incidentStorm() {
    const cast = new Set([this.coordinator, this.monitor, this.failing, this.silent, this.leaver, this.unregisterer]);
    const bySquad = new Map();
    for (const a of this.agents) {
      if (cast.has(a) || !a.canAct || !a.squad || (a.kind !== 'worker' && a.kind !== 'subagent')) continue;
      if (!bySquad.has(a.squad)) bySquad.set(a.squad, []);
      bySquad.get(a.squad).push(a);
    }
    let squad = null;
    for (const [s, members] of bySquad) if (!squad || members.length > bySquad.get(squad).length) squad = s;
    if (!squad) { log('incident storm skipped: no squad'); return; }
    const silenced = bySquad.get(squad);
    for (const a of silenced) a.behaviour = 'silent';
    this.stormCast = { squad: squad.name, agents: silenced.map((a) => a.id) };
    log(`incident: storm, ${silenced.length} agents of ${squad.name} go silent at once`);
  }

  // ----- the incidents scenario: one of each alert kind MAP Inspector detects -----------------
  // Its actors are taken out of the workflows (behaviour 'scripted') from the start, so that
  // nothing but the incident moves them; they keep heartbeating. Timeline (forever mode, from the
  // start of activity): the failure at 8 s and the silent agent at 12 s as in the normal scenario;
  // from 3 s: a loop (30 s), a deadlock of three task requests (never answered), a stalled agent
  // (accepts a task, stays busy, never reports), a budget overrun, an unanswered help request and
  // a state waiting for input, an error storm (15 ERROR reports in 4.5 s).
  scheduleAlertIncidents(startMs) {
    const cast = new Set([this.coordinator, this.monitor, this.failing, this.silent, this.leaver, this.unregisterer]);
    const free = this.agents.filter((a) => !cast.has(a) && a.canAct);
    if (free.length < 9) { log(`incidents scenario skipped: ${free.length} free agents, 9 needed (use --agents 16 or more)`); return; }
    const [loopA, loopB, dl1, dl2, dl3, staller, spender, asker, stormer] = free.slice(0, 9);
    for (const a of [loopA, loopB, dl1, dl2, dl3, staller, spender, asker, stormer]) a.behaviour = 'scripted';
    this.incidentCast = { loop: [loopA.id, loopB.id], deadlock: [dl1.id, dl2.id, dl3.id], stalled: staller.id,
      budget: spender.id, needsHuman: asker.id, errorStorm: stormer.id };
    const step = (delay, name, fn) => this.later(startMs + delay, () => {
      try { fn(); } catch (err) { log(`incident ${name} failed: ${err?.stack ?? err}`); }
    });
    step(0, 'loop', () => {
      log(`incident: ${loopA.name} and ${loopB.name} ask each other the same question, over and over`);
      for (let i = 0; i < 60; i++) {
        const [from, to] = i % 2 ? [loopB, loopA] : [loopA, loopB];
        this.later(i * 500, () => this.send(from, to, 'CLARIFICATION_REQUEST',
          { question: 'Which output format did you mean?', attempt: i + 1, context: { topic: 'report-format' } }, { priority: 5 }));
      }
    });
    step(0, 'deadlock', () => {
      log(`incident: ${dl1.name}, ${dl2.name} and ${dl3.name} each wait for the next to do a task`);
      const ring = [[dl1, dl2], [dl2, dl3], [dl3, dl1]];
      ring.forEach(([from, to], i) => this.send(from, to, 'TASK_REQUEST', {
        task_id: `task-deadlock-${i + 1}`, task_type: 'dependency', description: `${from.name} needs ${to.name}'s result first`,
        requirements: { blocking: true },
      }, { priority: 7 }));
    });
    step(0, 'stalled', () => {
      log(`incident: ${staller.name} accepts a task and stops making progress`);
      const taskId = 'task-stalled-1';
      this.send(this.coordinator, staller, 'TASK_REQUEST', { task_id: taskId, task_type: 'analysis', description: 'summarise the logs' }, { priority: 5 });
      this.later(300, () => {
        this.send(staller, this.coordinator, 'TASK_ACCEPT', { task_id: taskId, estimated_completion: new Date(Date.now() + 60000).toISOString() });
        staller.tasks.add(taskId); // its heartbeats say BUSY from now on
        this.setState(staller, 'busy');
      });
    });
    step(0, 'budget', () => {
      log(`incident: ${spender.name} reports 12.50 USD spent`);
      spender.tokensUsed = 3125000;
      this.send(spender, this.coordinator, 'STATUS_UPDATE', {
        agent_id: spender.id, status: { state: 'ACTIVE' }, resource_usage: { tokens_used: 3125000, cost_usd: 12.5 },
      }, { priority: 4 });
    });
    step(0, 'needs-human', () => {
      log(`incident: ${asker.name} asks for a human's approval and waits for input`);
      this.send(asker, this.coordinator, 'HELP_REQUEST', {
        requester_id: asker.id, help_type: 'HUMAN_APPROVAL', description: 'Deleting 1,200 records needs an operator\'s approval',
        urgency: 'high',
      }, { priority: 9 });
      this.setState(asker, 'custom:waiting_for_input');
    });
    step(0, 'error-storm', () => {
      log(`incident: ${stormer.name} reports error after error`);
      for (let i = 0; i < 15; i++) {
        this.later(i * 300, () => this.send(stormer, this.coordinator, 'ERROR_REPORT', {
          error_id: this.rng.uuid(), agent_id: stormer.id, error_type: 'EXTERNAL_SERVICE_ERROR', severity: 'ERROR',
          error_code: 'E_UPSTREAM_503', message: `upstream unavailable (attempt ${i + 1})`,
        }, { priority: 8 }));
      }
    });
  }

  incidentFailure(scopeLifetimeMs) {
    const f = this.failing;
    if (!f || !f.canAct) { log('incident failure skipped (agent not active)'); return; }
    log(`incident: ${f.name} fails (custom:failed)`);
    const boss = this.supervisorOf(f);
    const taskId = f.tasks.size ? [...f.tasks][0] : `task-crash-${f.name}`;
    this.send(f, boss, 'TASK_FAILED', {
      task_id: taskId, error_code: 'AGENT_CRASH', error_message: 'Out of memory while loading the context window',
      error_details: { rss_mb: 8123, limit_mb: 8192 }, retry_possible: false,
    }, { priority: 9 });
    this.send(f, this.coordinator, 'ERROR_REPORT', {
      error_id: this.rng.uuid(), agent_id: f.id, task_id: taskId, error_type: 'RESOURCE_EXHAUSTED', severity: 'CRITICAL',
      error_code: 'AGENT_CRASH', message: `${f.name} crashed: out of memory`, stack_trace: 'at loadContext (agent.js:120)\nat run (agent.js:88)',
      context: { configuration: { max_tokens: 200000 } },
      recovery_attempts: [{ attempt_number: 1, timestamp: new Date().toISOString(), strategy: 'restart', outcome: 'failure', details: 'crashed again' }],
      suggested_actions: ['reassign its tasks', 'raise the memory limit'],
    }, { priority: 10 });
    f.behaviour = 'failed';
    f.tasks.clear();
    this.setState(f, 'custom:failed');
    // the coordinator opens an incident scope for a while
    const coord = this.coordinator;
    if (coord.canAct) {
      coord.host.request('map/scopes/create', { name: `incident-${f.name}`, parentId: this.scopes.ops.id, metadata: { severity: 'CRITICAL', agent: f.id } })
        .then(async (r) => {
          const scope = { id: r.scope.id, name: r.scope.name };
          const members = [coord, f.parent, this.monitor].filter((x) => x && x.control !== 'gone');
          for (const m of members) await this.joinScope(m, scope).catch(() => {});
          this.later(Math.max(3000, scopeLifetimeMs), () => {
            if (!coord.canAct) return;
            coord.host.request('map/scopes/delete', { scopeId: scope.id }).catch(() => {});
            log(`incident scope ${scope.name} closed`);
          });
        }).catch((err) => log(`incident scope failed: ${err?.message}`));
    }
  }

  incidentSilent() {
    const s = this.silent;
    if (!s || !s.canAct) { log('incident silent skipped'); return; }
    s.behaviour = 'silent';
    log(`incident: ${s.name} goes silent (no heartbeats, connection kept open)`);
  }

  incidentLeave() {
    const w = this.leaver;
    if (!w || !w.canAct || !w.squad) return;
    w.leftSquad = true;
    log(`incident: ${w.name} leaves ${w.squad.name}`);
    w.host.request('map/scopes/leave', { scopeId: w.squad.id, agentId: w.id }).catch((err) => log(`leave failed: ${err?.message}`));
  }

  incidentUnregister() {
    const u = this.unregisterer;
    if (!u || !u.canAct) return;
    log(`incident: ${u.name} finishes and unregisters`);
    u.host.request('map/agents/unregister', { agentId: u.id, reason: 'work complete' }).catch((err) => log(`unregister failed: ${err?.message}`));
  }

  shutdown() {
    this.activityEnabled = false;
    clearInterval(this.tickTimer);
    clearTimeout(this.durationTimer);
    for (const h of this.hosts) h.close();
  }
}
