// The demo system's incidents (Simulation's methods, mixed into it by simulation.mjs): the normal
// scenario's failure, silence, leave and unregistration; the incidents scenario (one of each
// alert kind); the storm scenario (a whole squad falls silent at once).
/* eslint-disable no-unused-vars */
import { log, vlog, rateLimitedLog, PROCESS_T0 } from './log.mjs';
import { host } from './host.mjs';
import { makeRng } from './rng.mjs';
import { MinHeap, TASK_TYPES, SPECIALIST_NAMES, SimAgent, AgentHost } from './agents.mjs';

export class Incidents {
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
