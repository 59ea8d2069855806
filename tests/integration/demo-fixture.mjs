// CTest fixture for the demo MAP system (official MAPServer), in Node so that it runs wherever
// the tests do (Windows has no bash).
//   node demo-fixture.mjs start MODE STATEDIR [demo options...]  → STATEDIR/url, STATEDIR/pid
//   node demo-fixture.mjs stop STATEDIR
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const demo = path.join(here, '..', '..', 'tools', 'demo-system', 'demo-system.mjs');
const [command, ...args] = process.argv.slice(2);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function start(mode, dir, options) {
  fs.mkdirSync(dir, { recursive: true });
  // The previous run's output goes first: a stale URL read meanwhile made the start fail at random.
  for (const name of ['url', 'pid', 'stdout', 'stderr']) fs.rmSync(path.join(dir, name), { force: true });
  const out = fs.openSync(path.join(dir, 'stdout'), 'w');
  const err = fs.openSync(path.join(dir, 'stderr'), 'w');
  const child = spawn(process.execPath, [demo, '--mode', mode, '--port', '0', ...options], {
    detached: true, // outlives this script: the fixture's stop step ends it
    stdio: ['ignore', out, err],
    windowsHide: true,
  });
  child.unref();
  fs.writeFileSync(path.join(dir, 'pid'), String(child.pid));
  for (let i = 0; i < 300; ++i) {
    const match = fs.readFileSync(path.join(dir, 'stdout'), 'utf8').match(/ws:\/\/\S+/);
    if (match) {
      fs.writeFileSync(path.join(dir, 'url'), match[0] + '\n');
      console.log(`demo system (${mode}) at ${match[0]}`);
      return 0;
    }
    if (!alive(child.pid)) {
      console.log('demo system exited:\n' + fs.readFileSync(path.join(dir, 'stderr'), 'utf8'));
      return 1;
    }
    await sleep(100);
  }
  console.log('demo system did not print its URL within 30 s\n' + fs.readFileSync(path.join(dir, 'stderr'), 'utf8'));
  return 1;
}

function stop(dir) {
  try {
    process.kill(Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8')));
  } catch {
    // already gone, or never started
  }
  return 0;
}

let code = 2;
if (command === 'start' && args.length >= 2) code = await start(args[0], args[1], args.slice(2));
else if (command === 'stop' && args.length === 1) code = stop(args[0]);
else console.log('usage: node demo-fixture.mjs start MODE DIR [options] | stop DIR');
process.exit(code);
