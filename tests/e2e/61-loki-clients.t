#!/bin/sh
test_description='real Loki clients: pino-loki (JSON) and winston-loki (snappy protobuf) push to /loki/api/v1/push'
. "$(dirname "$0")/lib.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip_all='node and npm are not installed'
    test_done
fi

# The clients are installed from npm into a folder outside the tree, once
# per machine (LB_NPM_LOKI_DIR); no network is needed after that.
client_dir=${LB_NPM_LOKI_DIR:-${TMPDIR:-/tmp}/logbucket-npm-loki}
have_clients() {
    test -d "$client_dir/node_modules/pino-loki" && test -d "$client_dir/node_modules/winston-loki" &&
    test -d "$client_dir/node_modules/pino" && test -d "$client_dir/node_modules/winston"
}
if ! have_clients; then
    mkdir -p "$client_dir" &&
    (cd "$client_dir" && timeout 300 npm install --no-audit --no-fund --silent \
        pino pino-loki winston winston-loki >npm.log 2>&1) || true
fi
if ! have_clients; then
    skip_all='npm could not install pino, pino-loki, winston and winston-loki'
    test_done
fi

test_expect_success 'start' '
    lb_start
'

test_expect_success 'pino-loki (JSON): every record stored, mapping checked field by field' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/61-loki-clients.js" \
        pino "$LB_URL" pinodb 150 >out 2>err &&
    cat out && grep -q "^ok pino stored 150 records" out
'

test_expect_success 'winston-loki (protobuf + snappy): every record stored, field by field' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/61-loki-clients.js" \
        winston "$LB_URL" winstondb 150 >out 2>err &&
    cat out && grep -q "^ok winston stored 150 records" out
'

test_expect_success '/metrics counts the pushed rows and no rejects' '
    curl -s "$LB_URL/metrics" >metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"loki\",result=\"written\"} 300$" metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"loki\",result=\"dropped\"} 0$" metrics
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
