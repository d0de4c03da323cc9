# Line protocol, logbucket against InfluxDB 1.x: random lines built from the
# parts the line protocol's escaping and value rules are about (commas,
# spaces, equals signs, quotes and backslashes in names and values; every
# kind of field value, good and bad; timestamps, good and bad), each written
# alone to both servers in a database of its own, then read back with
# SELECT *. Both must accept or refuse each line alike, and what they accept
# must read back alike (measurement, tags, fields and their values).
#
# Left out, because logbucket differs on purpose (ingest/README.md,
# "Differences from InfluxDB 1.x"): two backslashes in a row in a name, a
# backslash before = or a quote in a measurement or before a quote in a
# key, tabs and other control characters, unsigned values, duplicate field
# keys, an unescaped = in a tag value, text right after a closing quote,
# comment lines.
#
#   python3 41-lp-vs-influxd.py LOGBUCKET_URL INFLUXDB_URL SEED COUNT
# Prints each difference (at most 20) and exits 1 if there is any.
import json
import random
import sys
import time
import urllib.parse

from peer import http

lb_url, ifx_url, seed, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(seed)


def write(base, db, line):
    for _ in range(40):  # InfluxDB's meta cache may not list a database created just now
        status, body = http("POST", base + "/write?db=" + db, line.encode())
        if status != 404 or "database not found" not in body:
            break
        time.sleep(0.05)
    return status, body


def select_all(base, db, ts):
    q = "SELECT * FROM /.*/ WHERE time >= %d AND time <= %d" % (ts, ts)
    status, body = http("GET", base + "/query?" + urllib.parse.urlencode({"db": db, "q": q, "epoch": "ns"}))
    if status != 200:
        return "HTTP %d %s" % (status, body[:200])
    rows = []
    for s in json.loads(body)["results"][0].get("series") or []:
        for v in s["values"]:
            cells = {c: x for c, x in zip(s["columns"], v) if x is not None}
            rows.append((s["name"], sorted(cells.items())))
    return sorted(rows, key=repr)


PLAIN = "abcxyz019_-./*#'"
SPECIAL = [" ", ",", "=", '"', "é"]


def name(position):
    """A measurement, key or tag value of 1-6 characters; the characters
    special at its position escaped, or sometimes left bare."""
    out = []
    for _ in range(rnd.randint(1, 6)):
        c = rnd.choice(SPECIAL) if rnd.random() < 0.35 else rnd.choice(PLAIN)
        special = {"measurement": " ,", "key": " ,=", "tagvalue": " ,="}[position]
        if c == "=" and position != "measurement":
            c = "\\="  # unescaped, it makes a tag value start with = (above)
        elif c in special and rnd.random() < 0.9:
            c = "\\" + c
        if c == "#" and position == "measurement" and not out:
            c = "x"  # a comment line
        if rnd.random() < 0.05 and not out:
            c = "\\" + rnd.choice(PLAIN)  # a backslash before an ordinary character
        out.append(c)
    return "".join(out)


def string_value():
    body = ""
    for _ in range(rnd.randint(0, 5)):
        body += rnd.choice(["a", " ", '\\"', "\\\\", "=", ",", "\\n", "é", "\n", "\\"])
    if body.endswith("\\") and not body.endswith("\\\\"):
        body += "\\"
    return '"' + body + '"'


def field_value():
    r = rnd.random()
    if r < 0.2:
        return rnd.choice(["1i", "-1i", "0i", "-0i", "01i", "9223372036854775807i",
                           "-9223372036854775808i", "9223372036854775808i", "+1i", "1.0i", "1I", "1ii"])
    if r < 0.5:
        return rnd.choice(["1", "1.5", "-1.5", ".5", "1.", "1e3", "1E-3", "-0", "+1", "1e", "NaN",
                           "inf", "-inf", "0x10", "1_0", "1.5.5", "1e309", "-.5", ".", "-", "1.5e+3",
                           "2.5E+2", "123456789012345678901234567890", "4.9e-324"])
    if r < 0.65:
        return rnd.choice(["t", "T", "true", "True", "TRUE", "f", "F", "false", "False", "FALSE",
                           "tRue", "yes", "truex"])
    if r < 0.7:
        return rnd.choice(["hi", "", "'x'"])  # (an unclosed quote before other fields: InfluxDB pairs quotes its own way)
    return string_value()


def line(ts):
    tags = "".join("," + name("key") + "=" + name("tagvalue") for _ in range(rnd.randint(0, 2)))
    keys = []
    while len(keys) < rnd.randint(1, 3):
        k = name("key")
        if k not in keys:
            keys.append(k)
    if rnd.random() < 0.03:
        keys = []
    fields = ",".join(k + "=" + field_value() for k in keys)
    stamp = " " + str(ts)
    r = rnd.random()
    if r < 0.03:
        stamp = rnd.choice([" -1x", " 1.5", " 12a", " " + str(ts) + " x"])
    return name("measurement") + tags + rnd.choice([" ", " ", "  "]) + fields + stamp


base = 1700000000000000000 + seed * 10**12
run = random.Random().randrange(10**9)  # databases of their own for every run
diffs = 0
for i in range(count):
    ts = base + i * 1000
    text = line(ts)
    db = "lpdiff%d_%d_%d" % (seed, i, run)
    status, body = http("POST", ifx_url + "/query?" + urllib.parse.urlencode({"q": "CREATE DATABASE " + db}))
    if status != 200:
        sys.exit("InfluxDB: CREATE DATABASE: HTTP %d %s" % (status, body[:200]))
    a, a_body = write(lb_url, db, text)
    b, b_body = write(ifx_url, db, text)
    if (a // 100 == 2) != (b // 100 == 2):
        diffs += 1
        if diffs <= 20:
            print("%r: logbucket %d %s, InfluxDB %d %s" % (text, a, a_body.strip()[:120], b, b_body.strip()[:120]))
    elif a // 100 == 2 and text.endswith(" " + str(ts)):
        got, want = select_all(lb_url, db, ts), select_all(ifx_url, db, ts)
        if got != want:
            diffs += 1
            if diffs <= 20:
                print("%r: logbucket reads %r, InfluxDB %r" % (text, got, want))
    for server in (lb_url, ifx_url):  # (thousands of databases slow InfluxDB down)
        http("POST", server + "/query?" + urllib.parse.urlencode({"q": "DROP DATABASE " + db}))
print("%d lines, %d differences" % (count, diffs))
sys.exit(1 if diffs else 0)
