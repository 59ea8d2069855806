// MAP over NDJSON streams (one JSON-RPC message per line), the SDK's ndJsonStream(): the demo
// system's own stdin/stdout (--stdio: one client session, as a subprocess MAP system serves its
// parent) and a Unix domain socket (--unix PATH: a session per connection).
//
// writes 'stock': the SDK's stream as it is. MAPServer (0.1.15) takes the stream writer's lock for
// each message, so an answer written while an event is being written fails ("WritableStream is
// locked") and two events at once end the session: shared/reference/map-extensions.md 1.3.
// writes 'serialized': every write goes through one writer, one after the other, which is what
// a host has to do for MAPServer to work over a stream.

import { Readable, Writable } from 'node:stream';
import net from 'node:net';
import fs from 'node:fs';

const { ndJsonStream } = await import('@multi-agent-protocol/sdk');

function serialized(stream) {
  const writer = stream.writable.getWriter();
  let chain = Promise.resolve();
  const shared = {
    write(message) { chain = chain.then(() => writer.write(message)).catch(() => {}); return chain; },
    releaseLock() {},
    close() { chain = chain.then(() => writer.close()).catch(() => {}); return chain; },
    abort(reason) { return writer.abort(reason).catch(() => {}); },
    get ready() { return writer.ready; },
    get desiredSize() { return writer.desiredSize; },
    get closed() { return writer.closed; },
  };
  return { readable: stream.readable, writable: { getWriter: () => shared } };
}

function streamOver(readable, writable, writes) {
  const base = ndJsonStream(Readable.toWeb(readable), Writable.toWeb(writable));
  return writes === 'serialized' ? serialized(base) : base;
}

// Serves one client session on this process's stdin/stdout; `onEnd` when stdin ends.
export function serveStdio(server, writes, log, onEnd) {
  const stream = streamOver(process.stdin, process.stdout, writes);
  const router = server.accept(stream, { role: 'client', transportType: 'stdio' });
  router.start().catch((err) => log(`stdio router start failed: ${err?.message}`));
  try { log(`stdio client session=${router.session.id} writes=${writes}`); } catch { /* not started */ }
  process.stdin.on('end', () => { log('stdin EOF'); onEnd(); });
  return router;
}

// Serves a client session per connection on the Unix domain socket `path`.
export function serveUnix(server, path, writes, log) {
  try { fs.unlinkSync(path); } catch { /* none there */ }
  const listener = net.createServer((socket) => {
    const router = server.accept(streamOver(socket, socket, writes), { role: 'client', transportType: 'unix' });
    router.start().catch((err) => log(`unix router start failed: ${err?.message}`));
    socket.on('error', () => socket.destroy());
    try { log(`unix client session=${router.session.id} writes=${writes}`); } catch { /* not started */ }
  });
  listener.listen(path, () => log(`listening on unix:${path}`));
  return listener;
}
