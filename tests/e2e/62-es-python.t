#!/bin/sh
test_description='a real client: Debian python3-elasticsearch (helpers.bulk) through /_bulk, with Basic auth'
. "$(dirname "$0")/lib.sh"

# Debian's module is in the system python, not in one a version manager puts first.
PY=python3
test -x /usr/bin/python3 && PY=/usr/bin/python3
if ! $PY -c "import elasticsearch.helpers" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        timeout 300 apt-get install -y -q python3-elasticsearch >/dev/null 2>&1 || true
    fi
fi
if ! $PY -c "import elasticsearch.helpers" 2>/dev/null; then
    skip_all='python3-elasticsearch is not installed and could not be installed'
    test_done
fi

test_expect_success 'start with a token the client sends as a Basic password' '
    cat >lb.conf <<-\EOF &&
	token = pyk3y write,read pylogs
	es_database = pylogs
	EOF
    lb_start -c lb.conf
'

cat >bulk.py <<'PY'
import sys
from elasticsearch import Elasticsearch, helpers

es = Elasticsearch([sys.argv[1]], http_auth=("elastic", "pyk3y"))
info = es.info()
print("info", info["version"]["number"], info["tagline"])

def actions():
    for i in range(120):
        yield {
            "_op_type": "create" if i % 2 else "index",
            "_source": {
                "@timestamp": 1714557600000 + i,
                "hostname": "db-%d" % (i % 4),
                "event": {"dataset": "postgres.log"},
                "message": "checkpoint %d" % i,
                "pid": 4000 + i,
                "ratio": i / 8,
            },
        }
    yield {"_op_type": "delete", "_id": "x1"}

ok, errors = helpers.bulk(es, actions(), chunk_size=50, raise_on_error=False)
print("ok", ok, "errors", len(errors))
for e in errors:
    for op, item in e.items():
        print("error", op, item["status"], item["error"]["type"])
PY

test_expect_success 'helpers.bulk stores 120 documents; the delete is refused per item' '
    timeout 60 $PY bulk.py "$LB_URL" >out 2>err || { cat out err; false; } &&
    cat >expect <<-\EOF &&
	info 8.11.0 You Know, for Search
	ok 120 errors 1
	error delete 400 illegal_argument_exception
	EOF
    test_cmp expect out
'

test_expect_success 'every document is stored with the mapping: epoch millis, hostname, event.dataset' '
    curl -s -u x:pyk3y -XPOST "$LB_URL/api/v1/sql" \
        --data-binary "SELECT COUNT(*) FROM pylogs WHERE ts >= 0" | grep -q "{\"count\":120}" &&
    curl -s -u x:pyk3y "$LB_URL/api/v1/query?db=pylogs&host=db-1&order=asc&limit=2" >rows &&
    cat >expect <<-\EOF &&
	{"ts":1714557600001000000,"host":"db-1","event":"postgres.log","tags":{},"fields":{"msg":"checkpoint 1","pid":4001,"ratio":0.125}}
	{"ts":1714557600005000000,"host":"db-1","event":"postgres.log","tags":{},"fields":{"msg":"checkpoint 5","pid":4005,"ratio":0.625}}
	EOF
    test_cmp expect rows
'

test_expect_success 'a wrong password is refused with 401' '
    test "$(lb_req POST /_bulk -u x:wrong -H "Content-Type: application/x-ndjson" \
        --data-binary "{\"index\":{}}
{\"message\":\"m\",\"event\":{\"dataset\":\"d\"}}
")" = 401 &&
    grep -qi "^X-Elastic-Product: Elasticsearch" headers
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
