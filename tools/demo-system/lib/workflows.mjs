// The demo system's workflows (Simulation's methods, mixed into it by simulation.mjs): what the
// agents do between incidents, as seed 000's conventions say — tasks, status, help, handoffs.
/* eslint-disable no-unused-vars */
import { log, vlog, rateLimitedLog, PROCESS_T0 } from './log.mjs';
import { host } from './host.mjs';
import { makeRng } from './rng.mjs';
import { MinHeap, TASK_TYPES, SPECIALIST_NAMES, SimAgent, AgentHost } from './agents.mjs';

export class Workflows {
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
}
