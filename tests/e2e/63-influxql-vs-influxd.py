# InfluxQL, logbucket against InfluxDB 1.x: the same points written to
# both (two measurements, three hosts a few seconds apart, two regions, a
# float, an int, a boolean and a string in some rows), then random
# statements of what dashboards and people ask (raw rows, aggregates and
# selectors, transformations, math, GROUP BY time with offsets and every
# fill(), GROUP BY tags, conditions on tags, fields and hosts, ORDER BY
# time DESC, LIMIT, OFFSET, SLIMIT, SHOW statements) sent to both. The
# replies must be the same: errors or not, series, tags, columns and every
# value (numbers within a relative 1e-9).
#
# Left out, because InfluxDB 1.6.7's answers there depend on its sort's
# order of equal values or on its own quirks (README.md, InfluxQL, "What
# differs from InfluxDB 1.x"): mode(), percentile() of the integer field,
# of a low rank or under a field condition, top() and bottom() with LIMIT
# or OFFSET, integral(), distinct() under ORDER BY time DESC, SLIMIT or
# stddev() under a field condition, a transformation of stddev() (of one
# point: null), a selector twice, fields or tags beside a selector under
# fill(), fill(linear) of an expression (InfluxDB interpolates each
# aggregate, then computes; logbucket interpolates the column), fn(*) with
# LIMIT or OFFSET (InfluxDB limits each column apart under fill(none)).
#
#   python3 63-influxql-vs-influxd.py LOGBUCKET_URL INFLUXDB_URL SEED COUNT
# Prints each difference (at most 20) and exits 1 if there is any.
import json
import random
import sys
import urllib.parse

from peer import http

lb_url, ifx_url, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)
db = "iqldiff%d" % random.Random().randrange(10**9)
T0 = 1700000000


def points():
    d = random.Random(5)  # (5 decimals: equal values, which InfluxDB orders its own way, are rare)
    lines = []
    for i in range(360):
        for h in (1, 2, 3):
            if d.random() < 0.15:
                continue
            t = (T0 + i * 10 + h) * 10**9  # no two hosts at one time: InfluxDB orders ties its own way
            f = "usage=%s,n=%di,ok=%s" % (round(d.uniform(0, 100), 5), d.randint(-5, 50),
                                          d.choice(["true", "false"]))
            if d.random() < 0.3:
                f += ',msg="m%d"' % d.randint(0, 5)
            lines.append("cpu,host=h%d,region=%s %s %d" % (h, "us" if h == 3 else "eu", f, t))
            if d.random() < 0.5:
                lines.append("mem,host=h%d used=%d %d" % (h, d.randint(0, 10**9), t))
    return ("\n".join(lines) + "\n").encode()


def aggregate(field):
    fn = rnd.choice(["mean", "sum", "count", "min", "max", "first", "last", "spread", "stddev",
                     "median", "percentile"])
    if fn == "percentile":
        return "percentile(%s, %d)" % ("usage" if field == "n" else field, rnd.choice([50, 90, 100]))
    return "%s(%s)" % (fn, field)


