// MAP Inspector's OpenTelemetry support checked against real implementations (used by
// tests/integration/tst_otel_interop.cpp):
//
//   node otel-check.mjs sdk-spans OUT
//       Makes the spans of a small multi-agent run with the official OpenTelemetry JS SDK
//       (BasicTracerProvider, GenAI attributes as an instrumented framework would set them) and
//       writes them as OTLP/JSON with the SDK's own serializer (@opentelemetry/otlp-transformer),
//       one request on one line. Prints a JSON summary of what it made.
//
//   node otel-check.mjs validate FILE
//       Reads each line of FILE (an OTLP/JSON export) into the ExportTraceServiceRequest message
//       of the OTLP protobuf definitions (the protobufjs module the OpenTelemetry project
//       generated from opentelemetry-proto), encodes it to protobuf bytes, decodes them, and
//       compares the result with the line field by field: a field the definitions do not have,
//       a wrong type, an id that is not hex of the right length, an enum given by name, an int64
//       that is not a decimal string: each is an error. Prints a JSON summary; exit 1 on errors.
//
//   node otel-check.mjs receive OUT [--unavailable N | --down]
//       An OTLP/HTTP JSON receiver (see receive() below) for the live export's tests.
import { writeFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function sdkSpans(out) {
  const { trace, context, SpanStatusCode } = require('@opentelemetry/api');
  const { BasicTracerProvider, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');

  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'research-crew' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('crew-framework', '1.0.0');
  let clock = Date.UTC(2026, 10, 26, 9, 0, 0); // fixed times: the test checks them
  const at = (ms) => new Date((clock += ms));

  // An agent invocation as GenAI instrumentations record it.
  const invokeAgent = (parentCtx, id, name, body) => {
    const span = tracer.startSpan(`invoke_agent ${name}`, {
      kind: 0, // INTERNAL
      startTime: at(5),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.agent.id': id,
        'gen_ai.agent.name': name,
      },
    }, parentCtx);
    const ctx = trace.setSpan(parentCtx, span);
    const failed = body(ctx) === 'fail';
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: `${name} gave up: source unreachable` });
    span.end(at(20));
  };
  // A model call inside an agent, with its token usage.
  const chat = (ctx, input, output) => {
    const span = tracer.startSpan('chat claude-sonnet', {
      kind: 2, // CLIENT
      startTime: at(3),
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet',
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': output,
      },
    }, ctx);
    span.end(at(40));
  };
  const tool = (ctx, name) => {
    const span = tracer.startSpan(`execute_tool ${name}`, {
      startTime: at(2),
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name },
    }, ctx);
    span.end(at(7));
  };

  const root = tracer.startSpan('POST /research', { startTime: at(0), kind: 1 /* SERVER */ });
  const rootCtx = trace.setSpan(context.active(), root);
  invokeAgent(rootCtx, 'planner-1', 'planner', (planner) => {
    chat(planner, 1200, 300);
    invokeAgent(planner, 'researcher-1', 'researcher', (researcher) => {
      tool(researcher, 'web_search');
      chat(researcher, 2000, 500);
      chat(researcher, 800, 200);
    });
    invokeAgent(planner, 'fetcher-1', 'fetcher', (fetcher) => {
      tool(fetcher, 'http_get');
      return 'fail';
    });
    invokeAgent(planner, 'writer-1', 'writer', (writer) => {
      chat(writer, 1500, 900);
    });
  });
  root.end(at(10));

  const spans = exporter.getFinishedSpans();
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  writeFileSync(out, Buffer.from(bytes).toString('utf8') + '\n');
  console.log(JSON.stringify({ spans: spans.length, file: out }));
}

// ---- validation --------------------------------------------------------------------------

