#!/usr/bin/env python3
"""Writes the giant and hostile inputs of issues 16 and 42 into a folder, and with --measure reads them.

Each is a trace in the capture format of ../shared/captures (one JSON record per line, `raw` the
frame as a string), the format every reader of the product accepts:

  zstd-bomb.jsonl.zst      a zstd stream that expands to SIZE_GB GiB of zero bytes (no newline)
  line-2g.jsonl            one record whose line is 2 GiB long, then a normal record
  zstd-line-700m.jsonl.zst the same with a 700 MiB line, compressed to a few KB
  detect-64-giant.jsonl    64 lines of 32 MiB each ahead of the first normal record
  agents-10m.jsonl.zst     10 million distinct agents registering
  message-1m-to.jsonl      one message addressed to a million agents
  scope-1m-members.jsonl   a million agents joining one scope
  reverse-time.jsonl       a million events whose timestamps go backwards

usage: bench/giant_inputs.py OUT_DIR [--only NAME ...] [--bomb-gib N] [--measure CLI] [--limit-mb N]

With --measure, each input is then read by `CLI stats --trace` and `CLI state --trace`, one at a
time, and its peak resident memory printed (a table row for docs/benchmarks.md); the script
exits 1 when any peak passes --limit-mb (default 300, issue 42 item 5).
"""
import argparse
import os
import subprocess
import sys
import time

T0 = 1795252123000  # ms since the epoch, the day of the shared captures


def frame_line(seq, t_ms, frame):
    # `frame` has no quote or backslash that needs more than the escaping below.
    raw = frame.replace('\\', '\\\\').replace('"', '\\"')
    return '{"seq":%d,"dir":"recv","t":%d,"raw":"%s"}\n' % (seq, t_ms, raw)


def event(seq, t_ms, event_type, data):
    return frame_line(seq, t_ms, '{"jsonrpc":"2.0","method":"map/event","params":{"subscriptionId":"s1",'
                      '"sequenceNumber":%d,"eventId":"e%d","timestamp":%d,"event":{"type":"%s","data":%s}}}'
                      % (seq, seq, t_ms, event_type, data))


def agent(seq, t_ms, agent_id, state='idle'):
    return event(seq, t_ms, 'agent.registered',
                 '{"agent":{"id":"%s","name":"%s","role":"worker","state":"%s","metadata":{}}}'
                 % (agent_id, agent_id, state))


OPEN = '{"seq":0,"dir":"open","url":"ws://127.0.0.1:1/client","t":%d}\n' % T0


def write_lines(path, lines, compress=False):
    if compress:
        with open(path, 'wb') as out:
            zstd = subprocess.Popen(['zstd', '-q', '-3', '-c'], stdin=subprocess.PIPE, stdout=out)
            write_all(zstd.stdin, lines)
            zstd.stdin.close()
            if zstd.wait() != 0:
                sys.exit('zstd failed')
    else:
        with open(path, 'wb') as out:
            write_all(out, lines)


def write_all(out, lines):
    chunk = []
    size = 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size > (8 << 20):
            out.write(''.join(chunk).encode())
            chunk, size = [], 0
    out.write(''.join(chunk).encode())


def zstd_bomb(path, gib):
    with open(path, 'wb') as out:
        zstd = subprocess.Popen(['zstd', '-q', '-19', '-c'], stdin=subprocess.PIPE, stdout=out)
        block = bytes(64 << 20)
        for _ in range(gib * 16):
            zstd.stdin.write(block)
        zstd.stdin.close()
        if zstd.wait() != 0:
            sys.exit('zstd failed')


def giant_line(path, size):
    with open(path, 'wb') as out:
        out.write(OPEN.encode())
        out.write(b'{"seq":1,"dir":"recv","t":%d,"raw":"' % (T0 + 1))
        block = b'a' * (64 << 20)
        written = 0
        while written < size:
            n = min(len(block), size - written)
            out.write(block[:n])
            written += n
        out.write(b'"}\n')
        out.write(agent(2, T0 + 2, 'after-the-giant-line').encode())


def zstd_giant_line(path, size):
    # A small compressed file whose one record's line is `size` bytes (issue 42 item 5: 10-24 KB
    # files with a 300-700 MB line cost 0.8-2.6 GB before the line cap was cut to 64 MiB).
    with open(path, 'wb') as out:
        zstd = subprocess.Popen(['zstd', '-q', '-19', '-c'], stdin=subprocess.PIPE, stdout=out)
        zstd.stdin.write(OPEN.encode())
        zstd.stdin.write(b'{"seq":1,"dir":"recv","t":%d,"raw":"' % (T0 + 1))
        block = b'a' * (64 << 20)
        written = 0
        while written < size:
            n = min(len(block), size - written)
            zstd.stdin.write(block[:n])
            written += n
        zstd.stdin.write(b'"}\n')
        zstd.stdin.write(agent(2, T0 + 2, 'after-the-giant-line').encode())
        zstd.stdin.close()
        if zstd.wait() != 0:
            sys.exit('zstd failed')


