// logbucket console: a single page over the daemon's own API (/api/v1/sql,
// /api/v1/tail). Rules kept throughout: every value from the daemon goes
// into the page with textContent (never as markup); no eval, no inline
// handlers or styles (the CSP forbids them); the token lives in this tab's
// sessionStorage and travels only in the Authorization header, never in a
// URL. The page's state (database, range, filters) is in the URL hash, so a
// link can be shared.

import {attachZoom, drawHistogram, drawLine} from './chart.js';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'logbucket.token';
const MAX_ROWS_SHOWN = 2000; // rows kept in the table while tailing

const DEFAULTS = {
  db: '', range: '1h', from: '', to: '', host: '', event: '',
  mode: 'words', field: 'msg', q: '', where: '', limit: 100,
};
const state = Object.assign({}, DEFAULTS);

// The current search: its range and condition, kept for paging.
let current = null;
let runSeq = 0; // a newer run makes an older one's answers stale

// ---- values: ns timestamps are BigInt (they do not fit a double) ----

const parseKeepsSource = (() => {
  let ok = false;
  try {
    JSON.parse('1', (k, v, ctx) => {
      ok = !!(ctx && ctx.source === '1');
      return v;
    });
  } catch (e) {
    ok = false;
  }
  return ok;
})();

// One JSON row. Integers (written without a point or exponent) become
// BigInt, so ts keeps its nanoseconds and an integer field stays apart from
// a float one (the daemon writes floats with a point: 1.0); where the
// browser cannot show the source of a number, only ts is kept exact.
function parseRow(line) {
  if (parseKeepsSource) {
    return JSON.parse(line, (k, v, ctx) => {
      if (typeof v === 'number' && ctx && /^-?\d+$/.test(ctx.source)) return BigInt(ctx.source);
      return v;
    });
  }
  return JSON.parse(line.replace(/^\{"(ts|t)":(-?\d+)/, '{"$1":"$2"'));
}

function big(v) {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  return BigInt(String(v));
}

function nowNs() {
  return BigInt(Date.now()) * 1000000n;
}

const UNITS = {ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n, d: 86400000000000n};

function durationNs(text) {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  return m ? BigInt(m[1]) * UNITS[m[2]] : 3600000000000n;
}

// 2026-01-02T15:04:05.123456789Z for a ns timestamp (UTC).
function fmtTime(ns) {
  const ms = ns / 1000000n - (ns < 0n && ns % 1000000n ? 1n : 0n);
  const iso = new Date(Number(ms)).toISOString(); // ...T15:04:05.123Z
  const frac = ((ns % 1000000000n) + 1000000000n) % 1000000000n;
  let f = frac.toString().padStart(9, '0').replace(/0+$/, '');
  return iso.slice(0, 19) + (f ? '.' + f : '') + 'Z';
}

// ns from "1700000000000000000" or an RFC 3339 time (up to 9 decimals).
function parseTime(text) {
  const s = text.trim();
  if (/^-?\d+$/.test(s)) return BigInt(s);
  const m = /^(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$/i.exec(s);
  if (!m) throw new Error(`bad time '${s}': use 2026-01-02T15:04:05Z or integer ns`);
  const ms = Date.parse(m[1].replace(' ', 'T') + (m[3] || 'Z'));
  if (Number.isNaN(ms)) throw new Error(`bad time '${s}'`);
  const frac = BigInt((m[2] || '').padEnd(9, '0'));
  return BigInt(ms) * 1000000n + frac;
}

// ---- SQL text ----

function lit(s) {
  return "'" + String(s).replace(/'/g, "''") + "'";
}

function ident(s) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : '"' + String(s).replace(/"/g, '""') + '"';
}

function column(name) {
  return /^[A-Za-z_][A-Za-z0-9_.]*$/.test(name) ? name : ident(name);
}

// The search box as a condition, or ''.
function searchCond() {
  const q = state.q.trim();
  if (!q) return '';
  const f = column(state.field.trim() || 'msg');
  switch (state.mode) {
    case 'like': return `${f} LIKE ${lit(q)}`;
    case 'ilike': return `${f} ILIKE ${lit(q)}`;
    case 'regex': return `${f} ~ ${lit(q)}`;
    case 'iregex': return `${f} ~* ${lit(q)}`;
    default: return `MATCH(${lit(q)})`;
  }
}

// The filters but the time range, as a list of conditions.
function filterConds() {
  const parts = [];
  if (state.host) parts.push(`host = ${lit(state.host)}`);
  if (state.event) parts.push(`event = ${lit(state.event)}`);
  const s = searchCond();
  if (s) parts.push(s);
  // a newline ends a "--" comment the user may have typed
  if (state.where.trim()) parts.push(`(${state.where}\n)`);
  return parts;
}

function rangeNow() {
  if (state.range === 'abs') {
    const lo = state.from ? parseTime(state.from) : 0n;
    const hi = state.to ? parseTime(state.to) : nowNs();
    if (hi <= lo) throw new Error('the range is empty: "from" must be before "to"');
    return {lo, hi};
  }
  const hi = nowNs();
  return {lo: hi - durationNs(state.range), hi};
}

const WIDTHS = ['1ms', '10ms', '50ms', '100ms', '250ms', '500ms', '1s', '2s', '5s', '10s', '15s',
  '30s', '1m', '2m', '5m', '10m', '15m', '30m', '1h', '2h', '3h', '6h', '12h', '1d', '2d', '7d',
  '14d', '30d', '90d', '366d'];

// A bucket width giving at most about 80 bars over the range.
function bucketWidth(lo, hi) {
  const span = hi - lo;
  for (const w of WIDTHS) if (durationNs(w) * 80n >= span) return w;
  return WIDTHS[WIDTHS.length - 1];
}

// ---- the daemon ----

let tokenWait = null;

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

function headers(extra) {
  const h = Object.assign({}, extra);
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

// Shows the token dialog; resolves once a token is entered.
// Escape closes the dialog without one: the request then fails, and the
// next one that meets a 401 asks again.
function askToken(why) {
  if (tokenWait) return tokenWait;
  tokenWait = new Promise((resolve, reject) => {
    const dlg = $('token-dialog');
    $('token-why').textContent = why;
    $('token-input').value = '';
    const finish = () => {
      $('token-form').removeEventListener('submit', done);
      dlg.removeEventListener('cancel', cancel);
      tokenWait = null;
    };
    const done = (ev) => {
      ev.preventDefault();
      const t = $('token-input').value.trim();
      if (!t) return;
      sessionStorage.setItem(TOKEN_KEY, t);
      finish();
      dlg.close();
      $('logout').classList.remove('hidden');
      resolve();
    };
    const cancel = () => {
      finish();
      reject(new Error('no token given: this daemon answers 401 without one (Run asks again)'));
    };
    $('token-form').addEventListener('submit', done);
    dlg.addEventListener('cancel', cancel);
    dlg.showModal();
  });
  return tokenWait;
}

async function errorText(resp) {
  const text = await resp.text();
  try {
    const j = JSON.parse(text);
    if (j && typeof j.error === 'string') return j.error;
  } catch (e) {
    // not JSON: the text itself
  }
  return text.trim() || `HTTP ${resp.status}`;
}

// fetch with the token; a 401 asks for a token and tries again.
async function authFetch(url, init) {
  for (;;) {
    const resp = await fetch(url, Object.assign({}, init, {headers: headers(init.headers)}));
    if (resp.status !== 401) return resp;
    const why = await errorText(resp);
    const had = token() !== '';
    sessionStorage.removeItem(TOKEN_KEY);
    $('logout').classList.add('hidden');
    await askToken(had ? `The token was refused: ${why}` : `This daemon needs a token: ${why}`);
  }
}

// Runs one statement; resolves to its rows. Logged with its time.
async function sql(stmt) {
  const t0 = performance.now();
  const entry = logQuery(stmt);
  try {
    const resp = await authFetch('/api/v1/sql', {
      method: 'POST', headers: {'Content-Type': 'text/plain; charset=utf-8'}, body: stmt,
    });
    if (!resp.ok) throw new Error(await errorText(resp));
    const text = await resp.text();
    const rows = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      const row = parseRow(line);
      if (row && typeof row.error === 'string' && Object.keys(row).length <= 2) throw new Error(row.error);
      rows.push(row);
    }
    logDone(entry, performance.now() - t0, plural(rows.length, 'row'));
    return rows;
  } catch (e) {
    logDone(entry, performance.now() - t0, e.message, true);
    throw e;
  }
}

// ---- the query log (plans and timing) ----

function logQuery(stmt) {
  const li = document.createElement('li');
  const code = document.createElement('code');
  code.textContent = stmt;
  const ms = document.createElement('span');
  ms.className = 'ms';
  ms.textContent = '…';
  li.append(code, ms);
  if (/^\s*SELECT/i.test(stmt)) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'explain';
    b.textContent = 'plan';
    b.addEventListener('click', () => explain(stmt));
    li.append(b);
  }
  const log = $('query-log');
  log.prepend(li);
  while (log.children.length > 60) log.lastChild.remove();
  return ms;
}

function logDone(ms, took, what, bad) {
  ms.textContent = `${took.toFixed(1)} ms · ${what}`;
  if (bad) ms.classList.add('err');
}

function planSummary(p) {
  const a = p.analyze || {};
  const parts = [`plan ${p.plan}`];
  if (Array.isArray(p.buckets)) parts.push(`${p.buckets.length} buckets`);
  if (p.index) parts.push(`index ${p.index}`);
  if (a.rows_scanned !== undefined) parts.push(`${a.rows_scanned} rows scanned`);
  if (a.rows_skipped) parts.push(`${a.rows_skipped} passed over by their bytes`);
  if (a.rows_matched !== undefined) parts.push(`${a.rows_matched} matched`);
  if (a.blocks_read !== undefined) parts.push(`${a.blocks_read} blocks read, ${a.blocks_skipped} skipped`);
  if (a.ms !== undefined) parts.push(`${a.ms} ms in the daemon`);
  return parts.join(' · ');
}

function jsonText(v) {
  return JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

// Indented JSON, with arrays of numbers kept on one line.
function prettyJson(v) {
  const mark = (k, x) => (typeof x === 'bigint' ? `@@big@@${x}@@` : x);
  const text = JSON.stringify(v, mark, 2).replace(/"@@big@@(-?\d+)@@"/g, '$1');
  return text.replace(/\[\s+([-\d.,\s]+?)\s+\]/g, (m, inner) => '[' + inner.replace(/\s+/g, ' ') + ']');
}

async function explain(stmt) {
  $('queries').open = true;
  try {
    const rows = await sql('EXPLAIN ANALYZE ' + stmt);
    $('explain').textContent = rows.map(prettyJson).join('\n');
    return rows[0];
  } catch (e) {
    $('explain').textContent = e.message;
    return null;
  }
}

// ---- status ----

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function status(text, bad) {
  $('status').textContent = text;
  $('status').classList.toggle('error', !!bad);
}

// ---- the URL hash ----

const HASH_KEYS = ['db', 'range', 'from', 'to', 'host', 'event', 'mode', 'field', 'q', 'where', 'limit'];

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const k of HASH_KEYS) {
    if (!p.has(k)) {
      // a link names the whole state; the database stays as picked
      if (k !== 'db') state[k] = DEFAULTS[k];
      continue;
    }
    state[k] = k === 'limit' ? Math.min(10000, Math.max(1, parseInt(p.get(k), 10) || 100)) : p.get(k);
  }
}

function writeHash() {
  const p = new URLSearchParams();
  for (const k of HASH_KEYS) {
    const v = state[k];
    if (v !== '' && v !== undefined && !(k === 'limit' && v === 100)) p.set(k, String(v));
  }
  const h = '#' + p.toString();
  if (location.hash !== h) history.replaceState(null, '', h);
}

// ---- the form ----

function setOptions(select, values, keep, anyLabel) {
  const old = keep;
  while (select.firstChild) select.firstChild.remove();
  if (anyLabel !== null) {
    const o = document.createElement('option');
    o.value = '';
    o.textContent = anyLabel;
    select.append(o);
  }
  const list = values.slice();
  if (old && !list.includes(old)) list.unshift(old);
  for (const v of list) {
    const o = document.createElement('option');
    o.value = v;
    o.textContent = v;
    select.append(o);
  }
  select.value = old || (anyLabel !== null ? '' : list[0] || '');
}

function formToState() {
  state.db = $('db').value;
  state.range = $('range').value;
  state.from = $('from').value.trim();
  state.to = $('to').value.trim();
  state.host = $('host').value;
  state.event = $('event').value;
  state.mode = $('mode').value;
  state.field = $('field').value.trim() || 'msg';
  state.q = $('search').value;
  state.where = $('where').value;
}

function stateToForm() {
  if ([...$('db').options].some((o) => o.value === state.db)) $('db').value = state.db;
  $('range').value = state.range;
  $('from').value = state.from;
  $('to').value = state.to;
  $('abs').classList.toggle('hidden', state.range !== 'abs');
  $('mode').value = state.mode;
  $('field').value = state.field;
  $('field-label').classList.toggle('hidden', state.mode === 'words');
  $('search').value = state.q;
  $('where').value = state.where;
}

let dbsLoaded = false;

async function loadDatabases() {
  const rows = await sql('SHOW DATABASES');
  const names = rows.map((r) => r.name).filter((n) => typeof n === 'string');
  if (!state.db || !names.includes(state.db)) state.db = state.db || names[0] || '';
  setOptions($('db'), names, state.db, null);
}

async function loadPickers(r) {
  if (!state.db) return;
  const db = ident(state.db);
  const when = `WHERE ts >= ${r.lo} AND ts <= ${r.hi}`;
  const [hosts, events] = await Promise.all([
    sql(`SHOW HOSTS ON ${db} ${when} LIMIT 10000`),
    sql(`SHOW EVENTS ON ${db} ${when} LIMIT 10000`),
  ]);
  const hs = hosts.map((x) => x.host);
  const es = events.map((x) => x.event);
  setOptions($('host'), hs, state.host, '(any)');
  setOptions($('event'), es, state.event, '(any)');
  const ch = $('chart-host').value;
  const ce = $('chart-event').value;
  const pick = (list, ...want) => want.find((v) => v && list.includes(v)) || '';
  setOptions($('chart-host'), hs, pick(hs, ch, state.host), null);
  setOptions($('chart-event'), es, pick(es, ce, state.event), null);
  if ($('chart-panel').open) loadChartFields();
}

// ---- results ----

function messageOf(row) {
  const f = row.fields || {};
  if (typeof f.msg === 'string') return f.msg;
  if (typeof f.message === 'string') return f.message;
  const pairs = Object.entries(row.tags || {}).concat(Object.entries(f));
  return pairs.map(([k, v]) => `${k}=${valueText(v)}`).join(' ');
}

function valueText(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && parseKeepsSource) return numberText(v);
  return String(v);
}

