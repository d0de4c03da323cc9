# Syslog, logbucket against syslog-ng: random RFC 5424 and RFC 3164 (BSD)
# messages (every PRI, stamps with and without fractions and zones, a
# stamp taking the arrival time, hostnames and addresses, app-names and
# tags with and without a PID, MSGID, structured data with escapes and
# repeated parameters, a BOM, UTF-8 and tabs in the message) sent over TCP
# to both, each ending in a mark "~idN~". syslog-ng writes what it parsed
# as JSON lines (format-json --scope rfc5424 --scope nv-pairs); the rows
# logbucket stored are read back with /api/v1/query. Both must agree on
# host, program (event), PID, MSGID, message, facility, level, structured
# data and, for RFC 5424, the stamp to the nanosecond.
#
# Left out, where logbucket differs on purpose (ingest/README.md, "Syslog:
# mapping and choices"): a BSD message without a `TAG:` (syslog-ng takes
# its first word as the program; logbucket keeps it in the message) or
# without a hostname (`stamp su: msg`: syslog-ng takes `su:` as the host,
# logbucket as the tag), a host or tag `-` (logbucket takes the sender's
# address and the default event), facilities 13-15 (rsyslog's names), an
# RFC 5424 SD-ID repeated, a parameter repeated in an element (syslog-ng
# keeps the last value, logbucket joins them).
#
#   python3 66-syslog-vs-syslog-ng.py LB_URL LB_SYSLOG_PORT SNG_BSD_PORT
#       SNG_5424_PORT SNG_BSD_FILE SNG_5424_FILE SEED COUNT
# Prints each difference (at most 20) and exits 1 if there is any.
import datetime
import json
import random
import re
import socket
import sys
import time
import urllib.error
import urllib.request

lb_url, lb_port, bsd_port, rfc_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
bsd_file, rfc_file, seed, count = sys.argv[5], sys.argv[6], int(sys.argv[7]), int(sys.argv[8])
rnd = random.Random(seed)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def word(chars="abcxyz019", n=(1, 8)):
    return "".join(rnd.choice(chars) for _ in range(rnd.randint(*n)))


def text():
    return rnd.choice(["hello world", "a: b: c", "[x] y", 'x=1 y="2"', "  leading", "trailing  ",
                       "\u00e9 \u00fcn\u00efcode", "tab\there", ""])


def bsd(i):
    now = datetime.datetime.now(datetime.timezone.utc)
    month = rnd.randint(0, 11) if rnd.random() < 0.3 else now.month - 1
    day = rnd.randint(1, 28)
    clock = "%02d:%02d:%02d" % (rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59))
    stamp = "%s %s %s" % (MONTHS[month], ("%2d" if rnd.random() < 0.8 else "%02d") % day, clock)
    if rnd.random() < 0.1:
        stamp += ".%03d" % rnd.randint(0, 999)
    if rnd.random() < 0.1:
        stamp = "%d-%02d-%02dT%s%s" % (now.year, month + 1, day, clock,
                                      rnd.choice(["Z", "+01:00", ".5Z", "-05:30"]))
    words = ["<%d>%s" % (rnd.randint(0, 191), stamp)]
    # (a hostname of digits alone is not one to syslog-ng: it takes the sender's address)
    words.append(rnd.choice(["h" + word(), word() + ".example.com", "10.0.0.%d" % rnd.randint(1, 254)]))
    tag = word("abcdefxyz019_-./", (1, 12))
    if tag == "-":  # logbucket reads it as RFC 5424's nil app-name: no event of its own
        tag = "x-"
    head = "%s[%d]:" % (tag, rnd.randint(1, 99999)) if rnd.random() < 0.6 else tag + ":"
    body = text()
    return " ".join(words) + " " + head + (" " if rnd.random() < 0.85 else "") + body + " ~id%d~" % i


def sd_value():
    return "".join(rnd.choice(["a", " ", '\\"', "\\\\", "\\]", "=", "\u00e9"]) for _ in range(rnd.randint(0, 5)))