def detect_64(path):
    with open(path, 'wb') as out:
        line = b'{"note":"' + b'x' * (32 << 20) + b'"}\n'
        for _ in range(64):
            out.write(line)
        out.write(OPEN.encode())
        out.write(agent(1, T0 + 1, 'after-64-giant-lines').encode())


def agents_10m(path, count=10_000_000):
    def lines():
        yield OPEN
        for i in range(count):
            yield agent(i + 1, T0 + i // 1000, 'a%08d' % i)
    write_lines(path, lines(), compress=True)


def message_1m(path, count=1_000_000):
    ids = ','.join('"a%07d"' % i for i in range(count))
    data = ('{"message":{"id":"m1","from":"a0000000","to":[%s],"payload":{"text":"to everyone"},'
            '"timestamp":%d}}' % (ids, T0 + 2))

    def lines():
        yield OPEN
        yield agent(1, T0 + 1, 'a0000000')
        yield event(2, T0 + 2, 'message.sent', data)
        yield agent(3, T0 + 3, 'after-the-message')
    write_lines(path, lines())


def scope_1m(path, count=1_000_000):
    def lines():
        yield OPEN
        yield event(1, T0, 'scope.created', '{"scope":{"id":"big","name":"big","metadata":{}}}')
        for i in range(count):
            yield event(i + 2, T0 + 1 + i // 1000, 'scope.agent.joined',
                        '{"scopeId":"big","agentId":"a%07d"}' % ((i * 7919) % count))
    write_lines(path, lines())


def reverse_time(path, count=1_000_000):
    agents = 1000

    def lines():
        yield OPEN
        for i in range(count):
            t = T0 + count - i  # one ms earlier each event
            state = 'busy' if i % 2 else 'idle'
            yield event(i + 1, t, 'agent.state.changed',
                        '{"agent":{"id":"a%04d","name":"a%04d","role":"worker","state":"%s","metadata":{}}}'
                        % (i % agents, i % agents, state))
    write_lines(path, lines())


def measure_all(cli, out, names, limit_mb):
    worst = 0
    print('| input | command | seconds | peak RSS | exit |')
    print('|---|---|---|---|---|')
    for name in names:
        for command in ('stats', 'state'):
            start = time.monotonic()
            child = subprocess.Popen([cli, command, '--trace', os.path.join(out, name)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.monotonic() - start
            peak_mb = usage.ru_maxrss / 1024  # Linux: KB
            worst = max(worst, peak_mb)
            code = os.waitstatus_to_exitcode(status)
            print('| `%s` | %s | %.2f | %.0f MB | %d |' % (name, command, seconds, peak_mb, code), flush=True)
    print('worst peak: %.0f MB (limit %d MB)' % (worst, limit_mb))
    return worst <= limit_mb


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('out')
    parser.add_argument('--only', nargs='*')
    parser.add_argument('--bomb-gib', type=int, default=10)
    parser.add_argument('--measure', metavar='CLI', help='map-inspector-cli to read every input with')
    parser.add_argument('--limit-mb', type=int, default=300)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    makers = {
        'zstd-bomb.jsonl.zst': lambda p: zstd_bomb(p, args.bomb_gib),
        'line-2g.jsonl': lambda p: giant_line(p, 2 << 30),
        'zstd-line-700m.jsonl.zst': lambda p: zstd_giant_line(p, 700 << 20),
        'detect-64-giant.jsonl': detect_64,
        'agents-10m.jsonl.zst': agents_10m,
        'message-1m-to.jsonl': message_1m,
        'scope-1m-members.jsonl': scope_1m,
        'reverse-time.jsonl': reverse_time,
    }
    for name, make in makers.items():
        if args.only and name not in args.only:
            continue
        path = os.path.join(args.out, name)
        if os.path.exists(path):
            print('kept', path)
            continue
        make(path + '.part')
        os.replace(path + '.part', path)
        print('wrote', path, os.path.getsize(path), 'bytes')
    if args.measure:
        names = [n for n in makers if not args.only or n in args.only]
        if not measure_all(args.measure, args.out, names, args.limit_mb):
            sys.exit(1)


if __name__ == '__main__':
    main()
