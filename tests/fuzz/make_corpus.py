#!/usr/bin/env python3
"""Seed corpora for the harnesses of tests/fuzz, from real data (scripts/fuzz.sh runs this).

    make_corpus.py --out DIR --data tests/data [--shared ../shared] [--sample FILE.jsonl.zst]
                   [--zstd PATH] [--gzip PATH]

Writes DIR/<harness>/<sha1 of the content>: running it again adds nothing twice, and the inputs
libFuzzer adds to the same folders (named the same way) stay. Sources:

- captures (tests/data/*.ndjson, shared/captures/*.ndjson: seq/dir/t/raw records of real frames
  from the official server and the SDK's TestServer);
- seed-format logs (tests/data/import);
- the sample trace (resources/sample/demo-system.jsonl.zst, a MAP Inspector trace in zstd frames);
- gzip and zstd versions made here (zstd only when its command-line tool is given).
"""
import argparse
import base64
import gzip
import hashlib
import json
import struct
import subprocess
import sys
from pathlib import Path

# The ids FuzzSupport.h sends the client's requests with (kClientRequests): a capture's response
# gets the id of its request's method, so that the harnesses interpret it as that answer.
REQUEST_IDS = {
    "map/connect": 1,
    "map/subscribe": 2,
    "map/agents/list": 3,
    "map/scopes/list": 4,
    "map/scopes/members": 5,
    "map/replay": 6,
    "map/agents/get": 7,
    "map/authenticate": 8,
    "map/session/info": 11,
}
FILTERED_AGENTS_LIST_ID = 9  # map/agents/list with a filter (ProtocolPipeline::interpretResult)
PARTIAL_SCOPES_LIST_ID = 10  # map/scopes/list under a parent

# The harnesses' -max_len in scripts/fuzz.sh.
MAX_FRAME = 64 * 1024
MAX_FRAMES_INPUT = 256 * 1024
MAX_FILE = 1024 * 1024

PER_SHAPE = 6          # seeds kept per frame shape (method, event type, answered method)
FRAMES_PER_CHUNK = (200, 24)  # frames per fuzz_frames seed: long runs, and short ones (fast)
CHUNKS_PER_CAPTURE = 12


