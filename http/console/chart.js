// SVG charts of the console: the histogram of matching rows per time bucket
// (click a bar or drag across to zoom) and a line of a numeric field with
// its min..max band. Elements are made with createElementNS and every label
// is set with textContent: nothing here parses markup.

const NS = 'http://www.w3.org/2000/svg';
const W = 1000; // viewBox width; heights come from each svg's viewBox

function el(name, attrs) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function clear(svg) {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
}

function height(svg) {
  return svg.viewBox.baseVal.height || 100;
}

// x of ns t in [lo, hi] (BigInt), in viewBox units
function xOf(t, lo, hi) {
  const span = Number(hi - lo) || 1;
  return (Number(t - lo) / span) * W;
}

// The ns under a mouse event, from the svg's on-screen box.
function nsAt(svg, ev, lo, hi) {
  const box = svg.getBoundingClientRect();
  let f = (ev.clientX - box.left) / (box.width || 1);
  f = Math.min(1, Math.max(0, f));
  return lo + BigInt(Math.round(f * Number(hi - lo)));
}

// Draws bars: buckets [{t: BigInt start, n: count}] of width widthNs over
// [lo, hi]. Returns the number of bars drawn.
export function drawHistogram(svg, buckets, lo, hi, widthNs) {
  clear(svg);
  const h = height(svg);
  let max = 0;
  for (const b of buckets) max = Math.max(max, b.n);
  const bw = Math.max(1, xOf(lo + widthNs, lo, hi) - 1);
  for (const b of buckets) {
    const x = Math.max(0, xOf(b.t, lo, hi));
    const bh = max ? Math.max(1, (b.n / max) * (h - 4)) : 0;
    const r = el('rect', {class: 'bar', x, y: h - bh, width: bw, height: bh});
    r.dataset.t = String(b.t);
    r.dataset.n = String(b.n);
    const tip = el('title', {});
    tip.textContent = b.n + ' rows';
    r.appendChild(tip);
    svg.appendChild(r);
  }
  return buckets.length;
}

// Click or drag on the histogram: onZoom(fromNs, toNs) with BigInts. A
// click zooms to the bucket under the pointer.
export function attachZoom(svg, getRange, onZoom) {
  let start = null;
  let sel = null;
  svg.addEventListener('mousedown', (ev) => {
    const r = getRange();
    if (!r) return;
    start = {x: ev.clientX, t: nsAt(svg, ev, r.lo, r.hi), r};
    sel = el('rect', {class: 'sel', x: xOf(start.t, r.lo, r.hi), y: 0, width: 0, height: height(svg)});
    svg.appendChild(sel);
    ev.preventDefault();
  });
  svg.addEventListener('mousemove', (ev) => {
    if (!start) return;
    const t = nsAt(svg, ev, start.r.lo, start.r.hi);
    const a = xOf(t < start.t ? t : start.t, start.r.lo, start.r.hi);
    const b = xOf(t < start.t ? start.t : t, start.r.lo, start.r.hi);
    sel.setAttribute('x', String(a));
    sel.setAttribute('width', String(b - a));
  });
  const finish = (ev) => {
    if (!start) return;
    const s = start;
    start = null;
    if (sel) sel.remove();
    if (Math.abs(ev.clientX - s.x) < 4) {
      const w = s.r.width;
      const bar = barAt(svg, s.t, w);
      const from = bar !== null ? bar : s.t - (((s.t % w) + w) % w); // buckets align to the epoch
      onZoom(from, from + w - 1n);
      return;
    }
    const t = nsAt(svg, ev, s.r.lo, s.r.hi);
    onZoom(t < s.t ? t : s.t, t < s.t ? s.t : t);
  };
  svg.addEventListener('mouseup', finish);
  svg.addEventListener('mouseleave', (ev) => {
    if (start) finish(ev);
  });
}

// The start of the drawn bucket holding t, or null.
function barAt(svg, t, w) {
  for (const r of svg.querySelectorAll('rect.bar')) {
    const b = BigInt(r.dataset.t);
    if (t >= b && t < b + w) return b;
  }
  return null;
}

// Draws the average line and the min..max band: points [{t, avg, min, max}]
// sorted by t. Returns {lo, hi} of the values, or null without points.
export function drawLine(svg, points, lo, hi) {
  clear(svg);
  const h = height(svg);
  const vals = points.flatMap((p) => [p.min, p.max, p.avg]).filter((v) => typeof v === 'number');
  if (!vals.length) return null;
  let vmin = Math.min(...vals);
  let vmax = Math.max(...vals);
  if (vmin === vmax) {
    vmin -= 1;
    vmax += 1;
  }
  const y = (v) => h - 6 - ((v - vmin) / (vmax - vmin)) * (h - 12);
  const ok = points.filter((p) => typeof p.avg === 'number');
  const upper = ok.map((p) => `${xOf(p.t, lo, hi).toFixed(1)},${y(p.max ?? p.avg).toFixed(1)}`);
  const lower = ok.map((p) => `${xOf(p.t, lo, hi).toFixed(1)},${y(p.min ?? p.avg).toFixed(1)}`);
  svg.appendChild(el('polygon', {class: 'band', points: upper.concat(lower.reverse()).join(' ')}));
  const line = ok.map((p) => `${xOf(p.t, lo, hi).toFixed(1)},${y(p.avg).toFixed(1)}`).join(' ');
  svg.appendChild(el('polyline', {class: 'avg', points: line}));
  for (const p of ok) {
    const c = el('circle', {class: 'avg', cx: xOf(p.t, lo, hi), cy: y(p.avg), r: 2});
    const tip = el('title', {});
    tip.textContent = `avg ${p.avg} min ${p.min} max ${p.max}`;
    c.appendChild(tip);
    svg.appendChild(c);
  }
  return {lo: vmin, hi: vmax};
}
