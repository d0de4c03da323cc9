#!/bin/sh
test_description='a real client: the official Elasticsearch JavaScript client (8.x) and its bulk helper through /_bulk'
. "$(dirname "$0")/lib.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip_all='node and npm are not installed'
    test_done
fi

# Installed from npm into a folder outside the tree, once per machine
# (LB_NPM_CACHE_DIR); no network is needed after that.
client_dir=${LB_NPM_CACHE_DIR:-${TMPDIR:-/tmp}/logbucket-npm-es}
if ! test -d "$client_dir/node_modules/@elastic/elasticsearch"; then
    mkdir -p "$client_dir" &&
    (cd "$client_dir" && timeout 180 npm install --no-audit --no-fund --silent \
        @elastic/elasticsearch@8 >npm.log 2>&1) || true
fi
if ! test -d "$client_dir/node_modules/@elastic/elasticsearch"; then
    skip_all='npm could not install @elastic/elasticsearch@8'
    test_done
fi

test_expect_success 'start with a token the client sends as an API key' '
    cat >lb.conf <<-\EOF &&
	token = esk3y write,read logs
	EOF
    lb_start -c lb.conf
'

test_expect_success 'the client passes its product check and bulk-writes 150 documents, one dropped' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/61-es-client.js" \
        "$LB_URL" >out 2>err || { cat out err; false; } &&
    grep -q "^info 8\.11\.0 You Know, for Search$" out &&
    grep -q "^total=151 successful=150 failed=1 dropped=1$" out &&
    grep -q "^dropped 400 document_parsing_exception: bad timestamp" out
'

sql() {
    curl -s -H "Authorization: Token esk3y" -XPOST "$LB_URL/api/v1/sql" --data-binary "$1"
}

test_expect_success 'every document is stored, once' '
    sql "SELECT COUNT(*) FROM logs WHERE ts >= 0" >count &&
    grep -q "{\"count\":150}" count &&
    for h in web-0 web-1 web-2; do
        sql "SELECT COUNT(*) FROM logs WHERE host = '"'"'$h'"'"'" | grep -q "{\"count\":50}" || return 1
    done
'

test_expect_success 'the mapping, field by field: @timestamp, host.name, index, message, nesting, arrays' '
    curl -s -H "Authorization: Token esk3y" \
        "$LB_URL/api/v1/query?db=logs&host=web-1&order=asc&limit=1" >row &&
    cat >expect <<-\EOF &&
	{"ts":1714557600001000000,"host":"web-1","event":"app","tags":{},"fields":{"host.ip":"10.0.0.1","msg":"GET /items/1 \"q\"","http.response.status_code":201,"http.took":1.25,"ok":false,"tags":"[\"a\",\"b\"]"}}
	EOF
    test_cmp expect row
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