def rfc5424(i):
    stamp = "%d-%02d-%02dT%02d:%02d:%02d" % (rnd.randint(2000, 2030), rnd.randint(1, 12), rnd.randint(1, 28),
                                             rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59))
    if rnd.random() < 0.6:
        stamp += "." + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 6)))
    stamp += rnd.choice(["Z", "+00:00", "+05:30", "-07:00"])
    if rnd.random() < 0.05:
        stamp = "-"
    host = rnd.choice([word() + ".example.com", word(), "192.0.2.%d" % rnd.randint(1, 254)])
    app = rnd.choice([word("abcxyz_-.", (1, 12)), "-"])
    procid = rnd.choice([str(rnd.randint(1, 99999)), "-", word()])
    msgid = rnd.choice(["ID%d" % rnd.randint(1, 99), "-"])
    elements = []
    for sid in rnd.sample(["exampleSDID@32473", "origin", "meta", "x@1"], rnd.choice([0, 0, 1, 2])):
        names = list(dict.fromkeys(word("abcxyz", (1, 6)) for _ in range(rnd.randint(0, 3))))
        elements.append("[%s%s]" % (sid, "".join(' %s="%s"' % (n, sd_value()) for n in names)))
    body = text() + " ~id%d~" % i
    if rnd.random() < 0.1:
        body = "\ufeff" + body
    return "<%d>1 %s %s %s %s %s %s %s" % (rnd.randint(0, 191), stamp, host, app, procid, msgid,
                                           "".join(elements) or "-", body)


def stamp_ns(s):
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", s)
    y, mo, d, h, mi, se, frac, zone = m.groups()
    t = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(se), tzinfo=datetime.timezone.utc)
    ns = int(t.timestamp()) * 10**9 + int((frac or "0").ljust(9, "0")[:9])
    if zone not in ("Z", "+00:00"):
        ns -= (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60) * 10**9
    return ns


def by_mark(rows, key):
    out = {}
    for r in rows:
        m = re.search(r"~id(\d+)~", r.get(key) or "")
        if m:
            out[int(m.group(1))] = r
    return out


messages = [("5424", rfc5424(i)) if rnd.random() < 0.5 else ("bsd", bsd(i)) for i in range(count)]
lb = socket.create_connection(("127.0.0.1", lb_port))
to_sng = {"bsd": socket.create_connection(("127.0.0.1", bsd_port)),
          "5424": socket.create_connection(("127.0.0.1", rfc_port))}
for kind, m in messages:
    data = (m + "\n").encode()
    lb.sendall(data)
    to_sng[kind].sendall(data)
for s in [lb] + list(to_sng.values()):
    s.close()

deadline = time.time() + 20
while True:
    sng = []
    for f in (bsd_file, rfc_file):
        try:
            sng += [json.loads(line) for line in open(f, encoding="utf-8") if line.strip()]
        except OSError:
            pass
    try:
        reply = urllib.request.urlopen(lb_url + "/api/v1/query?db=syslog&start=0&limit=100000").read().decode()
    except urllib.error.HTTPError:  # 404 until the first batch has made the database
        reply = ""
    rows = [json.loads(line) for line in reply.splitlines() if line.strip()]
    if (len(sng) >= count and len(rows) >= count) or time.time() > deadline:
        break
    time.sleep(0.2)
S = by_mark(sng, "MESSAGE")
L = by_mark([dict(r, msg=r["fields"].get("msg")) for r in rows], "msg")

diffs = 0
for i, (kind, m) in enumerate(messages):
    s, r = S.get(i), L.get(i)
    found = []
    if s is None or r is None:
        found.append(("stored", "yes" if s else "no", "yes" if r else "no"))
    else:
        t = r["tags"]
        sd = {}
        for sid, params in (s.get("_SDATA") or {}).items():
            if isinstance(params, dict):
                sd.update({"%s.%s" % (sid, k): v for k, v in params.items()})
            else:
                sd[sid] = params
        pairs = [("host", s.get("HOST"), r["host"]), ("program", s.get("PROGRAM") or "syslog", r["event"]),
                 ("pid", s.get("PID"), t.get("procid")), ("msgid", s.get("MSGID"), t.get("msgid")),
                 ("message", s.get("MESSAGE"), r["msg"]), ("level", s.get("LEVEL"), t.get("level")),
                 ("structured data", sd, {k: v for k, v in t.items()
                                          if k not in ("facility", "level", "procid", "msgid")})]
        if s.get("FACILITY") not in ("security", "console", "solaris-cron"):
            pairs.append(("facility", s.get("FACILITY"), t.get("facility")))
        if kind == "5424" and m.split(" ")[1] != "-":
            pairs.append(("stamp", stamp_ns(s["ISODATE"]), r["ts"]))
        found = [p for p in pairs if p[1] != p[2]]
    if found:
        diffs += 1
        if diffs <= 20:
            print(repr(m))
            for name, a, b in found:
                print("    %s: syslog-ng %r, logbucket %r" % (name, a, b))
print("%d messages, %d differences" % (count, diffs))
sys.exit(1 if diffs else 0)