function kindOf(v) {
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return parseKeepsSource ? 'float' : 'number';
  return typeof v;
}

// A float as the daemon wrote it: 1.0 stays 1.0.
function numberText(v) {
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? v.toFixed(1) : String(v);
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.append(td);
  return td;
}

function rowElement(row) {
  const tr = document.createElement('tr');
  tr.className = 'row';
  cell(tr, fmtTime(big(row.ts)), 'ts');
  cell(tr, valueText(row.host));
  cell(tr, valueText(row.event));
  cell(tr, messageOf(row), 'msg');
  tr.addEventListener('click', () => toggleDetail(tr, row));
  return tr;
}

function kvTable(title, obj) {
  const t = document.createElement('table');
  const head = document.createElement('tr');
  const th = document.createElement('th');
  th.colSpan = 3;
  th.textContent = title;
  head.append(th);
  t.append(head);
  const entries = Object.entries(obj || {});
  if (!entries.length) {
    const tr = document.createElement('tr');
    cell(tr, '(none)');
    t.append(tr);
  }
  for (const [k, v] of entries) {
    const tr = document.createElement('tr');
    cell(tr, k);
    cell(tr, valueText(v), 'msg');
    cell(tr, kindOf(v), 'kind');
    t.append(tr);
  }
  return t;
}

