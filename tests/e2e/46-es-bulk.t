#!/bin/sh
test_description='Elasticsearch bulk API with curl: handshake, probes, mapping, item errors, bad input'
. "$(dirname "$0")/lib.sh"

count() { # count DB: rows of the database
    curl -s -XPOST "$LB_URL/api/v1/sql" --data-binary "SELECT COUNT(*) FROM $1 WHERE ts >= 0" |
        sed -n "s/.*\"count\":\([0-9]*\).*/\1/p"
}
bulk() { # bulk PATH FILE [curl args]: POSTs FILE as NDJSON, prints the status
    p=$1 f=$2
    shift 2
    lb_req POST "$p" -H "Content-Type: application/x-ndjson" --data-binary "@$f" "$@"
}
is_es() { grep -qi "^X-Elastic-Product: Elasticsearch" headers; }

test_expect_success 'start' '
    lb_start --set max_body_bytes=64KiB
'

test_expect_success 'GET / gives clients a version document, browsers a redirect to /ui/' '
    test "$(lb_req GET / -H "Accept: application/json")" = 200 && is_es &&
    grep -q "\"number\":\"8\.11\.0\"" body &&
    grep -q "\"tagline\":\"You Know, for Search\"" body &&
    grep -q "\"cluster_name\":\"logbucket\"" body &&
    test "$(lb_req HEAD / -I)" = 200 && is_es &&
    test "$(lb_req GET / -H "Accept: text/html,application/xhtml+xml,*/*;q=0.8")" = 302 &&
    test "$(lb_header Location)" = /ui/
'

test_expect_success 'the probes shippers make at start are answered, with X-Elastic-Product' '
    test "$(lb_req HEAD /_cat/health -I)" = 200 && is_es &&
    test "$(lb_req GET /_cluster/health)" = 200 && is_es && grep -q "\"status\":\"green\"" body &&
    test "$(lb_req GET /_license)" = 200 && is_es && grep -q "\"status\":\"active\"" body &&
    test "$(lb_req GET /_xpack)" = 200 && is_es && grep -q "\"ilm\"" body &&
    test "$(lb_req GET /_nodes/http)" = 200 && is_es && grep -q "\"publish_address\"" body &&
    test "$(lb_req HEAD /_index_template/filebeat-8 -I)" = 404 && is_es &&
    test "$(lb_req PUT /_index_template/filebeat-8 -H "Content-Type: application/json" \
        --data-binary "{\"index_patterns\":[\"x-*\"]}")" = 200 && grep -q "\"acknowledged\":true" body &&
    test "$(lb_req PUT /_template/old -H "Content-Type: application/json" --data-binary "{}")" = 200 &&
    test "$(lb_req GET /_ilm/policy/logstash-policy)" = 404 && grep -q "resource_not_found_exception" body &&
    test "$(lb_req PUT /_ilm/policy/logstash-policy -H "Content-Type: application/json" \
        --data-binary "{\"policy\":{}}")" = 200 && is_es &&
    test "$(lb_req HEAD /_alias/logstash -I)" = 200 && is_es &&
    test "$(lb_req GET /_ingest/pipeline/p)" = 404 &&
    test "$(lb_req PUT /_ingest/pipeline/p -H "Content-Type: application/json" --data-binary "{}")" = 200
'

test_expect_success 'POST /{index}/_bulk stores index and create documents with the mapping' '
    cat >b1 <<-\EOF &&
	{"index":{"_id":"a1"}}
	{"@timestamp":"2024-05-01T10:00:00.5Z","host":{"name":"web-1","ip":"10.0.0.1"},"message":"GET / 200","http":{"status":200,"took":0.5},"ok":true}
	{"create":{"_index":"nginx.error"}}
	{"@timestamp":1714557600250,"host":"web-1","message":"upstream timed out","level":"error"}
	{"index":{}}
	{"hostname":"web-2","message":"no timestamp: arrival time"}
	EOF
    test "$(bulk /nginx/_bulk b1)" = 200 && is_es &&
    grep -q "^{\"took\":[0-9]*,\"errors\":false,\"items\":\[{\"index\":{\"_index\":\"nginx\",\"_id\":\"a1\",\"_version\":1,\"result\":\"created\"" body &&
    grep -q "{\"create\":{\"_index\":\"nginx.error\",\"_id\":\"[A-Za-z0-9_-]\{20\}\"" body &&
    test $(grep -o "\"status\":201" body | wc -l) = 3 &&
    curl -s "$LB_URL/api/v1/query?db=logs&host=web-1&order=asc" >rows &&
    cat >expect <<-\EOF &&
	{"ts":1714557600250000000,"host":"web-1","event":"nginx.error","tags":{},"fields":{"msg":"upstream timed out","level":"error"}}
	{"ts":1714557600500000000,"host":"web-1","event":"nginx","tags":{},"fields":{"host.ip":"10.0.0.1","msg":"GET / 200","http.status":200,"http.took":0.5,"ok":true}}
	EOF
    test_cmp expect rows &&
    curl -s "$LB_URL/api/v1/query?db=logs&host=web-2" >rows2 &&
    grep -q "\"event\":\"nginx\",\"tags\":{},\"fields\":{\"msg\":\"no timestamp: arrival time\"}" rows2 &&
    test "$(count logs)" = 3
'

test_expect_success 'filter_path keeps what shippers ask for' '
    head -n 4 b1 >b1f &&
    test "$(bulk "/nginx/_bulk?db=es6&filter_path=errors,items.*.error,items.*.status" b1f)" = 200 &&
    echo "{\"errors\":false,\"items\":[{\"index\":{\"status\":201}},{\"create\":{\"status\":201}}]}" >expect &&
    test_cmp expect body &&
    test "$(bulk "/nginx/_bulk?db=es6&filter_path=errors" b1f)" = 200 &&
    echo "{\"errors\":false}" >expect && test_cmp expect body
'

test_expect_success 'a retried request stores nothing twice' '
    head -n 4 b1 >b1a &&
    test "$(bulk /nginx/_bulk b1a)" = 200 &&
    test "$(count logs)" = 3
'

test_expect_success 'db= names another database; bad documents fail per item, the rest is stored' '
    cat >b2 <<-\EOF &&
	{"index":{"_index":"app"}}
	{"@timestamp":"2024-05-01T10:00:01Z","host":"h1","message":"good one"}
	{"index":{"_index":"app"}}
	{"@timestamp":true,"host":"h1","message":"timestamp of the wrong type"}
	{"index":{"_index":"app"}}
	{"host":"h1","message":"broken
	{"index":{"_index":"app"}}
	["not","an","object"]
	{"index":{"_index":"app"}}
	{"@timestamp":"yesterday","host":"h1","message":"bad date"}
	{"index":{"_index":"app"}}
	{"@timestamp":"2024-05-01T10:00:02Z","host":"h1"}
	{"delete":{"_index":"app","_id":"1"}}
	{"update":{"_index":"app","_id":"1"}}
	{"doc":{"message":"skipped with its action"}}
	{"index":{"_index":"app"}}
	{"@timestamp":"2024-05-01T10:00:03Z","host":"h1","message":"good two"}
	EOF
    test "$(bulk "/_bulk?db=es2" b2)" = 200 &&
    grep -q "\"errors\":true" body &&
    test $(grep -o "\"status\":201" body | wc -l) = 2 &&
    test $(grep -o "\"status\":400" body | wc -l) = 7 &&
    test $(grep -o "document_parsing_exception" body | wc -l) = 5 &&
    grep -q "{\"delete\":{\"_index\":\"app\",\"_id\":\"1\",\"status\":400,\"error\":{\"type\":\"illegal_argument_exception\",\"reason\":\"delete is not supported" body &&
    grep -q "{\"update\":{\"_index\":\"app\",\"_id\":\"1\",\"status\":400" body &&
    grep -q "bad timestamp (want RFC 3339 or epoch milliseconds) in @timestamp" body &&
    grep -q "invalid JSON" body &&
    grep -q "line is not a JSON object" body &&
    grep -q "no fields" body &&
    test "$(count es2)" = 2
'

test_expect_success 'an action without its document fails the whole request; nothing is stored' '
    printf "{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"m1\"}\n{\"index\":{\"_index\":\"t\"}}\n" >b3 &&
    test "$(bulk "/_bulk?db=es3" b3)" = 400 && is_es &&
    grep -q "\"type\":\"illegal_argument_exception\"" body &&
    grep -q "its document is missing" body && grep -q "\"status\":400}" body &&
    test "$(count es3)" = 0
'

test_expect_success 'a body cut without its final newline fails whole; nothing is stored' '
    printf "{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"m1\"}\n{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"m2\"}" >b4 &&
    test "$(bulk "/_bulk?db=es3" b4)" = 400 &&
    grep -q "must be terminated by a newline" body &&
    test "$(count es3)" = 0
'

test_expect_success 'a malformed or unknown action line fails whole, even after good pairs' '
    printf "{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"m1\"}\n{\"index\":\n{\"message\":\"m2\"}\n" >b5 &&
    test "$(bulk "/_bulk?db=es3" b5)" = 400 &&
    grep -q "Malformed action/metadata line \[3\]" body &&
    printf "{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"m1\"}\n{\"upsert\":{}}\n{\"message\":\"m2\"}\n" >b6 &&
    test "$(bulk "/_bulk?db=es3" b6)" = 400 &&
    grep -q "found upsert" body &&
    test "$(count es3)" = 0
'

test_expect_success 'an oversize body is refused with 413; nothing is stored' '
    i=0 && : >big &&
    while [ $i -lt 700 ]; do
        printf "{\"index\":{\"_index\":\"t\"}}\n{\"message\":\"%0100d\"}\n" $i >>big
        i=$((i + 1))
    done &&
    test "$(bulk "/_bulk?db=es4" big)" = 413 && is_es &&
    grep -q "content_too_long_exception" body &&
    test "$(bulk "/_bulk?db=es4" big -H "Transfer-Encoding: chunked")" = 413 &&
    test "$(count es4)" = 0
'

test_expect_success 'gzip bodies are read; a bad gzip body is refused with 400' '
    printf "{\"index\":{\"_index\":\"z\"}}\n{\"host\":\"gz\",\"message\":\"zipped\"}\n" | gzip >b7.gz &&
    test "$(bulk "/_bulk?db=es5" b7.gz -H "Content-Encoding: gzip")" = 200 &&
    grep -q "\"errors\":false" body &&
    printf "not gzip at all" >b8 &&
    test "$(bulk "/_bulk?db=es5" b8 -H "Content-Encoding: gzip")" = 400 && is_es &&
    grep -q "bad gzip body" body &&
    head -c 20 b7.gz >b9.gz &&
    test "$(bulk "/_bulk?db=es5" b9.gz -H "Content-Encoding: gzip")" = 400 &&
    test "$(count es5)" = 1
'

test_expect_success 'other methods and paths are refused' '
    test "$(lb_req GET /_bulk)" = 405 &&
    test "$(lb_req POST /a/b/_bulk --data-binary x)" = 404
'

test_expect_success '/metrics counts the bulk requests, documents and bytes' '
    curl -s "$LB_URL/metrics" >m &&
    grep -q "^logbucket_write_requests_total{endpoint=\"es_bulk\",outcome=\"ok\"} [1-9]" m &&
    grep -q "^logbucket_write_requests_total{endpoint=\"es_bulk\",outcome=\"partial\"} 1$" m &&
    grep -q "^logbucket_write_requests_total{endpoint=\"es_bulk\",outcome=\"too_big\"} 2$" m &&
    grep -q "^logbucket_write_lines_total{endpoint=\"es_bulk\",result=\"written\"} [1-9]" m &&
    grep -q "^logbucket_write_lines_total{endpoint=\"es_bulk\",result=\"dropped\"} [1-9]" m &&
    grep -q "^logbucket_write_body_bytes_total{endpoint=\"es_bulk\"} [1-9]" m
'

test_expect_success 'the daemon keeps serving' '
    test "$(lb_req GET /ping)" = 204
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
