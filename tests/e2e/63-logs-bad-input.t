#!/bin/sh
test_description='Loki push and OTLP logs: bad input gets a clear error, nothing half-stored, the daemon keeps serving'
. "$(dirname "$0")/lib.sh"

body() {
    perl "$LB_TOP/tests/e2e/63-logs-bodies.pl" "$1" >"$1.bin"
}

# push PATH BODYFILE [curl args]: prints the status; reply in ./body
loki() {
    f=$1
    shift
    lb_req POST "/loki/api/v1/push?db=bad" -H "Content-Type: application/x-protobuf" \
        --data-binary "@$f" "$@"
}
otlp() {
    f=$1
    shift
    lb_req POST "/v1/logs?db=bad" -H "Content-Type: application/x-protobuf" \
        --data-binary "@$f" "$@"
}
count() {
    curl -s -XPOST "$LB_URL/api/v1/sql" --data-binary "SELECT COUNT(*) FROM bad WHERE ts >= 0"
}

test_expect_success 'start (max_body_bytes 64KiB)' '
    lb_start --set max_body_bytes=64KiB
'

test_expect_success 'good Loki protobuf and OTLP protobuf bodies are stored' '
    body loki_good && test "$(loki loki_good.bin)" = 204 &&
    body otlp_good && test "$(otlp otlp_good.bin)" = 200 &&
    test "$(lb_header Content-Type)" = application/x-protobuf &&
    test ! -s body &&
    test "$(count)" = "{\"count\":3}"
'

# name expected-status expected-text
for case in \
    "loki_truncated 400 length-delimited field runs past the end" \
    "loki_badvarint 400 varint over 64 bits" \
    "loki_wiretype 400 wrong wire type for PushRequest.streams" \
    "loki_group 400 groups are not supported" \
    "loki_badsnappy 400 bad snappy body" \
    "loki_snappybomb 413 snappy body inflates to 2147483648 bytes" \
    "loki_badlabels 400 bad stream labels: label value must be a quoted string"
do
    set -- $case
    name=$1 status=$2
    shift 2
    text=$*
    test_expect_success "Loki $name: $status, \"$text\", nothing stored" "
        body $name && test \"\$(loki $name.bin)\" = $status &&
        test \"\$(lb_header Content-Type)\" = \"text/plain; charset=utf-8\" &&
        grep -q \"$text\" body &&
        test \"\$(count)\" = \"{\\\"count\\\":3}\"
    "
done

for case in \
    "otlp_truncated 400 length-delimited field runs past the end" \
    "otlp_badvarint 400 varint over 64 bits" \
    "otlp_wiretype 400 wrong wire type for LogRecord field 1" \
    "otlp_deep 400 AnyValue nested too deep"
do
    set -- $case
    name=$1 status=$2
    shift 2
    text=$*
    test_expect_success "OTLP $name: $status with a google.rpc.Status, nothing stored" "
        body $name && test \"\$(otlp $name.bin)\" = $status &&
        test \"\$(lb_header Content-Type)\" = application/x-protobuf &&
        grep -q \"$text\" body &&
        test \"\$(count)\" = \"{\\\"count\\\":3}\"
    "
done

test_expect_success 'Loki: a refused entry is named in a 400, the other entry is stored' '
    body loki_partial && test "$(loki loki_partial.bin)" = 400 &&
    grep -q "^1 of 2 entries refused" body &&
    grep -q "^entry 1: invalid UTF-8 in a value" body &&
    test "$(count)" = "{\"count\":4}"
'

test_expect_success 'OTLP: a refused record gives 200 with partialSuccess, the other is stored' '
    body otlp_partial && test "$(otlp otlp_partial.bin -H "Accept: application/json")" = 200 &&
    grep -q "log record 2: invalid UTF-8 in a key" body &&
    test "$(count)" = "{\"count\":5}" &&
    test "$(lb_req POST "/v1/logs?db=bad" -H "Content-Type: application/json" --data-binary \
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"a\"}},{\"body\":{\"stringValue\":\"b\"},\"attributes\":[{\"key\":\"\",\"value\":{\"intValue\":\"1\"}}]}]}]}]}")" = 200 &&
    cat body && grep -q "{\"partialSuccess\":{\"rejectedLogRecords\":\"1\",\"errorMessage\":\"log record 2: empty key\"}}" body &&
    test "$(count)" = "{\"count\":6}"
'

json_case() {
    ep=$1 want=$2 data=$3
    lb_req POST "$ep?db=bad" -H "Content-Type: application/json" --data-binary "$data" >status &&
    test "$(cat status)" = 400 && grep -q "$want" body
}

test_expect_success 'Loki JSON: bad JSON, wrong types, bad timestamps are 400 with the reason' '
    json_case /loki/api/v1/push "bad JSON at line 1" "{\"streams\":[" &&
    json_case /loki/api/v1/push "\"streams\" array" "{\"streams\":5}" &&
    json_case /loki/api/v1/push "stream label job must be a string" \
        "{\"streams\":[{\"stream\":{\"job\":1},\"values\":[]}]}" &&
    json_case /loki/api/v1/push "entry line must be a string" \
        "{\"streams\":[{\"stream\":{},\"values\":[[\"1\",2]]}]}" &&
    json_case /loki/api/v1/push "nanoseconds since the epoch" \
        "{\"streams\":[{\"stream\":{},\"values\":[[\"12x\",\"l\"]]}]}" &&
    json_case /loki/api/v1/push "nanoseconds since the epoch" \
        "{\"streams\":[{\"stream\":{},\"values\":[[\"99999999999999999999\",\"l\"]]}]}" &&
    json_case /loki/api/v1/push "structured metadata must be an object" \
        "{\"streams\":[{\"stream\":{},\"values\":[[\"1\",\"l\",[1]]]}]}" &&
    test "$(count)" = "{\"count\":6}"