function toggleDetail(tr, row) {
  const next = tr.nextElementSibling;
  if (next && next.classList.contains('detail')) {
    next.remove();
    tr.classList.remove('open');
    return;
  }
  tr.classList.add('open');
  const d = document.createElement('tr');
  d.className = 'detail';
  const td = document.createElement('td');
  td.colSpan = 4;
  const ts = document.createElement('div');
  ts.textContent = `ts ${big(row.ts)} (${fmtTime(big(row.ts))})`;
  const ctx = document.createElement('button');
  ctx.type = 'button';
  ctx.className = 'show-context';
  ctx.textContent = 'show context';
  ctx.addEventListener('click', () => showContext(row));
  const raw = document.createElement('details');
  const sum = document.createElement('summary');
  sum.textContent = 'JSON';
  const pre = document.createElement('pre');
  pre.textContent = prettyJson(row);
  raw.append(sum, pre);
  td.append(ts, kvTable('tags', row.tags), kvTable('fields', row.fields), ctx, raw);
  d.append(td);
  tr.after(d);
}

function sameRow(a, b) {
  return jsonText(a) === jsonText(b);
}

async function showContext(row) {
  const ts = big(row.ts);
  const db = ident(state.db);
  const h = lit(row.host);
  try {
    const [before, after] = await Promise.all([
      sql(`SELECT * FROM ${db} WHERE host = ${h} AND ts <= ${ts} ORDER BY ts DESC LIMIT 11`),
      sql(`SELECT * FROM ${db} WHERE host = ${h} AND ts > ${ts} ORDER BY ts ASC LIMIT 10`),
    ]);
    const rows = before.reverse().concat(after);
    const body = $('context-rows');
    while (body.firstChild) body.firstChild.remove();
    for (const r of rows) {
      const tr = document.createElement('tr');
      cell(tr, fmtTime(big(r.ts)), 'ts');
      cell(tr, valueText(r.event));
      cell(tr, messageOf(r), 'msg');
      if (sameRow(r, row)) tr.classList.add('hit');
      body.append(tr);
    }
    $('context-title').textContent = `host ${row.host}: ${rows.length} rows around ${fmtTime(ts)}`;
    $('context').classList.remove('hidden');
    $('context').scrollIntoView({block: 'nearest'});
  } catch (e) {
    status(e.message, true);
  }
}