def select_list(meas, agg):
    nf = "usage" if meas == "cpu" else "used"
    fields = ["usage", "n"] if meas == "cpu" else ["used"]
    r = rnd.random()
    if agg:
        if r < 0.45:
            first = aggregate(rnd.choice(fields))
            second = aggregate(rnd.choice(fields))
            return first if second == first or rnd.random() < 0.5 else first + ", " + second
        if r < 0.55:
            return rnd.choice(["count(*)", "mean(*)", "max(*)", "min(*)", "first(*)", "last(*)"])
        if r < 0.65:
            # (round() of a sum would depend on the order it is summed in)
            return rnd.choice(["%s(%s) * 2 + 1", "abs(%s(%s)) - 3"]) % (
                rnd.choice(["mean", "sum", "max"]), nf) if rnd.random() < 0.7 else \
                rnd.choice(["round(max(%s))", "floor(min(%s) / 3)", "ceil(last(%s))"]) % nf
        if r < 0.8:
            tr = rnd.choice(["derivative(%s, 1m)", "derivative(%s)", "difference(%s)",
                             "moving_average(%s, 3)", "cumulative_sum(%s)",
                             "non_negative_derivative(%s)", "non_negative_difference(%s)"])
            return tr % aggregate(nf).replace("stddev", "mean")
        if r < 0.9:
            return rnd.choice(["top(%s, 3)", "bottom(%s, 2)", "max(%s), host", "count(distinct(%s))",
                               "sum(%s) / count(%s)"]).replace("%s", nf)
        return rnd.choice(["mean(%s) AS m, max(%s) AS mx", "distinct(%s)", "spread(%s) + 1"]).replace("%s", nf)
    if r < 0.3:
        return "*"
    if r < 0.55:
        return ", ".join(rnd.sample(fields, rnd.randint(1, len(fields))))
    if r < 0.65:
        return "%s * 2, %s - 1" % (nf, nf)
    if r < 0.75:
        return "host, %s" % nf
    if r < 0.85:
        return rnd.choice(["derivative(%s, 10s)", "difference(%s)", "cumulative_sum(%s)",
                           "moving_average(%s, 2)", "non_negative_difference(%s)"]) % nf
    return rnd.choice(["/us/", "abs(%s), floor(%s)" % (nf, nf), "round(%s * 3)" % nf,
                       "sqrt(%s) + 1" % nf, '"%s"' % nf])


def statement():
    if rnd.random() < 0.08:
        return rnd.choice([
            "SHOW MEASUREMENTS", "SHOW MEASUREMENTS WITH MEASUREMENT =~ /c.*/", "SHOW TAG KEYS",
            "SHOW TAG KEYS FROM cpu", "SHOW TAG VALUES WITH KEY = host",
            "SHOW TAG VALUES FROM cpu WITH KEY = region",
            'SHOW TAG VALUES FROM cpu WITH KEY IN ("host", "region")',
            "SHOW TAG VALUES WITH KEY = host WHERE region = 'eu'",
            "SHOW TAG VALUES FROM mem WITH KEY =~ /h.*/", "SHOW FIELD KEYS", "SHOW FIELD KEYS FROM cpu",
            "SHOW SERIES", "SHOW SERIES FROM mem", "SHOW SERIES WHERE host = 'h2'",
            "SHOW MEASUREMENTS LIMIT 1", "SHOW TAG VALUES WITH KEY = host LIMIT 2 OFFSET 1",
            "SHOW RETENTION POLICIES"])
    meas = rnd.choice(["cpu", "cpu", "cpu", "mem"])
    nf = "usage" if meas == "cpu" else "used"
    agg = rnd.random() < 0.6
    sel = select_list(meas, agg)
    a = rnd.randint(0, 3000)
    where = "time >= %ds AND time < %ds" % (T0 + a, T0 + a + rnd.choice([60, 300, 600, 1800, 3600]))
    c = rnd.random()
    field_cond = False
    if c < 0.2:
        where += " AND host = 'h%d'" % rnd.randint(1, 3)
    elif c < 0.3:
        where += " AND (host = 'h1' OR host = 'h3')"
    elif c < 0.4 and meas == "cpu":
        where += " AND region =~ /e/"
    elif c < 0.5:
        where += " AND %s > %d" % (nf, rnd.randint(10, 90))
        field_cond = True
    elif c < 0.55 and meas == "cpu":
        where += " AND n != 3 AND region != 'us'"
        field_cond = True
    if field_cond and ("percentile" in sel or "stddev" in sel):
        sel = sel.replace("percentile", "median").replace(", 50)", ")").replace(", 90)", ")") \
                 .replace(", 100)", ")").replace("stddev", "spread")
    q = "SELECT %s FROM %s WHERE %s" % (sel, meas, where)
    group = []
    if agg and rnd.random() < 0.7:
        group.append("time(%s)" % rnd.choice(["1m", "5m", "90s", "10m", "30s", "1m, 20s", "5m, -1m", "1h"]))
    r = rnd.random()
    if r < 0.3:
        group.append("host")
    elif r < 0.35 and meas == "cpu":
        group.append("region")
    elif r < 0.4:
        group.append("*")
    if group:
        q += " GROUP BY " + ", ".join(group)
        aux = ", host" in sel
        if agg and group[0].startswith("time") and rnd.random() < 0.5 and not aux:
            fills = ["none", "null", "0", "previous", "-1"]
            if sel.count("(") == 1:  # InfluxDB interpolates each aggregate, then computes
                fills.append("linear")
            q += " fill(%s)" % rnd.choice(fills)
    if rnd.random() < 0.25 and "distinct(" not in sel:
        q += " ORDER BY time DESC"
    # (InfluxDB limits each column's points apart under fill(none): fn(*) with LIMIT left out)
    if rnd.random() < 0.3 and "top(" not in sel and "bottom(" not in sel and "(*)" not in sel:
        q += " LIMIT %d" % rnd.randint(1, 5)
        if rnd.random() < 0.5:
            q += " OFFSET %d" % rnd.randint(0, 3)
    if rnd.random() < 0.1 and not field_cond:
        q += " SLIMIT 1"
    if rnd.random() < 0.05:
        q += " tz('Europe/Paris')"
    return q


