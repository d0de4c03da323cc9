# Compares two InfluxDB 1.x /query replies value for value: the HTTP
# status, then per statement its statement_id, whether it failed (the
# messages may differ), and its series: name, tags (absent = {}), columns,
# and every value (numbers within a relative 1e-9, so 5 and 5.0 are equal;
# strings, booleans and nulls exactly). Usage:
#   python3 iqlcmp.py WANT_STATUS WANT_BODY GOT_STATUS GOT_BODY
# WANT is InfluxDB's reply, GOT logbucket's. Prints the differences
# (at most 20) and exits 1 if there is any.
import json
import math
import sys

diffs = []


def differ(path, want, got):
    diffs.append("%s: InfluxDB %s, logbucket %s" % (path, json.dumps(want)[:200], json.dumps(got)[:200]))


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_value(a, b):
    if is_num(a) and is_num(b):
        if math.isnan(a) or math.isnan(b):
            return False
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


def cmp_series(path, want, got):
    for key in ("name", "columns"):
        if want.get(key) != got.get(key):
            differ(path + "." + key, want.get(key), got.get(key))
    if (want.get("tags") or {}) != (got.get("tags") or {}):
        differ(path + ".tags", want.get("tags"), got.get("tags"))
    wv, gv = want.get("values") or [], got.get("values") or []
    if len(wv) != len(gv):
        differ(path + ".values (rows)", len(wv), len(gv))
    for r, (wrow, grow) in enumerate(zip(wv, gv)):
        if len(wrow) != len(grow) or not all(same_value(a, b) for a, b in zip(wrow, grow)):
            differ("%s.values[%d]" % (path, r), wrow, grow)


def cmp_result(i, want, got):
    path = "results[%d]" % i
    if want.get("statement_id") != got.get("statement_id"):
        differ(path + ".statement_id", want.get("statement_id"), got.get("statement_id"))
    if ("error" in want) != ("error" in got):
        differ(path + ".error", want.get("error"), got.get("error"))
        return
    ws, gs = want.get("series") or [], got.get("series") or []
    if len(ws) != len(gs):
        differ(path + ".series (count)", [(s.get("name"), s.get("tags")) for s in ws],
               [(s.get("name"), s.get("tags")) for s in gs])
    for j, (a, b) in enumerate(zip(ws, gs)):
        cmp_series("%s.series[%d]" % (path, j), a, b)


def load(name):
    try:
        with open(name, encoding="utf-8") as f:
            return json.load(f)
    except ValueError as e:
        return {"unparsable": str(e)}


def main():
    want_status, want_file, got_status, got_file = sys.argv[1:5]
    if want_status != got_status:
        differ("HTTP status", want_status, got_status)
    want, got = load(want_file), load(got_file)
    if "unparsable" in want or "unparsable" in got:
        differ("body", want, got)
    elif ("error" in want) != ("error" in got):
        differ("error", want.get("error"), got.get("error"))
    else:
        wr, gr = want.get("results") or [], got.get("results") or []
        if len(wr) != len(gr):
            differ("results (count)", len(wr), len(gr))
        for i, (a, b) in enumerate(zip(wr, gr)):
            cmp_result(i, a, b)
    for d in diffs[:20]:
        print(d)
    if len(diffs) > 20:
        print("... and %d more differences" % (len(diffs) - 20))
    return 1 if diffs else 0


sys.exit(main())