class Corpus:
    def __init__(self, root, name):
        self.dir = root / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.added = 0
        self.seen = set()

    def add(self, data, limit):
        if not data or len(data) > limit:
            return
        digest = hashlib.sha1(data).hexdigest()
        if digest in self.seen:
            return
        self.seen.add(digest)
        path = self.dir / digest
        if not path.exists():
            path.write_bytes(data)
        self.added += 1


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def loads(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def read_capture(path):
    """The records of a capture, in order; [] when the file is no capture (an agents' log)."""
    records = []
    for line in path.read_bytes().splitlines():
        record = loads(line)
        if isinstance(record, dict) and "dir" in record and ("raw" in record or "t" in record):
            records.append(record)
    return records


def frame_bytes(record):
    raw = record.get("raw")
    return raw.encode("utf-8") if isinstance(raw, str) else None


def answered_id(method, params):
    if method == "map/agents/list" and isinstance(params, dict) and any(
            k in params for k in ("filter", "state", "role", "sessionId", "cursor")):
        return FILTERED_AGENTS_LIST_ID
    if method == "map/scopes/list" and isinstance(params, dict) and any(
            k in params for k in ("parentId", "parent", "ancestorId")):
        return PARTIAL_SCOPES_LIST_ID
    return REQUEST_IDS.get(method)


def received_frames(records):
    """(shape, frame, frame as fuzz_frame should see it) for every text frame received, in order."""
    pending = {}  # request id (as JSON) -> (method, params)
    out = []
    for record in records:
        frame = frame_bytes(record)
        if frame is None or record.get("binary"):
            continue
        message = loads(frame)
        if record.get("dir") == "send":
            if isinstance(message, dict) and "method" in message and "id" in message:
                pending[json.dumps(message["id"])] = (message["method"], message.get("params"))
            continue
        if record.get("dir") != "recv":
            continue
        if not isinstance(message, dict):
            out.append((("not an object", type(message).__name__), frame, frame))
            continue
        if message.get("method") == "map/event":
            params = message.get("params")
            event = params.get("event") if isinstance(params, dict) else None
            kind = event.get("type") if isinstance(event, dict) else None
            out.append((("event", str(kind)), frame, frame))
        elif "method" in message:
            out.append((("notification", str(message["method"])), frame, frame))
        elif "result" in message or "error" in message:
            request = pending.pop(json.dumps(message.get("id")), None)
            method = request[0] if request else None
            rewritten = frame
            new_id = answered_id(*request) if request else None
            if new_id is not None:
                message = dict(message)
                message["id"] = new_id
                rewritten = compact(message)
            outcome = "result" if "result" in message else "error"
            out.append(((outcome, str(method), new_id), frame, rewritten))
        else:
            out.append((("other", tuple(sorted(message))), frame, frame))
    return out


def frames_seeds(records, corpus):
    """fuzz_frames: runs of a capture's frames, sent ones marked '>', after two control bytes."""
    lines = []
    for record in records:
        frame = frame_bytes(record)
        if frame is None or record.get("binary") or b"\n" in frame or b"\0" in frame:
            continue
        if record.get("dir") == "send":
            lines.append(b">" + frame)
        elif record.get("dir") == "recv":
            lines.append(frame)
    chunks = []
    for size in FRAMES_PER_CHUNK:
        runs = [lines[i:i + size] for i in range(0, len(lines), size)]
        if len(runs) > CHUNKS_PER_CAPTURE:  # the first (the handshake), and others spread out
            step = len(runs) / CHUNKS_PER_CAPTURE
            runs = [runs[int(i * step)] for i in range(CHUNKS_PER_CAPTURE)]
        chunks += runs
    for n, chunk in enumerate(chunks):
        body = b"\n".join(chunk)
        while len(body) + 2 > MAX_FRAMES_INPUT and len(chunk) > 1:
            chunk = chunk[: len(chunk) // 2]
            body = b"\n".join(chunk)
        drop_before = [0xFF, len(chunk) // 2, 1, 0xFF][n % 4] & 0xFF
        flags = n % 16
        corpus.add(bytes([drop_before, flags]) + body, MAX_FRAMES_INPUT)


def ndjson_seeds(records, corpus):
    """fuzz_ndjson: a capture's received frames as a stream would carry them (a line each), with
    a child's log line and a CRLF among them, after the cap and read-size bytes."""
    frames = [f for f in (frame_bytes(r) for r in records if r.get("dir") == "recv") if f and b"\n" not in f]
    for n, start in enumerate(range(0, min(len(frames), 40), 8)):
        body = b"\n".join(frames[start:start + 8])
        body = b"server starting\n" + body.replace(b"\n", b"\r\n", 1) + b"\n\n"
        corpus.add(bytes([(n * 37) & 0xFF, (n * 11 + 3) & 0xFF]) + body[:65534], 65536)


def operator_seeds(data_dir, corpus):
    """fuzz_operator_inputs: links, rules documents, bundle headers and texts with secrets, each
    after the byte that picks its parser."""
    links = [b"map-inspector://open?file=/tmp/run.jsonl.zst&t=1795252123000&agent=worker-1",
             b"map-inspector://open?file=/home/op/a%20b%26c.jsonl&message=m-1", b"map-inspector:open?file=C:/x.jsonl"]
    rules = [b'{"rules": {"stalled": {"afterS": 10}}}',
             b'{"heartbeatIntervalS": 5, "rules": {"loop": {"repeats": 6}, "unresponsive": {"enabled": false}}}']
    headers = [b'{"format":"map-inspector-trace","version":2,"bundle":{"note":"n","from":1,"to":2,"redaction":{"replacements":3}}}']
    texts = [b"Authorization: Bearer sk-live-0123456789abcdef", b'ERROR {\\"api_key\\":\\"k-123456\\"}',
             b"AWS_SECRET_ACCESS_KEY=abc123def456 token=REDACTED", b'["X-Api-Key","k-abcdef0123"]']
    for n, items in enumerate((links, rules, headers, texts)):
        for item in items:
            corpus.add(bytes([n]) + item, 16384)
    for path in sorted(data_dir.glob("*rules*.json")):
        corpus.add(bytes([1]) + path.read_bytes()[:16383], 16384)


def trace_lines(sample, zstd):
    """The sample trace's lines (decompressed with the zstd tool), or []."""
    if not sample or not zstd or not sample.exists():
        return []
    done = subprocess.run([zstd, "-q", "-d", "-c", str(sample)], stdout=subprocess.PIPE, check=False)
    return done.stdout.splitlines() if done.returncode == 0 else []


def record_line(t, direction, frame=None, raw=None, binary=False, conn=1):
    """A record line as encodeRecordLine writes it (docs/trace-format.md)."""
    head = b'{"t":%d,"dir":%s,"conn":%d' % (t, compact(direction), conn)
    if frame is not None:
        return head + b',"frame":' + frame + b"}"
    if binary:
        return head + b',"binary":true,"encoding":"base64","raw":"' + base64.b64encode(raw) + b'"}'
    try:
        return head + b',"raw":' + compact(raw.decode("utf-8")) + b"}"
    except UnicodeDecodeError:
        return head + b',"encoding":"base64","raw":"' + base64.b64encode(raw) + b'"}'


ACTION_STEPS = ["created", "answered", "answer-lost", "failed", "unsupported", "fallback"]
ACTION_KINDS = [("inject", "map/inject"), ("stop", "map/agents/stop"), ("suspend", "map/agents/suspend"),
                ("resume", "map/agents/resume"), ("send", "map/send")]


def trace_record_seeds(captures, sample_lines, corpus):
    header = (b'{"format":"map-inspector-trace","version":2,"app":"0.1.0","startedAt":1795251940000,'
              b'"url":"ws://127.0.0.1:8080/client"}')
    header_v1 = header.replace(b'"version":2', b'"version":1')
    t = 1795251940000
    per_shape = {}
    written = []  # trace-format lines made from the captures' frames
    for records in captures:
        for record in records:
            line = compact(record)
            direction = record.get("dir")
            frame = frame_bytes(record)
            message = loads(frame) if frame else None
            kind = None
            if isinstance(message, dict):
                params = message.get("params")
                event = params.get("event") if isinstance(params, dict) else None
                kind = event.get("type") if isinstance(event, dict) else message.get("method")
            shape = (direction, bool(record.get("binary")), str(kind), message is None)
            if per_shape.get(shape, 0) >= PER_SHAPE:
                continue
            per_shape[shape] = per_shape.get(shape, 0) + 1
            corpus.add(line, MAX_FRAME)  # the capture's own line
            t += 7
            if frame is None:
                continue
            if direction in ("send", "recv") and not record.get("binary") and message is not None \
                    and b"\n" not in frame and b"\r" not in frame:
                written.append(record_line(t, direction, frame=frame))
            written.append(record_line(t, direction or "note", raw=frame, binary=bool(record.get("binary"))))
    for line in written:
        corpus.add(line, MAX_FRAME)
    actions = []
    for n, (kind, method) in enumerate(ACTION_KINDS):
        for step in ACTION_STEPS:
            action = {"step": step, "id": "act-%d" % n, "kind": kind, "agentId": "agent-1", "method": method,
                      "params": {"agentId": "agent-1", "reason": "fuzz"}, "note": "", "detail": "",
                      "messageId": ""}
            actions.append(b'{"t":%d,"dir":"action","conn":1,"action":%s}' % (t, compact(action)))
    for line in actions:
        corpus.add(line, MAX_FRAME)
    binary_v1 = b'{"t":%d,"dir":"recv","conn":1,"binary":true,"raw":"%s"}' % (t, base64.b64encode(b"\x00\x01binary"))
    corpus.add(header_v1 + b"\n" + binary_v1, MAX_FRAME)  # base64 without "encoding": a version 1 trace
    corpus.add(header + b"\n" + b"\n".join(written[:6] + actions[:2]), MAX_FRAME)
    corpus.add(b"\n".join(written[:8]) + b"\r\n" + header + b"\n" + b"\n".join(written[8:12]), MAX_FRAME)
    # The sample trace: the header, and one line of each kind of record and event.
    sample_shapes = {}
    for line in sample_lines:
        record = loads(line)
        if not isinstance(record, dict):
            continue
        frame = record.get("frame")
        kind = None
        if isinstance(frame, dict):
            params = frame.get("params")
            event = params.get("event") if isinstance(params, dict) else None
            kind = event.get("type") if isinstance(event, dict) else frame.get("method")
        shape = (record.get("dir"), str(kind), "format" in record)
        if sample_shapes.get(shape, 0) >= 2:
            continue
        sample_shapes[shape] = sample_shapes.get(shape, 0) + 1
        corpus.add(line, MAX_FRAME)
    if sample_lines:
        corpus.add(b"\n".join(sample_lines[:40]), MAX_FRAME)


def compressors(zstd, gzip_tool):
    def zstd_of(data, *options):
        if not zstd:
            return None
        done = subprocess.run([zstd, "-q", "-c", *options, "-"], input=data, stdout=subprocess.PIPE, check=False)
        return done.stdout if done.returncode == 0 else None

    def gzip_of(data):
        if gzip_tool:
            done = subprocess.run([gzip_tool, "-c", "-n", "-6"], input=data, stdout=subprocess.PIPE, check=False)
            if done.returncode == 0:
                return done.stdout
        return gzip.compress(data, mtime=0)

    return zstd_of, gzip_of


def skippable_frame(payload):
    return struct.pack("<II", 0x184D2A50, len(payload)) + payload


def file_seeds(data_dir, shared, sample, sample_lines, zstd_of, gzip_of, imports, decompress):
    files = sorted(data_dir.glob("*.ndjson")) + sorted((data_dir / "import").glob("*"))
    if shared and (shared / "captures").is_dir():
        files += sorted((shared / "captures").glob("*.ndjson"))
    texts = []
    for path in files:
        if path.is_file():
            data = path.read_bytes()
            imports.add(data, MAX_FILE)
            texts.append(data)
    if sample and sample.exists():
        compressed = sample.read_bytes()
        imports.add(compressed, MAX_FILE)
        decompress.add(compressed, MAX_FILE)
        decompress.add(compressed[: len(compressed) // 3], MAX_FILE)  # cut in a frame
    if sample_lines:
        imports.add(b"\n".join(sample_lines[:300]) + b"\n", MAX_FILE)   # a plain trace
        part = b"\n".join(sample_lines[:60]) + b"\n"
        imports.add(part + part, MAX_FILE)                                # two parts, cat'ed

    # The seed-format logs in their other shapes: lines <-> one JSON array, CRLF, compressed.
    for path in sorted((data_dir / "import").glob("*")):
        data = path.read_bytes()
        parsed = loads(data)
        if isinstance(parsed, list):
            imports.add(b"\n".join(compact(item) for item in parsed) + b"\n", MAX_FILE)
        else:
            items = [loads(line) for line in data.splitlines() if line.strip()]
            if items and all(isinstance(item, dict) for item in items):
                imports.add(b"[\n" + b",\n".join(compact(item) for item in items) + b"\n]\n", MAX_FILE)
        imports.add(data.replace(b"\n", b"\r\n"), MAX_FILE)
        imports.add(data[: len(data) * 2 // 3], MAX_FILE)  # cut mid-line

    small = [text[:64 * 1024] for text in texts[:12]]
    for text in small:
        gz = gzip_of(text)
        imports.add(gz, MAX_FILE)
        decompress.add(gz, MAX_FILE)
        decompress.add(gz + gzip_of(b'{"more":"member"}\n'), MAX_FILE)  # two gzip members
        decompress.add(gz[: len(gz) // 2], MAX_FILE)                     # truncated
        for options in ((), ("-19",), ("--no-check",)):
            zst = zstd_of(text, *options)
            if zst is None:
                continue
            imports.add(zst, MAX_FILE)
            decompress.add(zst, MAX_FILE)
        zst, second, empty = zstd_of(text), zstd_of(b'{"second":"frame"}\n'), zstd_of(b"")
        if zst and second and empty:
            decompress.add(zst + second, MAX_FILE)                             # two frames
            decompress.add(zst + skippable_frame(b"skip me") + zst, MAX_FILE)  # a skippable frame between
            decompress.add(zst[: len(zst) // 2], MAX_FILE)                     # truncated
            imports.add(zst + empty, MAX_FILE)                                 # an empty frame after
    decompress.add(b'{"plain":"text"}\n', MAX_FILE)
    empty_zst = zstd_of(b"")
    if empty_zst:
        decompress.add(empty_zst, MAX_FILE)
    decompress.add(gzip_of(b""), MAX_FILE)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--shared", type=Path)
    parser.add_argument("--sample", type=Path)
    parser.add_argument("--zstd", default="")
    parser.add_argument("--gzip", default="")
    args = parser.parse_args()

    names = ["fuzz_frame", "fuzz_frames", "fuzz_trace_record", "fuzz_import", "fuzz_decompress", "fuzz_ndjson", "fuzz_operator_inputs"]
    corpora = {name: Corpus(args.out, name) for name in names}

    capture_files = sorted(args.data.glob("*.ndjson"))
    if args.shared and (args.shared / "captures").is_dir():
        capture_files += sorted((args.shared / "captures").glob("*.ndjson"))
    captures = [records for records in (read_capture(path) for path in capture_files) if records]

    per_shape = {}
    for records in captures:
        for shape, _, frame in received_frames(records):
            if per_shape.get(shape, 0) < PER_SHAPE:
                per_shape[shape] = per_shape.get(shape, 0) + 1
                corpora["fuzz_frame"].add(frame, MAX_FRAME)
        frames_seeds(records, corpora["fuzz_frames"])
        ndjson_seeds(records, corpora["fuzz_ndjson"])

    sample_lines = trace_lines(args.sample, args.zstd)
    trace_record_seeds(captures, sample_lines, corpora["fuzz_trace_record"])
    zstd_of, gzip_of = compressors(args.zstd, args.gzip)
    file_seeds(args.data, args.shared, args.sample, sample_lines, zstd_of, gzip_of, corpora["fuzz_import"],
               corpora["fuzz_decompress"])

    operator_seeds(args.data, corpora["fuzz_operator_inputs"])

    for name in names:
        print("corpus %-18s %5d seeds (%d files in %s)" % (
            name, corpora[name].added, sum(1 for _ in corpora[name].dir.iterdir()), corpora[name].dir))
    if not captures:
        print("make_corpus.py: no captures found in %s" % args.data, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
