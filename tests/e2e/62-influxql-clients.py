# python3-influxdb (Debian) against an InfluxDB 1.x /query and /write:
# creates a database, writes points with write_points, reads them back with
# query and the get_list_* helpers, and checks every value. Usage:
#   python3 62-influxql-clients.py PORT DATABASE
# Prints "ok N - what" / "not ok N - what" lines; exits 1 if any failed.
import sys

from influxdb import InfluxDBClient

port, db = int(sys.argv[1]), sys.argv[2]
T0 = 1700000000000  # ms
failed = 0
count = 0


def check(what, get, want):
    """Calls get() (a lambda) and compares its answer to want; an exception
    (an HTTP error from the server) fails that check only."""
    global failed, count
    count += 1
    try:
        got = get()
    except Exception as e:  # noqa: BLE001 - any error fails the check
        got = "%s: %s" % (type(e).__name__, e)
    if got == want:
        print("# ok %d - %s" % (count, what))
    else:
        failed += 1
        print("# not ok %d - %s\n#   got:  %r\n#   want: %r" % (count, what, got, want))


def points():
    out = []
    for i in range(10):
        out.append({
            "measurement": "temperature",
            "tags": {"host": "py-%d" % (i % 2), "room": "r%d" % (i % 3)},
            "time": T0 + i * 1000,
            "fields": {"value": i + 0.5, "n": i * 10, "ok": i % 2 == 0, "note": "p%d" % i},
        })
    out.append({"measurement": "humidity", "tags": {"host": "py-0"}, "time": T0,
                "fields": {"value": 41.25}})
    return out


client = InfluxDBClient(host="127.0.0.1", port=port, database=db, timeout=30)
client.create_database(db)
check("write_points", lambda: client.write_points(points(), time_precision="ms"), True)

check("get_list_database has the database",
      lambda: [d for d in client.get_list_database() if d["name"] == db], [{"name": db}])

check("get_list_measurements", client.get_list_measurements,
      [{"name": "humidity"}, {"name": "temperature"}])

check("get_list_series", client.get_list_series,
      ["humidity,host=py-0",
       "temperature,host=py-0,room=r0", "temperature,host=py-0,room=r1",
       "temperature,host=py-0,room=r2", "temperature,host=py-1,room=r0",
       "temperature,host=py-1,room=r1", "temperature,host=py-1,room=r2"])

check("get_list_retention_policies: autogen, infinite, default",
      lambda: [{k: rp[k] for k in ("name", "duration", "replicaN", "default")}
               for rp in client.get_list_retention_policies()],
      [{"name": "autogen", "duration": "0s", "replicaN": 1, "default": True}])

WINDOW = "time >= %dms AND time < %dms" % (T0, T0 + 10000)


def rows(q, **kw):
    return list(client.query(q, **kw).get_points())


check("query: the rows of one host, epoch=ms",
      lambda: rows('SELECT "value", "n", "ok", "note" FROM "temperature" '
                   "WHERE \"host\" = 'py-1' AND " + WINDOW, epoch="ms"),
      [{"time": T0 + i * 1000, "value": i + 0.5, "n": i * 10, "ok": False, "note": "p%d" % i}
       for i in range(1, 10, 2)])

check("query: ORDER BY time DESC LIMIT 2, RFC 3339 times",
      lambda: rows('SELECT "value" FROM "temperature" WHERE "host" = \'py-0\' AND ' + WINDOW
                   + " ORDER BY time DESC LIMIT 2"),
      [{"time": "2023-11-14T22:13:28Z", "value": 8.5},
       {"time": "2023-11-14T22:13:26Z", "value": 6.5}])

check("query: aggregates GROUP BY host, one series each",
      lambda: [(k, list(v)) for k, v in client.query(
          'SELECT sum("n"), max("value"), count("value") FROM "temperature" WHERE '
          + WINDOW + ' GROUP BY "host"', epoch="ms").items()],
      [(("temperature", {"host": "py-0"}),
        [{"time": T0, "sum": 200, "max": 8.5, "count": 5}]),
       (("temperature", {"host": "py-1"}),
        [{"time": T0, "sum": 250, "max": 9.5, "count": 5}])])

check("query: mean per 5 s, epoch=s",
      lambda: rows('SELECT mean("value") FROM "temperature" WHERE ' + WINDOW
                   + " GROUP BY time(5s) fill(null)", epoch="s"),
      [{"time": T0 // 1000, "mean": 2.5}, {"time": T0 // 1000 + 5, "mean": 7.5}])

check("query: SELECT * (tags and fields as columns)",
      lambda: rows('SELECT * FROM "humidity" WHERE ' + WINDOW, epoch="ms"),
      [{"time": T0, "host": "py-0", "value": 41.25}])

check("query: two statements, two result sets",
      lambda: [list(r.get_points()) for r in client.query(
          'SELECT count("value") FROM "temperature" WHERE ' + WINDOW
          + '; SHOW TAG VALUES FROM "temperature" WITH KEY = "room"', epoch="ms")],
      [[{"time": T0, "count": 10}],
       [{"key": "room", "value": "r0"}, {"key": "room", "value": "r1"},
        {"key": "room", "value": "r2"}]])

print("# %d checks, %d failed" % (count, failed))
sys.exit(1 if failed else 0)
