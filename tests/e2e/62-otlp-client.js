// Sends log records through the OpenTelemetry JS SDK's OTLP/HTTP exporter
// and checks that logbucket stored every one, mapped as ingest/README.md
// says, field by field.
//   node 62-otlp-client.js json|proto URL DB COUNT
// json: @opentelemetry/exporter-logs-otlp-http (OTLP/JSON) to /v1/logs;
// proto: @opentelemetry/exporter-logs-otlp-proto to /otlp/v1/logs; both
// name the database with X-Scope-OrgID: DB (the exporters drop a query
// string from the URL).
'use strict';
const [mode, url, db, countArg] = process.argv.slice(2);
const count = Number(countArg || 100);

function fail(msg) {
    console.log('FAIL ' + msg);
    process.exit(1);
}

function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
}

function sorted(o) {
    return Object.fromEntries(Object.entries(o).sort());
}

async function rows() {
    const r = await fetch(url + '/api/v1/sql', {
        method: 'POST',
        body: 'SELECT * FROM ' + db + ' WHERE ts >= 0 ORDER BY ts ASC',
    });
    const text = await r.text();
    if (r.status !== 200)
        fail('query: ' + r.status + ' ' + text);
    return text.split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const BASE_MS = 1700000000000;

function record(i) {
    // every third record has a structured body, every fifth no severityText
    const body = i % 3 === 0 ? { order: i, items: ['a', 'b'], ok: true } : 'otlp record ' + i + ' ✓';
    const rec = {
        timestamp: [Math.floor(BASE_MS / 1000) + i, 123456789],
        severityNumber: 13,
        body,
        attributes: { 'http.route': '/orders/' + i, 'http.status_code': 200 + i, ratio: i + 0.5,
                      cached: i % 2 === 0 },
    };
    if (i % 5 !== 0)
        rec.severityText = 'warning';
    if (i % 4 === 0)
        rec.context = null; // set below with a span context
    return rec;
}

function expected(i) {
    const r = record(i);
    const fields = {
        msg: typeof r.body === 'string' ? r.body : JSON.stringify(r.body),
        'http.status_code': 200 + i,
        ratio: i + 0.5,
        cached: i % 2 === 0,
        'process.pid': process.pid,
    };
    if (i % 4 === 0) {
        fields.trace_id = TRACE;
        fields.span_id = SPAN;
    }
    return {
        ts: (Math.floor(BASE_MS / 1000) + i) * 1e9 + 123456789,
        host: 'otel-host-1',
        event: 'checkout',
        tags: sorted({ level: i % 5 !== 0 ? 'warning' : 'WARN', 'http.route': '/orders/' + i,
                       'deployment.environment': 'e2e' }),
        fields: sorted(fields),
    };
}

async function send() {
    const api = require('@opentelemetry/api');
    const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
    const { resourceFromAttributes } = require('@opentelemetry/resources');
    const exporter = mode === 'json'
        ? new (require('@opentelemetry/exporter-logs-otlp-http').OTLPLogExporter)({
            url: url + '/v1/logs', headers: { 'X-Scope-OrgID': db } })
        : new (require('@opentelemetry/exporter-logs-otlp-proto').OTLPLogExporter)({
            url: url + '/otlp/v1/logs', headers: { 'X-Scope-OrgID': db } });
    const resource = resourceFromAttributes({
        'service.name': 'checkout', 'host.name': 'otel-host-1',
        'deployment.environment': 'e2e', 'process.pid': process.pid,
    });
    const provider = new LoggerProvider({
        resource,
        processors: [new BatchLogRecordProcessor(exporter, { maxExportBatchSize: 40,
                                                              scheduledDelayMillis: 100 })],
    });
    const logger = provider.getLogger('e2e', '1.0.0');
    const spanCtx = api.trace.setSpanContext(api.context.active(), {
        traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    for (let i = 0; i < count; i++) {
        const rec = record(i);
        if (rec.context === null)
            rec.context = spanCtx;
        else
            delete rec.context;
        logger.emit(rec);
    }
    await provider.forceFlush();
    await provider.shutdown();
}

(async () => {
    if (mode !== 'json' && mode !== 'proto')
        fail('mode must be json or proto');
    await send();
    const stored = await rows();
    if (stored.length !== count)
        fail('stored ' + stored.length + ' of ' + count + ' records');
    for (let i = 0; i < count; i++) {
        const r = stored[i];
        const got = { ts: r.ts, host: r.host, event: r.event, tags: sorted(r.tags),
                      fields: sorted(r.fields) };
        const want = expected(i);
        if (!same(got, want))
            fail('record ' + i + ': got ' + JSON.stringify(got) + ' want ' + JSON.stringify(want));
    }
    console.log('ok ' + mode + ' stored ' + stored.length + ' records, every field as sent');
    process.exit(0); // the SDK's timers must not keep node running
})().catch((e) => fail(String(e && e.stack || e)));