def same(a, b):
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


def compare(want, got):
    if ("error" in want) != ("error" in got):
        return "error: InfluxDB %s, logbucket %s" % (want.get("error"), got.get("error"))
    ws, gs = want.get("series") or [], got.get("series") or []
    if len(ws) != len(gs):
        return "series: InfluxDB %s, logbucket %s" % ([(s.get("name"), s.get("tags")) for s in ws],
                                                      [(s.get("name"), s.get("tags")) for s in gs])
    for w, g in zip(ws, gs):
        for k in ("name", "columns"):
            if w.get(k) != g.get(k):
                return "%s: InfluxDB %s, logbucket %s" % (k, w.get(k), g.get(k))
        if (w.get("tags") or {}) != (g.get("tags") or {}):
            return "tags: InfluxDB %s, logbucket %s" % (w.get("tags"), g.get("tags"))
        wv, gv = w.get("values") or [], g.get("values") or []
        if len(wv) != len(gv):
            return "rows: InfluxDB %d %s, logbucket %d %s" % (len(wv), wv[:3], len(gv), gv[:3])
        for a, b in zip(wv, gv):
            if len(a) != len(b) or not all(same(x, y) for x, y in zip(a, b)):
                return "row: InfluxDB %s, logbucket %s" % (a, b)
    return None


def ask(base, q):
    status, body = http("GET", base + "/query?" + urllib.parse.urlencode({"db": db, "q": q, "epoch": "s"}))
    try:
        reply = json.loads(body)
    except ValueError:
        return {"error": "HTTP %d %s" % (status, body[:100])}
    return reply["results"][0] if "results" in reply else {"error": reply.get("error", body)}


http("POST", ifx_url + "/query?" + urllib.parse.urlencode({"q": "CREATE DATABASE " + db}))
body = points()
for base in (lb_url, ifx_url):
    status, text = http("POST", base + "/write?db=%s&precision=ns" % db, body)
    if status != 204:
        sys.exit("writing to %s: HTTP %d %s" % (base, status, text[:200]))
diffs = 0
for _ in range(count):
    q = statement()
    d = compare(ask(ifx_url, q), ask(lb_url, q))
    if d:
        diffs += 1
        if diffs <= 20:
            print("%s\n    %s" % (q, d[:600]))
print("%d statements, %d differences" % (count, diffs))
sys.exit(1 if diffs else 0)