'

test_expect_success 'a malformed entry after good ones stores nothing of the body' '
    json_case /loki/api/v1/push "entry line must be a string" \
        "{\"streams\":[{\"stream\":{\"job\":\"a\"},\"values\":[[\"1\",\"good\"],[\"2\",\"good\"],[\"3\",null]]}]}" &&
    test "$(count)" = "{\"count\":6}"
'

test_expect_success 'OTLP JSON: bad JSON and wrong types are 400 with a google.rpc.Status' '
    json_case /v1/logs "bad JSON" "{\"resourceLogs\":" &&
    grep -q "^{\"code\":3,\"message\":" body &&
    json_case /v1/logs "resourceLogs must be an array" "{\"resourceLogs\":{}}" &&
    json_case /v1/logs "timeUnixNano must be an integer" \
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"soon\"}]}]}]}" &&
    json_case /v1/logs "intValue must be an integer" \
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"attributes\":[{\"key\":\"a\",\"value\":{\"intValue\":\"1.5\"}}]}]}]}]}" &&
    json_case /v1/logs "an AnyValue must be an object" \
        "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":\"plain\"}]}]}]}" &&
    test "$(count)" = "{\"count\":6}"
'

test_expect_success 'unsupported Content-Type and Content-Encoding are 415' '
    test "$(lb_req POST "/v1/logs?db=bad" -H "Content-Type: text/plain" --data-binary x)" = 415 &&
    test "$(lb_req POST "/loki/api/v1/push?db=bad" -H "Content-Type: application/json" \
        -H "Content-Encoding: br" --data-binary x)" = 415
'

test_expect_success 'oversize bodies are 413: raw, and gzip that inflates past the limit' '
    head -c 70000 /dev/zero | tr "\0" a >big &&
    test "$(lb_req POST "/loki/api/v1/push?db=bad" -H "Content-Type: application/json" \
        --data-binary @big)" = 413 &&
    head -c 200000 /dev/zero | gzip -c >bomb.gz &&
    test "$(lb_req POST "/v1/logs?db=bad" -H "Content-Type: application/json" \
        -H "Content-Encoding: gzip" --data-binary @bomb.gz)" = 413 &&
    test "$(count)" = "{\"count\":6}"
'

test_expect_success 'gzip bodies are accepted on both endpoints' '
    printf "{\"streams\":[{\"stream\":{\"job\":\"gz\"},\"values\":[[\"1700000000000000009\",\"zipped\"]]}]}" |
        gzip -c >loki.gz &&
    test "$(lb_req POST "/loki/api/v1/push?db=bad" -H "Content-Type: application/json" \
        -H "Content-Encoding: gzip" --data-binary @loki.gz)" = 204 &&
    body otlp_good && gzip -c otlp_good.bin >otlp.gz &&
    test "$(lb_req POST "/otlp/v1/logs?db=bad" -H "Content-Type: application/x-protobuf" \
        -H "Content-Encoding: gzip" --data-binary @otlp.gz)" = 200 &&
    test "$(count)" = "{\"count\":7}"
'

test_expect_success 'a retried push stores nothing twice' '
    body loki_good && test "$(loki loki_good.bin)" = 204 && test "$(loki loki_good.bin)" = 204 &&
    test "$(count)" = "{\"count\":7}"
'

test_expect_success 'the daemon keeps serving; /metrics counts the rejects' '
    test "$(lb_req GET /ping)" = 204 &&
    curl -s "$LB_URL/metrics" >metrics &&
    grep -q "^logbucket_write_requests_total{endpoint=\"loki\",outcome=\"bad_request\"} " metrics &&
    grep -q "^logbucket_write_requests_total{endpoint=\"otlp\",outcome=\"too_big\"} 1$" metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"loki\",result=\"dropped\"} 1$" metrics &&
    grep -q "^logbucket_write_lines_total{endpoint=\"otlp\",result=\"dropped\"} 2$" metrics
'

test_expect_success 'restart with a write token: pushes need it (Basic auth as Loki clients send it)' '
    lb_stop 10 &&
    cat >auth.conf <<-\EOF &&
	token = wr1ter write bad
	EOF
    lb_start -c auth.conf &&
    body loki_good &&
    test "$(loki loki_good.bin)" = 401 &&
    test "$(loki loki_good.bin -u tenant:wr1ter)" = 204 &&
    test "$(otlp otlp_good.bin -H "Authorization: Bearer wr1ter")" = 200 &&
    test "$(lb_req POST "/v1/logs?db=other" -H "Content-Type: application/x-protobuf" \
        --data-binary @otlp_good.bin -H "Authorization: Bearer wr1ter")" = 403
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
