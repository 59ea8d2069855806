// Logging on stderr, terse: stdout carries only the listening URL.

// When the process began: log times count from it.
export const PROCESS_T0 = Date.now() - Math.round(process.uptime() * 1000);
let verbose = false;
export function setVerbose(on) { verbose = on; }

export function log(msg) {
  const t = ((Date.now() - PROCESS_T0) / 1000).toFixed(3).padStart(8);
  process.stderr.write(`[demo ${t}s] ${msg}\n`);
}
export function vlog(msg) { if (verbose) log(msg); }
// The same message at most once per `everyMs` per key, then how many were left out.
export const rateLimitedLog = (() => {
  const last = new Map();
  return (key, msg, everyMs = 5000) => {
    const now = Date.now();
    const entry = last.get(key);
    if (entry && now - entry.t < everyMs) { entry.suppressed++; return; }
    const extra = entry && entry.suppressed ? ` (+${entry.suppressed} similar suppressed)` : '';
    last.set(key, { t: now, suppressed: 0 });
    log(msg + extra);
  };
})();
