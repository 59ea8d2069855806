#!/usr/bin/env node
// A plain MAP observer: one WebSocket (the `ws` package), raw JSON-RPC, no SDK.
// Sends map/connect, map/agents/list, map/scopes/list, map/subscribe (with "filter":{}), then a
// list of probe requests (to learn which method spellings a server answers), and records every
// frame it sends and receives, one JSON object per line, to --out.
//
//   node observe.mjs --url ws://127.0.0.1:P/path --out /tmp/frames.ndjson [--duration S] [--no-probe]
//        [--filter '{"eventTypes":[...]}']   (default filter: {} = everything)
//
// Each line: {"t":<ms since start>,"dir":"in"|"out","frame":<the JSON-RPC object>}.
// stdout: one summary JSON line at the end (counts of events by type, answered/unknown methods).

import fs from 'node:fs';
import WebSocket from 'ws';

function parseArgs(argv) {
  const o = { url: null, out: null, duration: 8, probe: true, filter: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--url') o.url = argv[++i];
    else if (a === '--out') o.out = argv[++i];
    else if (a === '--duration') o.duration = Number(argv[++i]);
    else if (a === '--no-probe') o.probe = false;
    else if (a === '--filter') o.filter = JSON.parse(argv[++i]);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.url) throw new Error('--url is required');
  return o;
}

const OPTS = parseArgs(process.argv.slice(2));
const t0 = Date.now();
const out = OPTS.out ? fs.createWriteStream(OPTS.out) : null;
const record = (dir, frame) => out?.write(JSON.stringify({ t: Date.now() - t0, dir, frame }) + '\n');

// Probes: spellings seen in MAP documents and SDKs. Read-only methods only.
const PROBES = [
  ['map/agents/get', {}],
  ['map/agents.list', {}],
  ['map/listAgents', {}],
  ['map/session/info', {}],
  ['map/structure/graph', {}],
  ['map/tasks/list', {}],
  ['map/tasks.list', {}],
  ['mail/recent', { limit: 5 }],
  ['mail/list', {}],
  ['map/conversations/list', {}],
  ['map/replay', { limit: 5 }],
  ['trajectory/list', {}],
  ['_macro/task/list', {}],
  ['_macro/getHierarchy', {}],
  ['ping', {}],
  ['map/ping', {}],
];

const ws = new WebSocket(OPTS.url, { perMessageDeflate: false });
let nextId = 1;
const pending = new Map();
const eventsByType = Object.create(null);
const notificationsByMethod = Object.create(null);
const answers = {};

function request(method, params) {
  const id = nextId++;
  const frame = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
  record('out', frame);
  ws.send(JSON.stringify(frame));
  return new Promise((resolve) => {
    const timer = setTimeout(() => { pending.delete(id); resolve({ timeout: true }); }, 3000);
    pending.set(id, (msg) => { clearTimeout(timer); resolve(msg); });
  });
}

ws.on('message', (data) => {
  const text = data.toString('utf8');
  let msg;
  try { msg = JSON.parse(text); } catch { record('in', { unparsable: text }); return; }
  record('in', msg);
  if (msg.id !== undefined && pending.has(msg.id)) { const r = pending.get(msg.id); pending.delete(msg.id); r(msg); return; }
  if (msg.method) {
    notificationsByMethod[msg.method] = (notificationsByMethod[msg.method] ?? 0) + 1;
    const type = msg.params?.event?.type;
    if (type) eventsByType[type] = (eventsByType[type] ?? 0) + 1;
  }
});

const outcome = (m) => (m.timeout ? 'timeout' : m.error ? `error ${m.error.code}` : 'ok');

ws.on('open', async () => {
  answers['map/connect'] = outcome(await request('map/connect', {
    protocolVersion: 1,
    participantType: 'client',
    name: 'interop-observer',
    capabilities: { observation: { canObserve: true, canQuery: true } },
  }));
  answers['map/agents/list'] = outcome(await request('map/agents/list', {}));
  answers['map/scopes/list'] = outcome(await request('map/scopes/list', {}));
  answers['map/subscribe'] = outcome(await request('map/subscribe', { filter: OPTS.filter }));
  if (OPTS.probe) for (const [m, p] of PROBES) answers[m] = outcome(await request(m, p));
  setTimeout(async () => {
    answers['map/agents/list (end)'] = outcome(await request('map/agents/list', {}));
    ws.close(1000);
  }, OPTS.duration * 1000);
});

ws.on('close', () => {
  out?.end();
  process.stdout.write(JSON.stringify({ answers, notificationsByMethod, eventsByType }) + '\n');
  process.exit(0);
});
ws.on('error', (e) => { process.stderr.write(`observer: ${e.message}\n`); process.exit(1); });
