// Sends log records through a real Loki client and checks that logbucket
// stored every one of them, mapped as ingest/README.md says, field by field.
//   node 61-loki-clients.js pino|winston URL DB COUNT
// pino-loki sends JSON; winston-loki sends snappy-compressed protobuf.
'use strict';
const os = require('os');
const [mode, url, db, countArg] = process.argv.slice(2);
const count = Number(countArg || 100);

function fail(msg) {
    console.log('FAIL ' + msg);
    process.exit(1);
}

function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
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

async function sendPino() {
    const pino = require('pino');
    const { pinoLoki } = require('pino-loki');
    const transport = pinoLoki({
        host: url,
        batching: { interval: 0.2, maxBufferSize: 0 },
        labels: { job: 'pino-e2e', env: 'test' },
        headers: { 'X-Scope-OrgID': db },
        silenceErrors: false,
    });
    const logger = pino({ level: 'info' }, transport);
    for (let i = 0; i < count; i++)
        logger.info({ i, user: { name: 'u' + i }, meta: { request_id: 'r-' + i } },
                    'pino record ' + i + ' "quoted" é');
    await new Promise((res) => setTimeout(res, 500));
    transport.end();
    await new Promise((res) => setTimeout(res, 800));
}

function checkPino(stored) {
    const host = os.hostname();
    const seen = new Set();
    for (const r of stored) {
        const line = JSON.parse(r.fields.msg);
        const i = line.i;
        if (seen.has(i))
            fail('record ' + i + ' stored twice');
        seen.add(i);
        const want = {
            ts: line.time * 1e6,
            host,
            event: 'pino-e2e',
            tags: { env: 'test', level: 'info', request_id: 'r-' + i },
        };
        const got = { ts: r.ts, host: r.host, event: r.event, tags: r.tags };
        if (!same(Object.keys(r.fields), ['msg']))
            fail('record ' + i + ' fields: ' + JSON.stringify(r.fields));
        if (line.msg !== 'pino record ' + i + ' "quoted" é' || line.user.name !== 'u' + i ||
            line.meta.request_id !== 'r-' + i || line.hostname !== undefined)
            fail('record ' + i + ' line: ' + r.fields.msg);
        // tags come back sorted by key
        const sortedTags = Object.fromEntries(Object.entries(got.tags).sort());
        got.tags = sortedTags;
        if (!same(got, want))
            fail('record ' + i + ': got ' + JSON.stringify(got) + ' want ' + JSON.stringify(want));
    }
}

async function sendWinston() {
    const winston = require('winston');
    const LokiTransport = require('winston-loki');
    let errors = 0;
    const transport = new LokiTransport({
        host: url,
        json: false, // protobuf + snappy
        replaceTimestamp: false,
        batching: true,
        interval: 0.2,
        labels: { job: 'winston-e2e', host: 'web-7', region: 'eu-west' },
        headers: { 'X-Scope-OrgID': db },
        onConnectionError: (e) => { errors++; console.log('connection error ' + e); },
    });
    if (transport.batcher.options.json)
        fail('winston-loki fell back to JSON: snappy is not available');
    const logger = winston.createLogger({ transports: [transport] });
    const sent = [];
    for (let i = 0; i < count; i++) {
        const ts = 1700000000000 + i * 7;
        logger.info({ message: 'winston record ' + i + ' ünïcode', timestamp: new Date(ts).toISOString() });
        sent.push(ts);
    }
    await new Promise((res) => setTimeout(res, 600));
    await transport.flush();
    await new Promise((res) => setTimeout(res, 300));
    if (errors)
        fail(errors + ' connection errors');
    return sent;
}

function checkWinston(stored) {
    const seen = new Set();
    for (const r of stored) {
        // winston-loki's line: the message, a space, the other members as JSON
        const m = /^winston record (\d+) ünïcode \{"level":"info"\}$/.exec(r.fields.msg);
        if (!m)
            fail('unexpected msg ' + JSON.stringify(r.fields.msg));
        const i = Number(m[1]);
        if (seen.has(i))
            fail('record ' + i + ' stored twice');
        seen.add(i);
        const want = {
            ts: (1700000000000 + i * 7) * 1e6,
            host: 'web-7',
            event: 'winston-e2e',
            tags: { level: 'info', region: 'eu-west' },
            fields: { msg: 'winston record ' + i + ' ünïcode {"level":"info"}' },
        };
        const got = { ts: r.ts, host: r.host, event: r.event,
                      tags: Object.fromEntries(Object.entries(r.tags).sort()), fields: r.fields };
        if (!same(got, want))
            fail('record ' + i + ': got ' + JSON.stringify(got) + ' want ' + JSON.stringify(want));
    }
}

(async () => {
    if (mode === 'pino')
        await sendPino();
    else if (mode === 'winston')
        await sendWinston();
    else
        fail('mode must be pino or winston');
    const stored = await rows();
    if (stored.length !== count)
        fail('stored ' + stored.length + ' of ' + count + ' records');
    if (mode === 'pino')
        checkPino(stored);
    else
        checkWinston(stored);
    console.log('ok ' + mode + ' stored ' + stored.length + ' records, every field as sent');
    process.exit(0); // winston-loki's batch timer would keep node running
})().catch((e) => fail(String(e && e.stack || e)));
