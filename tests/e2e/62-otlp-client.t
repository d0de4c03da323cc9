#!/bin/sh
test_description='a real OpenTelemetry client: the JS SDK exports logs as OTLP/JSON and protobuf'
. "$(dirname "$0")/lib.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip_all='node and npm are not installed'
    test_done
fi

# 0.2xx releases run on node 20; installed once per machine (LB_NPM_OTLP_DIR).
client_dir=${LB_NPM_OTLP_DIR:-${TMPDIR:-/tmp}/logbucket-npm-otlp}
have_clients() {
    for m in exporter-logs-otlp-http exporter-logs-otlp-proto sdk-logs api-logs resources api; do
        test -d "$client_dir/node_modules/@opentelemetry/$m" || return 1
    done
}
if ! have_clients; then
    mkdir -p "$client_dir" &&
    (cd "$client_dir" && timeout 300 npm install --no-audit --no-fund --silent \
        @opentelemetry/exporter-logs-otlp-http@0.208 @opentelemetry/exporter-logs-otlp-proto@0.208 \
        @opentelemetry/sdk-logs@0.208 @opentelemetry/api-logs@0.208 @opentelemetry/resources@2 \
        @opentelemetry/api@1 >npm.log 2>&1) || true
fi
if ! have_clients; then
    skip_all='npm could not install the OpenTelemetry JS logs SDK and exporters'
    test_done
fi

test_expect_success 'start' '
    lb_start
'

test_expect_success 'OTLP/JSON exporter: every record stored, mapping checked field by field' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/62-otlp-client.js" \
        json "$LB_URL" otlpjson 120 >out 2>err &&
    cat out && grep -q "^ok json stored 120 records" out
'

test_expect_success 'OTLP protobuf exporter: every record stored, field by field' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/62-otlp-client.js" \
        proto "$LB_URL" otlpproto 120 >out 2>err &&
    cat out && grep -q "^ok proto stored 120 records" out
'

test_expect_success '/metrics counts the exported rows and no rejects' '
    curl -s "$LB_URL/metrics" >metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"otlp\",result=\"written\"} 240$" metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"otlp\",result=\"dropped\"} 0$" metrics
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
