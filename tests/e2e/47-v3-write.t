#!/bin/sh
test_description='InfluxDB 3 /api/v3/write_lp: precision names, auto precision, accept_partial, no_sync'
. "$(dirname "$0")/lib.sh"

q() { curl -s --max-time 30 "$LB_URL/api/v1/query?db=$1&host=$2&order=asc"; }
count() {
    curl -s -XPOST "$LB_URL/api/v1/sql" --data-binary "SELECT COUNT(*) FROM $1 WHERE ts >= 0" |
        sed -n "s/.*\"count\":\([0-9]*\).*/\1/p"
}

test_expect_success 'start' '
    lb_start
'

test_expect_success 'every precision name lands on the same nanosecond' '
    for p in nanosecond:1700002800000000000 microsecond:1700002800000000 \
             millisecond:1700002800000 second:1700002800 ns:1700002800000000000 \
             us:1700002800000000 ms:1700002800000 s:1700002800; do
        name=${p%%:*} t=${p#*:}
        test "$(lb_req POST "/api/v3/write_lp?db=p3&precision=$name" \
            --data-binary "e,host=p$name v=1i $t")" = 204 || return 1
        q p3 "p$name" | grep -q "\"ts\":1700002800000000000" || return 1
    done
'

test_expect_success 'auto (the default) picks the unit by magnitude' '
    printf "%s\n" "a,host=auto v=1i 1700002800" "a,host=auto v=2i 1700002800001" \
        "a,host=auto v=3i 1700002800000002" "a,host=auto v=4i 1700002800000000003" >auto.lp &&
    test "$(lb_req POST "/api/v3/write_lp?db=p3" --data-binary @auto.lp)" = 204 &&
    q p3 auto | sed -n "s/.*\"ts\":\([0-9]*\).*\"v\":\([0-9]*\).*/\1 \2/p" >got &&
    cat >expect <<-\EOF &&
	1700002800000000000 1
	1700002800001000000 2
	1700002800000002000 3
	1700002800000000003 4
	EOF
    sort -k2 got >got.sorted && test_cmp expect got.sorted &&
    test "$(lb_req POST "/api/v3/write_lp?db=p3&precision=hour" --data-binary "a v=1")" = 400 &&
    grep -q "precision must be one of auto, nanosecond" body
'

cat >mixed.lp <<'EOF'
home,host=h1,room=Sunroom temp=96 1735545600
home,host=h1,room=Sunroom temp=hi 1735549200
home,host=h1,room=Kitchen temp=21.5 1735549200
EOF

test_expect_success 'accept_partial=true (default) stores the good lines and lists the bad ones' '
    test "$(lb_req POST "/api/v3/write_lp?db=ap1&precision=second" --data-binary @mixed.lp)" = 400 &&
    cat >expect <<-\EOF &&
	{"error":"partial write of line protocol occurred","data":[{"original_line":"home,host=h1,room=Sunroom temp=hi 1735549200","line_number":2,"error_message":"invalid value (not a number, boolean or quoted string) for field \"temp\""}]}
	EOF
    test_cmp expect body &&
    test "$(count ap1)" = 2
'

test_expect_success 'accept_partial=false stores nothing and names the first bad line' '
    test "$(lb_req POST "/api/v3/write_lp?db=ap2&precision=second&accept_partial=false" \
        --data-binary @mixed.lp)" = 400 &&
    cat >expect <<-\EOF &&
	{"error":"parsing failed for write_lp endpoint","data":{"original_line":"home,host=h1,room=Sunroom temp=hi 1735549200","line_number":2,"error_message":"invalid value (not a number, boolean or quoted string) for field \"temp\""}}
	EOF
    test_cmp expect body &&
    test "$(count ap2)" = 0 &&
    sed 2d mixed.lp >good.lp &&
    test "$(lb_req POST "/api/v3/write_lp?db=ap2&precision=second&accept_partial=false" \
        --data-binary @good.lp)" = 204 &&
    test "$(count ap2)" = 2 &&
    test "$(lb_req POST "/api/v3/write_lp?db=ap2&accept_partial=maybe" --data-binary @good.lp)" = 400
'

test_expect_success 'no_sync=true answers 204 and the rows are readable at once' '
    test "$(lb_req POST "/api/v3/write_lp?db=ns1&no_sync=true" \
        --data-binary "cpu,host=n1 v=1 1700000000")" = 204 &&
    q ns1 n1 | grep -q "\"ts\":1700000000000000000"
'

test_expect_success 'db is required; gzip bodies are read; metrics count the endpoint' '
    test "$(lb_req POST "/api/v3/write_lp" --data-binary "cpu v=1")" = 400 &&
    printf "cpu,host=gz v=1 1700000000\n" | gzip >b.gz &&
    test "$(lb_req POST "/api/v3/write_lp?db=gz" -H "Content-Encoding: gzip" --data-binary @b.gz)" = 204 &&
    curl -s "$LB_URL/metrics" >m &&
    grep -q "^logbucket_write_requests_total{endpoint=\"v3_write_lp\",outcome=\"ok\"} [1-9]" m &&
    grep -q "^logbucket_write_requests_total{endpoint=\"v3_write_lp\",outcome=\"partial\"} 1$" m
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
