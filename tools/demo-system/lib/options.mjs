// The demo system's command line: its options and their defaults.

export const USAGE = `Usage: node demo-system.mjs [options]
  --mode stock|extended     MAPServer as published, or with the extensions (default extended)
  --scenario normal|incidents|storm  incidents: also one incident of each alert kind MAP Inspector
                            detects (needs --agents 16 or more; see README.md); storm: also a
                            whole squad falling silent at once (an alert storm in one scope)
  --port N                  TCP port on 127.0.0.1 (0 or absent: chosen by the OS)
  --agents N                total simulated agents (default 20)
  --duration S              seconds of simulated activity, 0 = forever (default 0)
  --rate R                  approx. simulated messages per second, heartbeats excluded (default 20)
  --heartbeat-ms N          heartbeat interval per agent, 0 = none (default 5000)
  --seed N                  seed of the random sequence (default 1)
  --start-delay-ms N        wait N ms after listening before starting the agents (default 0)
  --auth api-key|bearer     require authentication (needs --credential)
  --credential SECRET       the API key, or the bearer token / HS256 JWT secret
  --auth-check-ms N         how often the server looks for credentials that expire within 5 minutes
                            and sends map/auth/expiring (default 30000, as MAPServer's own)
  --clock-skew-ms N         run the server's clock N ms off (negative: behind), to test clients
  --no-memory-guard         do not drain MAPServer's never-read per-subscription queues
  --stdio stock|serialized  also serve one client session on stdin/stdout (NDJSON, as a subprocess
                            MAP system): stdout then carries only MAP messages, the listening line
                            goes to stderr, and the process ends when stdin ends. stock: the SDK's
                            stream as it is (its writer fault shows); serialized: writes in turn
  --unix PATH               also serve client sessions on a Unix domain socket (NDJSON)
  --unix-writes stock|serialized  the writes on --unix (default serialized)
  --url-file PATH           write the WebSocket URL to PATH once listening
  --agents-via-file PATH    the agents connect through another address (a tap): they start once
                            PATH exists, to the ws:// URL written in it (after --start-delay-ms)
  --verbose                 more log lines on stderr
  --help                    this text`;

// The options in `argv` (process.argv without node and the script); exits with the usage on a
// bad one (code 2) or on --help (code 0).
export function parseArgs(argv) {
  const opts = {
    mode: 'extended', scenario: 'normal', port: 0, agents: 20, duration: 0, rate: 20, heartbeatMs: 5000, seed: 1,
    startDelayMs: 0, auth: null, credential: null, authCheckMs: 30000, clockSkewMs: 0, memoryGuard: true, verbose: false,
    stdio: null, unix: null, unixWrites: 'serialized', urlFile: null, agentsViaFile: null,
  };
  const numeric = {
    '--port': 'port', '--agents': 'agents', '--duration': 'duration', '--rate': 'rate',
    '--heartbeat-ms': 'heartbeatMs', '--seed': 'seed', '--start-delay-ms': 'startDelayMs',
    '--auth-check-ms': 'authCheckMs',
  };
  const fail = (msg) => { process.stderr.write(`demo-system: ${msg}\n${USAGE}\n`); process.exit(2); };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) { value = arg.slice(eq + 1); arg = arg.slice(0, eq); }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) fail(`missing value for ${arg}`);
      return argv[++i];
    };
    if (arg === '--help' || arg === '-h') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    else if (arg === '--verbose') opts.verbose = true;
    else if (arg === '--no-memory-guard') opts.memoryGuard = false;
    else if (arg === '--mode') {
      opts.mode = next();
      if (!['stock', 'extended'].includes(opts.mode)) fail(`bad --mode ${opts.mode}`);
    } else if (arg === '--scenario') {
      opts.scenario = next();
      if (!['normal', 'incidents', 'storm'].includes(opts.scenario)) fail(`bad --scenario ${opts.scenario}`);
    } else if (arg === '--auth') {
      opts.auth = next();
      if (!['api-key', 'bearer'].includes(opts.auth)) fail(`bad --auth ${opts.auth}`);
    } else if (arg === '--credential') opts.credential = next();
    else if (arg === '--stdio' || arg === '--unix-writes') {
      const writes = next();
      if (!['stock', 'serialized'].includes(writes)) fail(`bad ${arg} ${writes}`);
      if (arg === '--stdio') opts.stdio = writes; else opts.unixWrites = writes;
    } else if (arg === '--unix') opts.unix = next();
    else if (arg === '--url-file') opts.urlFile = next();
    else if (arg === '--agents-via-file') opts.agentsViaFile = next();
    else if (arg === '--clock-skew-ms') {
      const raw = next();
      opts.clockSkewMs = Number(raw);
      if (!Number.isFinite(opts.clockSkewMs)) fail(`bad value for --clock-skew-ms: ${raw}`);
    }
    else if (numeric[arg]) {
      const raw = next();
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0) fail(`bad value for ${arg}: ${raw}`);
      opts[numeric[arg]] = n;
    } else fail(`unknown option ${arg}`);
  }
  if (opts.auth && !opts.credential) fail('--auth needs --credential');
  if (!opts.auth && opts.credential) fail('--credential needs --auth');
  opts.port = Math.floor(opts.port);
  if (opts.port > 65535) fail('bad --port');
  opts.agents = Math.max(1, Math.floor(opts.agents));
  opts.seed = Math.floor(opts.seed) >>> 0;
  return opts;
}