function validate(file) {
  const { opentelemetry } = require('otlp-protobuf-definitions/build/src/generated/root.js');
  const Request = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  const errors = [];
  const problems = {}; // how many of each kind of error (the first 50 are listed in full)
  const summary = { lines: 0, spans: 0, events: 0, attributes: 0, problems, errors };
  const fail = (where, what) => {
    const kind = what.split(':')[0];
    problems[kind] = (problems[kind] || 0) + 1;
    if (errors.length < 50) errors.push(`${where}: ${what}`);
  };

  // The OTLP JSON mapping differs from protobuf's canonical one in ids (hex, not base64) and
  // enums (numbers only); both are checked here, then turned into what protobufjs reads.
  const idFields = { traceId: 32, spanId: 16, parentSpanId: 16 };
  const enumFields = new Set(['kind', 'code']);
  const toProtoJson = (value, path) => {
    if (Array.isArray(value)) return value.map((v, i) => toProtoJson(v, `${path}[${i}]`));
    if (value === null || typeof value !== 'object') return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      const where = `${path}.${k}`;
      if (k in idFields) {
        const hex = new RegExp(`^[0-9a-f]{${idFields[k]}}$`);
        if (typeof v !== 'string' || (!(k === 'parentSpanId' && v === '') && !hex.test(v))) fail(where, `not ${idFields[k]} lower-case hex digits: ${JSON.stringify(v)}`);
        else if (/^0+$/.test(v)) fail(where, 'all zero (no id)');
        out[k] = Buffer.from(v, 'hex').toString('base64');
        continue;
      }
      if (enumFields.has(k) && !Number.isInteger(v)) fail(where, `enum not a number: ${JSON.stringify(v)}`);
      if (/UnixNano$/.test(k) && !(typeof v === 'string' && /^[0-9]+$/.test(v))) fail(where, `int64 not a decimal string: ${JSON.stringify(v)}`);
      if (k === 'intValue' && !(typeof v === 'string' && /^-?[0-9]+$/.test(v))) fail(where, `int64 not a decimal string: ${JSON.stringify(v)}`);
      if (k === 'key') summary.attributes++;
      out[k] = toProtoJson(v, where);
    }
    return out;
  };
  // Back from protobufjs' object to the OTLP JSON mapping, to compare with the line.
  const fromProtoJson = (value) => {
    if (Array.isArray(value)) return value.map(fromProtoJson);
    if (value === null || typeof value !== 'object') return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = k in idFields ? Buffer.from(v, 'base64').toString('hex') : fromProtoJson(v);
    return out;
  };
  const sameTree = (a, b, path) => {
    if (Array.isArray(a) || Array.isArray(b)) {
      if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return fail(path, 'array differs after a protobuf round trip');
      a.forEach((x, i) => sameTree(x, b[i], `${path}[${i}]`));
      return;
    }
    if (a && typeof a === 'object') {
      if (!b || typeof b !== 'object') return fail(path, 'object lost in a protobuf round trip');
      for (const k of Object.keys(a)) {
        if (!(k in b)) fail(`${path}.${k}`, 'no such field in the OTLP definitions (or a default value written)');
        else sameTree(a[k], b[k], `${path}.${k}`);
      }
      return;
    }
    if (a !== b && String(a) !== String(b)) fail(path, `${JSON.stringify(a)} read back as ${JSON.stringify(b)}`);
  };

  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
  lines.forEach((line, i) => {
    const where = `line ${i + 1}`;
    summary.lines++;
    let json;
    try { json = JSON.parse(line); } catch (e) { return fail(where, `not JSON: ${e.message}`); }
    const protoJson = toProtoJson(json, where);
    const verifyError = Request.verify(Request.toObject(Request.fromObject(protoJson)));
    if (verifyError) fail(where, `verify: ${verifyError}`);
    let decoded;
    try {
      const message = Request.fromObject(protoJson);
      decoded = Request.decode(Request.encode(message).finish());
    } catch (e) { return fail(where, `protobuf: ${e.message}`); }
    const back = fromProtoJson(Request.toObject(decoded, { longs: String, enums: Number, bytes: String, defaults: false, arrays: false }));
    sameTree(json, back, where);
    for (const rs of decoded.resourceSpans) for (const ss of rs.scopeSpans) {
      summary.spans += ss.spans.length;
      for (const s of ss.spans) summary.events += s.events.length;
    }
  });
  console.log(JSON.stringify(summary));
  process.exit(errors.length ? 1 : 0);
}

// ---- a receiver ---------------------------------------------------------------------------

// An OTLP/HTTP JSON receiver on 127.0.0.1 (a free port), as a Collector's otlp receiver answers:
// POST /v1/traces with Content-Type application/json. Each body it accepts is appended to OUT as
// one line (for `validate`), and each request is told on stdout as a JSON line: {"request": n,
// "status": code, "spans": k, "header": the x-mapi-test header's value or null}. The first line
// is {"ready": true, "port": P}. --unavailable N: the first N requests are answered 503 with Retry-After: 1;
// --down: every request is. --discard: a benchmark's sink, answering 200 to everything and
// keeping nothing (its counts on stdout at SIGTERM).
async function receive(out, args) {
  const http = await import('node:http');
  const { appendFileSync, writeFileSync: write } = await import('node:fs');
  write(out, '');
  const unavailable = args.includes('--down') ? Infinity : Number(args[args.indexOf('--unavailable') + 1] || 0) || 0;
  const discard = args.includes('--discard'); // a benchmark's sink: counts, keeps nothing, parses nothing
  let discardedBytes = 0, discardedRequests = 0;
  if (discard) process.on('SIGTERM', () => { console.log(JSON.stringify({ discardedRequests, discardedBytes })); process.exit(0); });
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (discard) {
        discardedRequests++;
        for (const c of chunks) discardedBytes += c.length;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        return;
      }
      const n = ++requests;
      const tell = (status, spans) => console.log(JSON.stringify({ request: n, status, spans, header: req.headers['x-mapi-test'] ?? null }));
      if (req.method !== 'POST' || req.url !== '/v1/traces') { res.writeHead(404).end(); return tell(404, 0); }
      if (!String(req.headers['content-type']).startsWith('application/json')) { res.writeHead(415).end(); return tell(415, 0); }
      if (n <= unavailable) {
        res.writeHead(503, { 'Retry-After': '1', 'Content-Type': 'application/json' }).end('{"code":14,"message":"unavailable"}');
        return tell(503, 0);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      let body;
      try { body = JSON.parse(text); } catch { res.writeHead(400).end(); return tell(400, 0); }
      let spans = 0;
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans += (ss.spans ?? []).length;
      appendFileSync(out, text.trimEnd() + '\n'); // as sent: validate sees the bytes themselves
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      tell(200, spans);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ ready: true, port: server.address().port })));
  if (!discard) process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

const [command, arg, ...rest] = process.argv.slice(2);
if (command === 'sdk-spans' && arg) sdkSpans(arg);
else if (command === 'validate' && arg) validate(arg);
else if (command === 'receive' && arg) receive(arg, rest);
else {
  console.error('usage: node otel-check.mjs sdk-spans OUT | validate FILE | receive OUT [--unavailable N | --down]');
  process.exit(2);
}
