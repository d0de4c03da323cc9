// Writes points with the official InfluxDB JavaScript client through
// /api/v2/write, the way a user's service would. Usage:
//   node 60-influx-client.js URL BUCKET
// Exits 0 once the client has flushed every point without error.
const { InfluxDB, Point } = require('@influxdata/influxdb-client');

const [url, bucket] = process.argv.slice(2);
const writeApi = new InfluxDB({ url, token: 'unused' })
  .getWriteApi('acme', bucket, 'ns', { batchSize: 50, maxRetries: 0 });
writeApi.useDefaultTags({ region: 'eu' });

const base = 1700000000000000000n;
for (let i = 0; i < 120; i++) {
  const p = new Point('http_request')
    .tag('host', `web-${i % 3}`)
    .floatField('latency', i + 0.25)
    .intField('status', 200 + (i % 5))
    .uintField('bytes', 1000 + i)
    .booleanField('cached', i % 2 === 0)
    .stringField('path', `/api/items/${i} "q"`)
    .timestamp((base + BigInt(i) * 1000000n).toString());
  writeApi.writePoint(p);
}
writeApi.close()
  .then(() => { console.log('flushed 120 points'); })
  .catch((e) => { console.error('write failed:', e); process.exit(1); });
