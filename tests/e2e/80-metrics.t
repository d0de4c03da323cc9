#!/bin/sh
test_description='/metrics passes promtool check metrics, and every name starts with logbucket_'
. "$(dirname "$0")/lib.sh"

# promtool comes with Debian's prometheus package: installed once per
# machine, as root, by apt-get, only when promtool is missing. The package
# may start a Prometheus service on :9090; the test does not use it.
if ! command -v promtool >/dev/null && test "$(id -u)" = 0 && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive
    export DEBIAN_FRONTEND
    apt_install() {
        timeout 600 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 \
            prometheus >>apt.log 2>&1
    }
    apt_install || { timeout 300 apt-get update -qq >>apt.log 2>&1 && apt_install; } || true
fi
if ! command -v promtool >/dev/null; then
    skip_all='promtool (Debian prometheus) is not installed and could not be'
    test -s apt.log && skip_all="$skip_all (apt-get: $(tail -n 1 apt.log | tr -d '#'))"
    test_done
fi

# diag TEXT: a TAP comment, shown by prove -v even when the test is quiet
diag() { printf '%s\n' "$*" | sed 's/^/# /' >&5; }

sql() { lb_req POST /api/v1/sql -H "Content-Type: text/plain" --data-binary "$1"; }

test_expect_success 'start' '
    lb_start --set reject_older_than=0
'

# Every write endpoint and format, a partial write, two databases: the
# write counters and histograms, and the store's per-database figures.
test_expect_success 'write through every endpoint' '
    awk "BEGIN { for (t = 1; t <= 20; t++) for (h = 1; h <= 3; h++)
            printf \"cpu,host=h%d,dc=eu v=%d.5,n=%di %d000000000\\n\", h, t, t * h, t }" >lp &&
    test "$(lb_req POST "/write?db=m1" --data-binary @lp)" = 204 &&
    gzip -c lp >lp.gz &&
    test "$(lb_req POST "/api/v2/write?bucket=m2&org=o" -H "Content-Encoding: gzip" \
        --data-binary @lp.gz)" = 204 &&
    test "$(lb_req POST "/write?db=m1" --data-binary "bad line")" = 400 &&
    printf "one\ntwo\n" >raw &&
    test "$(lb_req POST "/api/v1/ingest?db=m2&host=r1&event=log" --data-binary @raw)" = 204 &&
    printf "%s\n" "{\"ts\":1700000000000000000,\"host\":\"j1\",\"event\":\"req\",\"status\":200}" >jl &&
    test "$(lb_req POST "/api/v1/ingest?db=m2&format=jsonl" --data-binary @jl)" = 204
'

# Each plan (GET, SCAN, INDEX, FULL, admin), a count, a delete and a bad
# statement: the query counters and the latency histogram.
test_expect_success 'query with every plan' '
    test "$(lb_req GET "/api/v1/query?db=m1&host=h1&limit=5")" = 200 &&
    test "$(sql "SELECT * FROM m1 WHERE ts >= 1000000000 AND ts < 5000000000")" = 200 &&
    test "$(sql "SELECT * FROM m1 WHERE host = '"'"'h2'"'"' LIMIT 3")" = 200 &&
    test "$(sql "SELECT COUNT(*) FROM m2 WHERE ts >= 0")" = 200 &&
    test "$(sql "SHOW DATABASES")" = 200 &&
    test "$(sql "DELETE FROM m1 WHERE host = '"'"'h3'"'"' AND ts BETWEEN 1000000000 AND 2000000000")" = 200 &&
    test "$(sql "SELEKT nothing")" = 400
'

test_expect_success 'GET /metrics has the histograms and per-database figures' '
    test "$(lb_req GET /metrics)" = 200 &&
    cp body metrics &&
    grep -q "^# TYPE logbucket_write_duration_seconds histogram" metrics &&
    grep -q "^# TYPE logbucket_query_duration_seconds histogram" metrics &&
    grep -q "^logbucket_query_duration_seconds_count [1-9]" metrics &&
    grep -q "db=\"m1\"" metrics &&
    grep -q "db=\"m2\"" metrics
'

# promtool exits non-zero on a parse error or a lint problem; a lint
# message (such as "no help text") fails the test even if it did not.
test_expect_success 'promtool check metrics passes without a problem' '
    diag "$(promtool --version 2>&1 | head -n 1)" &&
    { promtool check metrics <metrics >lint.out 2>&1; echo $? >lint.rc; } &&
    cat lint.out >&2 &&
    test "$(cat lint.rc)" = 0 &&
    ! grep -qi "help" lint.out &&
    test_must_be_empty lint.out
'

test_expect_success 'every metric name starts with logbucket_' '
    { sed -n "s/^# \(HELP\|TYPE\) \([^ ]*\).*/\2/p" metrics &&
      grep -v "^#" metrics | sed "s/[{ ].*//"; } | sort -u >names &&
    test -s names &&
    { grep -v "^logbucket_" names >foreign || true; } &&
    test_must_be_empty foreign
'

test_expect_success 'every TYPE has a HELP right before it' '
    awk "/^# HELP / { help = \$3; next }
         /^# TYPE / { if (\$3 != help) { print \$3; bad = 1 } }
         END { exit bad }" metrics
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
