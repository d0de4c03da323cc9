// Sends documents with the official Elasticsearch JavaScript client (8.x)
// and its bulk helper, as a user's service or shipper would. Usage:
//   node 61-es-client.js URL
// Prints the client's product check and the helper's counts; exits 0 when
// every good document was acknowledged and the one bad document dropped.
const { Client } = require('@elastic/elasticsearch');

const [url] = process.argv.slice(2);
const client = new Client({ node: url, auth: { apiKey: 'a2V5aWQ6ZXNrM3k=' } });

async function main() {
  const info = await client.info();
  console.log(`info ${info.version.number} ${info.tagline}`);
  const docs = [];
  for (let i = 0; i < 150; i++) {
    docs.push({
      '@timestamp': new Date(Date.UTC(2024, 4, 1, 10, 0, 0, i)).toISOString(),
      host: { name: `web-${i % 3}`, ip: `10.0.0.${i % 3}` },
      message: `GET /items/${i} "q"`,
      http: { response: { status_code: 200 + (i % 5) }, took: i + 0.25 },
      ok: i % 2 === 0,
      tags: ['a', 'b'],
    });
  }
  docs.push({ '@timestamp': true, message: 'a bad timestamp' });
  let dropped = 0;
  const result = await client.helpers.bulk({
    datasource: docs,
    flushBytes: 4000,
    retries: 0,
    onDocument() { return { index: { _index: 'app' } }; },
    onDrop(d) { dropped++; console.log(`dropped ${d.status} ${d.error.type}: ${d.error.reason}`); },
  });
  console.log(`total=${result.total} successful=${result.successful} failed=${result.failed} dropped=${dropped}`);
  if (result.successful !== 150 || result.failed !== 1 || dropped !== 1) process.exit(1);
}

main().catch((e) => { console.error('bulk failed:', e); process.exit(1); });
