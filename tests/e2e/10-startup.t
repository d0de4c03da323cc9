#!/bin/sh
test_description='startup, config errors, admin routes, error routes, graceful stop'
. "$(dirname "$0")/lib.sh"

test_expect_success '--version prints the version' '
    "$LOGBUCKETD" --version >out &&
    grep -q "^logbucketd [0-9]" out
'

test_expect_success '--help prints usage and exits 0' '
    "$LOGBUCKETD" --help >out &&
    grep -q -- "--check-config" out
'

test_expect_success 'the example config passes --check-config' '
    "$LOGBUCKETD" -c "$LB_TOP/logbucket.conf.example" --check-config
'

test_expect_success '--print-config output is accepted again' '
    "$LOGBUCKETD" --set wal_sync=none --set default_ttl=30d --print-config >printed.conf &&
    grep -q "^wal_sync = none" printed.conf &&
    "$LOGBUCKETD" -c printed.conf --check-config &&
    "$LOGBUCKETD" -c printed.conf --print-config >again.conf &&
    test_cmp printed.conf again.conf
'

test_expect_success '--print-config keeps the tokens, so its output runs as the same daemon; =masked hides them' '
    printf "token = s3cr3t read,write logs\ntoken = adm1n admin *\n" >tokens.conf &&
    "$LOGBUCKETD" -c tokens.conf --print-config >printed-tokens.conf &&
    grep -q "^token = s3cr3t read,write logs$" printed-tokens.conf &&
    grep -q "^token = adm1n admin \*$" printed-tokens.conf &&
    "$LOGBUCKETD" -c printed-tokens.conf --print-config >again-tokens.conf &&
    test_cmp printed-tokens.conf again-tokens.conf &&
    "$LOGBUCKETD" -c tokens.conf --print-config=masked >masked.conf &&
    ! grep -q "s3cr3t\|adm1n" masked.conf &&
    grep -q "^# token = <secret hidden> read,write logs$" masked.conf
'

test_expect_success 'a typo in a key exits 2 naming the line and the key' '
    printf "listen = 127.0.0.1:8086\nwal_snyc = always\n" >typo.conf &&
    test_expect_code 2 "$LOGBUCKETD" -c typo.conf --check-config 2>err &&
    grep -q "typo.conf:2" err &&
    grep -q "wal_snyc" err
'

test_expect_success 'wal_sync = sometimes exits 2 naming the line and what is allowed' '
    printf "# comment\n\nwal_sync = sometimes\n" >bad.conf &&
    test_expect_code 2 "$LOGBUCKETD" -c bad.conf --check-config 2>err &&
    grep -q "bad.conf:3" err &&
    grep -q "sometimes" err &&
    grep -q "always" err
'

test_expect_success 'a bad size and a bad duration exit 2' '
    test_expect_code 2 "$LOGBUCKETD" --set max_body_bytes=12parsecs --check-config 2>err &&
    grep -q max_body_bytes err &&
    test_expect_code 2 "$LOGBUCKETD" --set default_ttl=forever --check-config 2>err &&
    grep -q default_ttl err
'

test_expect_success 'a missing config file exits 2' '
    test_expect_code 2 "$LOGBUCKETD" -c /nonexistent/logbucket.conf --check-config 2>err &&
    grep -q "/nonexistent/logbucket.conf" err
'

test_expect_success 'an unknown flag exits 2' '
    test_expect_code 2 "$LOGBUCKETD" --frobnicate 2>err &&
    grep -q frobnicate err
'

test_expect_success 'listening beyond loopback without tokens is refused' '
    test_expect_code 2 "$LOGBUCKETD" --listen 0.0.0.0:8086 --check-config 2>err &&
    grep -q insecure err
'

test_expect_success 'the daemon starts on a free port' '
    lb_start
'

test_expect_success 'GET /ping is 204 with version headers and a Request-Id' '
    test "$(lb_req GET /ping)" = 204 &&
    test -n "$(lb_header X-Logbucket-Version)" &&
    test -n "$(lb_header X-Influxdb-Version)" &&
    test -n "$(lb_header Request-Id)"
'

test_expect_success 'HEAD /ping is 204' '
    test "$(curl -s -I -o /dev/null -w "%{http_code}" "$LB_URL/ping")" = 204
'

test_expect_success 'GET /ping?verbose=true is 200 JSON' '
    test "$(lb_req GET "/ping?verbose=true")" = 200 &&
    grep -q "\"version\"" body
'

test_expect_success 'GET /health is 200 JSON with status pass' '
    test "$(lb_req GET /health)" = 200 &&
    grep -q "\"status\":\"pass\"" body &&
    lb_header Content-Type | grep -q application/json
'