function clearRows() {
  const body = $('rows').tBodies[0];
  while (body.firstChild) body.firstChild.remove();
}

function appendRows(rows) {
  const body = $('rows').tBodies[0];
  for (const r of rows) body.append(rowElement(r));
}

function selectStmt(cond, limit) {
  return `SELECT * FROM ${ident(state.db)} WHERE ${cond} ORDER BY ts DESC LIMIT ${limit}`;
}

// Rows shown so far at the oldest ts: the next page starts at that ts and
// skips them (rows of one ts come in a fixed order), so equal timestamps
// are neither lost nor shown twice. No OFFSET: the read starts at the ts.
function keysetAfter(rows) {
  if (!rows.length) return null;
  const last = big(rows[rows.length - 1].ts);
  let same = 0;
  for (let i = rows.length - 1; i >= 0 && big(rows[i].ts) === last; i--) same++;
  return {ts: last, skip: same};
}

async function loadOlder() {
  if (!current || !current.next || $('older').disabled) return;
  $('older').disabled = true; // one page at a time
  try {
    await olderPage();
  } finally {
    $('older').disabled = false;
  }
}

async function olderPage() {
  const seq = runSeq;
  const {ts, skip} = current.next;
  const cond = `${current.cond} AND ts <= ${ts}`;
  try {
    const rows = await sql(selectStmt(cond, state.limit + skip));
    if (seq !== runSeq) return;
    // skip the rows of ts already shown (they come first)
    let k = 0;
    while (k < skip && k < rows.length && big(rows[k].ts) === ts) k++;
    const page = rows.slice(k);
    appendRows(page);
    current.shown += page.length;
    if (page.length) {
      const n = keysetAfter(page);
      current.next = n.ts === ts ? {ts, skip: skip + n.skip} : n;
    }
    $('older').classList.toggle('hidden', rows.length < state.limit + skip);
    status(`${plural(current.shown, 'row')} shown, newest first`);
  } catch (e) {
    status(e.message, true);
  }
}

