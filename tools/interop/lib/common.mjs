// Shared helpers for the interop launchers: arguments, stdout protocol, logging, WebSocket global.

import fs from 'node:fs';
import WS from 'ws';

// Node 20 has a global WebSocket only with --experimental-websocket. The SDK's connect() and
// websocketStream() use the global one; without the flag, fall back to the `ws` package (the
// demo system does the same).
export function ensureWebSocketGlobal() {
  if (typeof globalThis.WebSocket === 'undefined') {
    globalThis.WebSocket = WS;
    return 'ws-package';
  }
  return 'node-builtin';
}

export function parseArgs(argv, extra = {}) {
  const o = { port: null, duration: 0, waitClients: 0, waitMax: 30, settleMs: 1000, verbose: false, ...extra };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    if (a === '--port') o.port = Number(v());
    else if (a === '--duration') o.duration = Number(v());
    else if (a === '--wait-clients') o.waitClients = Number(v());
    else if (a === '--wait-max') o.waitMax = Number(v());
    else if (a === '--settle-ms') o.settleMs = Number(v());
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--data-dir') o.dataDir = v();
    else if (a === '--wire-log') o.wireLog = v();
    else if (a === '--help' || a === '-h') { o.help = true; }
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.help && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) throw new Error('--port P is required (0 = any free port)');
  return o;
}

// stdout carries only the protocol's JSON lines; everything else goes to stderr.
export function emit(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }

let verbose = false;
export function setVerbose(v) { verbose = v; }
export function log(...args) { process.stderr.write(`[interop] ${args.join(' ')}\n`); }
export function debug(...args) { if (verbose) log(...args); }

// Third-party code prints to stdout with console.log: send the console to stderr.
export function consoleToStderr() {
  const write = (level) => (...args) => {
    if (level === 'debug' && !verbose) return;
    process.stderr.write(args.map((a) => (typeof a === 'string' ? a : safeString(a))).join(' ') + '\n');
  };
  console.log = write('log');
  console.info = write('info');
  console.warn = write('warn');
  console.debug = write('debug');
}
function safeString(a) { try { return a instanceof Error ? a.stack : JSON.stringify(a); } catch { return String(a); } }

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(pred, timeoutMs, stepMs = 50) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) { if (await pred()) return true; await sleep(stepMs); }
  return Boolean(await pred());
}

// Counts everything a MAPServer's event bus publishes (what a `filter:{}` subscriber would get).
export function countEvents(server) {
  const counts = { total: 0, byType: Object.create(null) };
  server.eventBus.on('*', (event) => {
    counts.total++;
    counts.byType[event.type] = (counts.byType[event.type] ?? 0) + 1;
  });
  return counts;
}

export function publicAgent(a) {
  return { id: a.id, name: a.name, role: a.role, state: a.state, sessionId: a.sessionId, scopes: a.scopes, metadata: a.metadata };
}

// Run until --duration elapses (0 = until killed), then call finish() once.
export function runUntilDone(opts, finish) {
  let done = false;
  const stop = async (why) => {
    if (done) return;
    done = true;
    try { await finish(why); } catch (e) { log(`finish failed: ${e?.stack ?? e}`); }
    process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (opts.duration > 0) setTimeout(() => stop('duration'), opts.duration * 1000);
  return stop;
}

// --wire-log FILE: every frame a MAPServer *receives* on any connection (the third-party program's
// own requests included), one JSON object per line: {"t":ms,"conn":n,"frame":{...}}.
export function wireTapper(file) {
  if (!file) return (stream) => stream;
  const out = fs.createWriteStream(file);
  const t0 = Date.now();
  let conn = 0;
  return (stream) => {
    const id = ++conn;
    const getReader = stream.readable.getReader.bind(stream.readable);
    const readable = {
      getReader() {
        const r = getReader();
        return {
          read: () => r.read().then((res) => { if (!res.done) out.write(JSON.stringify({ t: Date.now() - t0, conn: id, frame: res.value }) + '\n'); return res; }),
          releaseLock: () => r.releaseLock?.(),
          cancel: (why) => r.cancel?.(why),
        };
      },
    };
    return { readable, writable: stream.writable };
  };
}

// The version of an npm package installed in tools/interop (null when it is not there).
export function pkgVersion(name) {
  try {
    const p = new URL(`../node_modules/${name}/package.json`, import.meta.url);
    return JSON.parse(fs.readFileSync(p, 'utf8')).version;
  } catch { return null; }
}
