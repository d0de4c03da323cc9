// The npm `influx` package (node-influx, InfluxDB 1.x) against /write and
// /query: creates a database, writes points, reads them back with query,
// getMeasurements, getSeries and showRetentionPolicies, and checks every
// value. Usage: node 62-influxql-clients.js PORT DATABASE
// Prints "# ok N - what" / "# not ok N - what" lines; exits 1 if any failed.
const Influx = require('influx');
const assert = require('assert');

const [port, db] = process.argv.slice(2);
const T0 = 1700000000000; // ms
let count = 0;
let failed = 0;

// Awaits get() and compares its answer to want; an error (an HTTP error
// from the server) fails that check only.
async function check(what, get, want) {
  count++;
  let got;
  try {
    got = await get();
  } catch (e) {
    got = `${e.name}: ${e.message}`;
  }
  try {
    assert.deepStrictEqual(got, want);
    console.log(`# ok ${count} - ${what}`);
  } catch (e) {
    failed++;
    console.log(`# not ok ${count} - ${what}\n#   got:  ${JSON.stringify(got)}\n#   want: ${JSON.stringify(want)}`);
  }
}

function points() {
  const out = [];
  for (let i = 0; i < 12; i++) {
    out.push({
      measurement: 'net',
      tags: { host: `node-${i % 3}`, iface: i % 2 ? 'eth1' : 'eth0' },
      fields: { rx: i * 100, err: i % 4 === 0, rate: i / 4 },
      timestamp: T0 + i * 1000,
    });
  }
  out.push({ measurement: 'load', tags: { host: 'node-0' }, fields: { l1: 0.75 }, timestamp: T0 });
  return out;
}

// The rows of a result with time as epoch milliseconds (a number).
function plain(rows) {
  return rows.map((r) => {
    const o = { ...r };
    if (o.time instanceof Date) o.time = o.time.getTime();
    return o;
  });
}

async function main() {
  const influx = new Influx.InfluxDB({ host: '127.0.0.1', port: Number(port), database: db });
  await influx.createDatabase(db);
  await influx.writePoints(points(), { precision: 'ms' });
  await check('write then getDatabaseNames has it',
    async () => (await influx.getDatabaseNames()).includes(db), true);
  await check('getMeasurements', () => influx.getMeasurements(), ['load', 'net']);
  await check('getSeries', () => influx.getSeries(), [
    'load,host=node-0',
    'net,host=node-0,iface=eth0', 'net,host=node-0,iface=eth1',
    'net,host=node-1,iface=eth0', 'net,host=node-1,iface=eth1',
    'net,host=node-2,iface=eth0', 'net,host=node-2,iface=eth1',
  ]);
  await check('getSeries of one measurement', () => influx.getSeries({ measurement: 'load' }),
    ['load,host=node-0']);
  await check('showRetentionPolicies: autogen, infinite, default',
    async () => (await influx.showRetentionPolicies()).map((rp) => ({
      name: rp.name, duration: rp.duration, replicaN: rp.replicaN, default: rp.default,
    })), [{ name: 'autogen', duration: '0s', replicaN: 1, default: true }]);

  const win = `time >= ${T0}ms AND time < ${T0 + 12000}ms`;
  await check('query: one host\'s rows, epoch=ms', async () => plain(await influx.query(
    `SELECT "rx", "err", "rate" FROM "net" WHERE "host" = 'node-1' AND ${win}`,
    { precision: 'ms' })), [1, 4, 7, 10].map((i) => ({
    time: T0 + i * 1000, rx: i * 100, err: i % 4 === 0, rate: i / 4,
  })));

  await check('query: ORDER BY time DESC LIMIT 2, RFC 3339 times', async () => (await influx.query(
    `SELECT "rx" FROM "net" WHERE "iface" = 'eth0' AND ${win} ORDER BY time DESC LIMIT 2`))
    .map((r) => ({ time: r.time.toNanoISOString(), rx: r.rx })),
  [{ time: '2023-11-14T22:13:30.000000000Z', rx: 1000 },
    { time: '2023-11-14T22:13:28.000000000Z', rx: 800 }]);

  await check('query: aggregates GROUP BY host', async () => (await influx.query(
    `SELECT max("rx"), sum("rate") FROM "net" WHERE ${win} GROUP BY "host"`,
    { precision: 'ms' })).groups().map((g) => ({ tags: g.tags, rows: plain(g.rows) })),
  [0, 1, 2].map((h) => ({
    tags: { host: `node-${h}` },
    rows: [{ time: T0, max: (9 + h) * 100, sum: (18 + 4 * h) / 4, host: `node-${h}` }],
  })));

  await check('query: count per 4 s', async () => plain(await influx.query(
    `SELECT count("rx") FROM "net" WHERE ${win} GROUP BY time(4s) fill(0)`, { precision: 'ms' })),
  [{ time: T0, count: 4 }, { time: T0 + 4000, count: 4 }, { time: T0 + 8000, count: 4 }]);

  await check('query: two statements', async () => {
    const both = await influx.query([
      `SELECT "l1" FROM "load" WHERE ${win}`,
      'SHOW TAG KEYS FROM "net"',
    ], { precision: 'ms' });
    return [plain(both[0]), both[1].map((r) => ({ ...r }))];
  }, [[{ time: T0, l1: 0.75 }], [{ tagKey: 'host' }, { tagKey: 'iface' }]]);

  console.log(`# ${count} checks, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`# not ok - ${e.stack || e}`);
  process.exit(1);
});