// ---- histogram ----

async function loadHistogram(r, cond, seq) {
  const w = bucketWidth(r.lo, r.hi);
  const wn = durationNs(w);
  const rows = await sql(`SELECT time_bucket('${w}') AS t, COUNT(*) AS n FROM ${ident(state.db)} WHERE ${cond} GROUP BY 1`);
  if (seq !== runSeq) return;
  const buckets = rows.map((x) => ({t: big(x.t), n: Number(x.n)}));
  current.hist = {lo: r.lo, hi: r.hi, width: wn};
  const bars = drawHistogram($('hist'), buckets, r.lo, r.hi, wn);
  let total = 0;
  for (const b of buckets) total += b.n;
  $('hist-lo').textContent = fmtTime(r.lo);
  $('hist-hi').textContent = fmtTime(r.hi);
  let most = 0;
  for (const b of buckets) most = Math.max(most, b.n);
  $('hist-info').textContent = `${plural(total, 'matching row')} · ${plural(bars, 'bucket')} of ${w} · highest bar ${most}`;
  $('hist').dataset.bars = String(bars);
  $('hist').dataset.total = String(total);
}

function zoom(from, to) {
  state.range = 'abs';
  state.from = fmtTime(from);
  state.to = fmtTime(to);
  stateToForm();
  run();
}