test_expect_success 'GET /metrics is Prometheus text' '
    test "$(lb_req GET /metrics)" = 200 &&
    grep -q "^# TYPE logbucket_uptime_seconds gauge" body &&
    grep -q "^logbucket_http_requests_total{route=\"ping\",status=\"204\"} [1-9]" body
'

test_expect_success JEMALLOC '/metrics shows the bytes jemalloc allocated' '
    lb_req GET /metrics >/dev/null &&
    grep -q "^logbucket_jemalloc_bytes{kind=\"allocated\"} [1-9]" body &&
    grep -q "^logbucket_jemalloc_bytes{kind=\"resident\"} [1-9]" body
'

test_expect_success 'an unknown path is 404 with a JSON error and X-Influxdb-Error' '
    test "$(lb_req GET /nope)" = 404 &&
    grep -q "\"error\":" body &&
    test -n "$(lb_header X-Influxdb-Error)" &&
    test -n "$(lb_header Request-Id)"
'

test_expect_success 'a wrong method is 405 with Allow and a JSON error' '
    test "$(lb_req POST /ping)" = 405 &&
    grep -q "\"error\":" body &&
    lb_header Allow | grep -q GET &&
    test -n "$(lb_header X-Influxdb-Error)" &&
    test "$(lb_req DELETE /metrics)" = 405
'

test_expect_success 'request ids differ between requests' '
    lb_req GET /ping >/dev/null && a=$(lb_header Request-Id) &&
    lb_req GET /ping >/dev/null && b=$(lb_header Request-Id) &&
    test "$a" != "$b"
'

# lb_hold N SECONDS: holds N connections with unfinished writes open in the
# background (pid in HOLD_PID) and waits until they are all open.
lb_hold() {
    rm -f held
    perl "$LB_TOP/tests/e2e/hold.pl" "$LB_PORT" "$1" "$2" >held &
    HOLD_PID=$!
    n=0
    while ! grep -q ready held 2>/dev/null && [ $n -lt 100 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    grep -q ready held
}

lb_release() {
    kill "$HOLD_PID" 2>/dev/null
    wait "$HOLD_PID" 2>/dev/null
    return 0
}

test_expect_success 'connections waiting in the middle of a body hold up no other request' '
    grep -q "a thread per connection" "$LB_LOG.new" &&
    test_when_finished lb_release &&
    lb_hold 40 20 &&
    test "$(lb_req POST "/write?db=busy" --max-time 5 --data-binary "cpu,host=a v=1 1")" = 204 &&
    test "$(lb_req GET "/api/v1/query?db=busy&host=a" --max-time 5)" = 200 &&
    grep -q "\"v\":1" body &&
    lb_release &&
    test "$(lb_req GET "/api/v1/query?db=held&host=a")" = 200 &&
    test_must_be_empty body
'

test_expect_success 'SIGTERM stops the daemon with exit 0' '
    lb_stop 5 &&
    grep -q "stopped" "$LB_LOG"
'

test_expect_success 'SIGINT stops the daemon with exit 0' '
    lb_start &&
    kill -INT $LB_PID &&
    lb_stop 5
'

test_expect_success 'max_connections: one more request gets 503, /ping still answers from the reserve, and all is served once one closes' '
    lb_start --set max_connections=3 &&
    test_when_finished "lb_release; lb_stop 5" &&
    lb_hold 3 20 &&
    test "$(lb_req GET /ping --max-time 5)" = 204 &&
    test "$(lb_req POST /api/v1/sql --max-time 5 --data-binary "SHOW DATABASES")" = 503 &&
    grep -q "too many connections" body &&
    lb_release &&
    n=0 &&
    while [ "$(lb_req POST /api/v1/sql --data-binary "SHOW DATABASES")" != 200 ] && [ $n -lt 100 ]; do
        sleep 0.05; n=$((n + 1)); done &&
    test "$(lb_req POST /api/v1/sql --data-binary "SHOW DATABASES")" = 200
'

test_expect_success 'a pool of http_threads serves writes and queries' '
    lb_start --set http_threads=2 &&
    test_when_finished "lb_release; lb_stop 5" &&
    grep -q "(2 threads" "$LB_LOG.new" &&
    lb_hold 4 20 &&
    test "$(lb_req POST "/write?db=pool" --max-time 5 --data-binary "cpu,host=a v=7 1")" = 204 &&
    test "$(lb_req GET "/api/v1/query?db=pool&host=a" --max-time 5)" = 200 &&
    grep -q "\"v\":7" body
'

test_expect_success 'a second daemon on the same data directory is refused' '
    lb_start &&
    first=$LB_PID &&
    test_must_fail "$LOGBUCKETD" --listen 127.0.0.1:0 --data-dir "$LB_DATA" 2>err &&
    lb_stop 5
'

test_done
