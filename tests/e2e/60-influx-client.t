#!/bin/sh
test_description='a real client: the official InfluxDB JavaScript client writes through /api/v2/write'
. "$(dirname "$0")/lib.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip_all='node and npm are not installed'
    test_done
fi

# The client is installed from npm into a folder outside the tree, once per
# machine (LB_NPM_CACHE_DIR); no network is needed after that.
client_dir=${LB_NPM_CACHE_DIR:-${TMPDIR:-/tmp}/logbucket-npm-influx}
if ! test -d "$client_dir/node_modules/@influxdata/influxdb-client"; then
    mkdir -p "$client_dir" &&
    (cd "$client_dir" && timeout 120 npm install --no-audit --no-fund --silent \
        @influxdata/influxdb-client >npm.log 2>&1) || true
fi
if ! test -d "$client_dir/node_modules/@influxdata/influxdb-client"; then
    skip_all='npm could not install @influxdata/influxdb-client'
    test_done
fi

test_expect_success 'start' '
    lb_start
'

test_expect_success 'the client writes 120 points and they are stored' '
    NODE_PATH="$client_dir/node_modules" node "$LB_TOP/tests/e2e/60-influx-client.js" \
        "$LB_URL" clientdb >out 2>err &&
    grep -q "flushed 120 points" out &&
    curl -s -XPOST "$LB_URL/api/v1/sql" --data-binary "SELECT COUNT(*) FROM clientdb WHERE ts >= 0" >count &&
    grep -q "{\"count\":120}" count
'

test_expect_success 'types, default tags and escapes survive' '
    curl -s "$LB_URL/api/v1/query?db=clientdb&host=web-1&order=asc&limit=1" >row &&
    cat >expect <<-\EOF &&
	{"ts":1700000000001000000,"host":"web-1","event":"http_request","tags":{"region":"eu"},"fields":{"bytes":1001,"cached":false,"latency":1.25,"path":"/api/items/1 \"q\"","status":201}}
	EOF
    test_cmp expect row
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