// ---- one search: histogram, first page, plan ----

async function run() {
  const seq = ++runSeq;
  stopTail();
  if (!dbsLoaded) {
    try {
      await loadDatabases(); // at the start, or after a token was refused
      dbsLoaded = true;
      stateToForm();
    } catch (e) {
      status(e.message, true);
      return;
    }
  }
  if (seq !== runSeq) return;
  writeHash();
  if (!state.db) {
    status('no database yet: write some data first (see README, "Writing")');
    return;
  }
  let r;
  try {
    r = rangeNow();
  } catch (e) {
    status(e.message, true);
    return;
  }
  const cond = [`ts >= ${r.lo}`, `ts <= ${r.hi}`].concat(filterConds()).join(' AND ');
  current = {r, cond, next: null, shown: 0, hist: null};
  clearRows();
  $('older').classList.add('hidden');
  $('context').classList.add('hidden');
  $('plan').textContent = '';
  status('searching…');
  document.body.dataset.state = 'loading';
  try {
    const stmt = selectStmt(cond, state.limit);
    const [rows] = await Promise.all([sql(stmt), loadHistogram(r, cond, seq), loadPickers(r)]);
    if (seq !== runSeq) return;
    appendRows(rows);
    current.shown = rows.length;
    current.next = rows.length >= state.limit ? keysetAfter(rows) : null;
    $('older').classList.toggle('hidden', !current.next);
    status(`${plural(rows.length, 'row')} shown, newest first`);
    document.body.dataset.state = 'ready';
    const p = await sqlPlan(stmt);
    if (seq === runSeq && p) $('plan').textContent = planSummary(p);
  } catch (e) {
    if (seq !== runSeq) return;
    status(e.message, true);
    document.body.dataset.state = 'error';
  }
  if ($('tail').checked) startTail();
}

