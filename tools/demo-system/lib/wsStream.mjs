// The duck-typed stream the SDK's connections read and write, over one `ws` socket: used for the
// server's side of each client (MAPServer.accept) and for the simulated agents' own connections.
// Lock-free: getWriter() never locks, so two messages produced in the same tick can never make
// the SDK think the connection died.

import WS from 'ws';

// `decode(text)`: the message to hand to the SDK, or undefined to hand nothing (a frame the caller
// consumed or dropped). `terminateOnCancel`: a cancelled reader ends the socket (the server side).
export function wsStream(ws, { decode, terminateOnCancel = false }) {
  const queue = [];
  let waiter = null;
  let ended = false;
  const push = (item) => { if (waiter) { const w = waiter; waiter = null; w(item); } else queue.push(item); };
  ws.on('message', (data) => {
    const text = Buffer.isBuffer(data) ? data.toString('utf8')
      : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
    const value = decode(text);
    if (value !== undefined) push({ value, done: false });
  });
  const end = () => { if (!ended) { ended = true; push({ value: undefined, done: true }); } };
  ws.on('close', end);
  ws.on('error', end);
  const writer = {
    write(message) {
      if (ws.readyState === WS.OPEN) ws.send(JSON.stringify(message));
      return Promise.resolve();
    },
    releaseLock() {},
    close() {
      if (ws.readyState === WS.OPEN || ws.readyState === WS.CONNECTING) ws.close(1000);
      return Promise.resolve();
    },
    abort() { ws.terminate(); return Promise.resolve(); },
    get ready() { return Promise.resolve(); },
    get desiredSize() { return 1; },
  };
  return {
    readable: {
      getReader() {
        return {
          read() {
            if (queue.length) return Promise.resolve(queue.shift());
            if (ended) return Promise.resolve({ value: undefined, done: true });
            return new Promise((resolve) => { waiter = resolve; });
          },
          releaseLock() {},
          cancel() { if (terminateOnCancel) ws.terminate(); return Promise.resolve(); },
        };
      },
    },
    writable: { getWriter: () => writer },
  };
}