async function sqlPlan(stmt) {
  try {
    const rows = await sql('EXPLAIN ANALYZE ' + stmt);
    return rows[0] || null;
  } catch (e) {
    return null;
  }
}

// ---- live tail: /api/v1/tail as NDJSON through fetch (it can send the
// Authorization header, which EventSource cannot) ----

let tail = null;
let reconnectTimer = null;

function tailUrl() {
  const p = new URLSearchParams();
  p.set('db', state.db);
  if (state.host) p.set('host', state.host);
  if (state.event) p.set('event', state.event);
  const where = [];
  if (state.mode === 'words' && state.q.trim()) p.set('search', state.q.trim());
  else if (searchCond()) where.push(searchCond());
  if (state.where.trim()) where.push(`(${state.where}\n)`);
  if (where.length) p.set('where', where.join(' AND '));
  // After a search over "the last ...", the tail starts where it ended, so
  // that a row written in between is not missed (the daemon sends the rows
  // since then first, then the live ones, without gap or repeat).
  if (current && state.range !== 'abs') p.set('since', String(current.r.hi + 1n));
  return '/api/v1/tail?' + p.toString();
}

function tailStatus(text, warn) {
  const s = $('tail-status');
  s.textContent = text;
  s.classList.toggle('warn', !!warn);
  s.classList.remove('hidden');
}

function prependRow(row) {
  const body = $('rows').tBodies[0];
  const tr = rowElement(row);
  tr.classList.add('fresh');
  body.prepend(tr);
  while (body.rows.length > MAX_ROWS_SHOWN) body.lastChild.remove();
}

async function startTail() {
  stopTail();
  if (!state.db) return;
  const ctl = new AbortController();
  const me = {ctl, rows: 0, dropped: 0};
  tail = me;
  tailStatus('live tail: connecting…');
  try {
    const resp = await authFetch(tailUrl(), {headers: {Accept: 'application/x-ndjson'}, signal: ctl.signal});
    if (!resp.ok) throw new Error(await errorText(resp));
    tailStatus('live tail: following new rows');
    document.body.dataset.tail = 'on';
    me.connected = true;
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += dec.decode(value, {stream: true});
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) tailLine(me, line);
      }
    }
    if (tail === me) tailStatus('live tail: the daemon ended the stream', true);
  } catch (e) {
    if (tail === me && e.name !== 'AbortError') tailStatus(`live tail: ${e.message}`, true);
  }
  if (tail === me) {
    tail = null;
    document.body.dataset.tail = 'off';
    // A stream that was flowing and ended (a restart, a proxy) is opened
    // again while the toggle is on; a refused one is not.
    if (me.connected && $('tail').checked) {
      tailStatus('live tail: the stream ended; connecting again in 3 s', true);
      reconnectTimer = setTimeout(() => {
        reconnectTimer = null;
        if ($('tail').checked && !tail) startTail();
      }, 3000);
    }
  }
}

function tailLine(me, line) {
  if (tail !== me || line.startsWith(':')) return;
  let row;
  try {
    row = parseRow(line);
  } catch (e) {
    return;
  }
  if (row.dropped !== undefined) {
    me.dropped += Number(row.dropped);
    tailStatus(`live tail: ${me.rows} new rows; ${me.dropped} dropped (the page read too slowly)`, true);
    return;
  }
  if (typeof row.error === 'string') {
    tailStatus(`live tail: ${row.error}`, true);
    return;
  }
  if (row.ts === undefined) return;
  me.rows++;
  prependRow(row);
  tailStatus(`live tail: ${me.rows} new rows` + (me.dropped ? `; ${me.dropped} dropped` : ''), !!me.dropped);
}

function stopTail() {
  if (reconnectTimer) {
    clearTimeout(reconnectTimer);
    reconnectTimer = null;
  }
  if (!tail) return;
  const t = tail;
  tail = null;
  t.ctl.abort();
  document.body.dataset.tail = 'off';
  tailStatus('live tail: stopped');
}

// ---- metric chart ----

async function loadChartFields() {
  const h = $('chart-host').value;
  const e = $('chart-event').value;
  if (!state.db) return;
  const keys = [];
  if (h) keys.push(`host = ${lit(h)}`);
  if (e) keys.push(`event = ${lit(e)}`);
  try {
    const rows = await sql(`SHOW FIELDS ON ${ident(state.db)}` + (keys.length ? ' WHERE ' + keys.join(' AND ') : ''));
    const numeric = rows.filter((x) => ['float', 'integer', 'unsigned'].includes(x.type)).map((x) => x.field);
    setOptions($('chart-field'), [...new Set(numeric)], $('chart-field').value, null);
  } catch (err) {
    status(err.message, true);
  }
}

async function drawChart() {
  const h = $('chart-host').value;
  const e = $('chart-event').value;
  const f = $('chart-field').value;
  if (!state.db || !f) {
    $('chart-info').textContent = 'pick a host, an event and a numeric field';
    return;
  }
  try {
    const r = current ? current.r : rangeNow();
    const w = bucketWidth(r.lo, r.hi);
    const c = column(f);
    const conds = [`ts >= ${r.lo}`, `ts <= ${r.hi}`];
    if (h) conds.push(`host = ${lit(h)}`);
    if (e) conds.push(`event = ${lit(e)}`);
    const rows = await sql(`SELECT time_bucket('${w}') AS t, AVG(${c}) AS avg, MIN(${c}) AS min, MAX(${c}) AS max FROM ${ident(state.db)} WHERE ${conds.join(' AND ')} GROUP BY 1`);
    const pts = rows.map((x) => ({t: big(x.t), avg: num(x.avg), min: num(x.min), max: num(x.max)}));
    pts.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    const span = drawLine($('chart'), pts, r.lo, r.hi);
    $('chart-lo').textContent = fmtTime(r.lo);
    $('chart-hi').textContent = fmtTime(r.hi);
    $('chart-info').textContent = span
      ? `${f} of ${h || 'any host'}: avg line, min..max band per ${w}; values ${span.lo} .. ${span.hi}`
      : `no numeric values of ${f} in the range`;
    $('chart').dataset.points = String(pts.length);
  } catch (err) {
    $('chart-info').textContent = err.message;
  }
}

function num(v) {
  if (typeof v === 'bigint') return Number(v);
  return typeof v === 'number' ? v : null;
}

// ---- wiring ----

function onSubmit(ev) {
  ev.preventDefault();
  formToState();
  run();
}

async function onDbChange() {
  formToState();
  state.host = '';
  state.event = '';
  run();
}

function wire() {
  $('top').addEventListener('submit', onSubmit);
  $('filters').addEventListener('submit', onSubmit);
  $('db').addEventListener('change', onDbChange);
  for (const id of ['range', 'host', 'event']) {
    $(id).addEventListener('change', () => {
      formToState();
      stateToForm();
      if (state.range !== 'abs' || id !== 'range') run();
    });
  }
  $('mode').addEventListener('change', () => {
    formToState();
    stateToForm();
  });
  $('older').addEventListener('click', loadOlder);
  $('context-close').addEventListener('click', () => $('context').classList.add('hidden'));
  $('tail').addEventListener('change', () => {
    if ($('tail').checked) startTail();
    else stopTail();
  });
  $('chart-host').addEventListener('change', loadChartFields);
  $('chart-event').addEventListener('change', loadChartFields);
  $('chart-panel').addEventListener('toggle', () => {
    if ($('chart-panel').open) loadChartFields();
  });
  $('chart-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    drawChart();
  });
  $('logout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    $('logout').classList.add('hidden');
  });
  attachZoom($('hist'), () => (current && current.hist) || null, zoom);
  window.addEventListener('hashchange', () => {
    readHash();
    stateToForm();
    run();
  });
}

async function start() {
  wire();
  readHash();
  if (token()) $('logout').classList.remove('hidden');
  stateToForm();
  await run();
}

start();
