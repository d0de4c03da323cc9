#!/bin/sh
test_description='ingest endpoints: line protocol v1/v2, raw lines, JSON lines, gzip, errors'
. "$(dirname "$0")/lib.sh"

q() { # q DB HOST [extra query args]: NDJSON rows of a host, newest first
    curl -s --max-time 30 "$LB_URL/api/v1/query?db=$1&host=$2$3"
}

test_expect_success 'start' '
    lb_start --set max_body_bytes=64KiB --set reject_older_than=0
'

test_expect_success 'POST /write stores a point and answers 204' '
    test "$(lb_req POST "/write?db=m1&precision=ns" \
        --data-binary "cpu,host=web-1,region=eu value=0.5,code=200i,msg=\"GET /\" 1700000000000000000")" = 204 &&
    q m1 web-1 >rows &&
    cat >expect <<-\EOF &&
	{"ts":1700000000000000000,"host":"web-1","event":"cpu","tags":{"region":"eu"},"fields":{"value":0.5,"code":200,"msg":"GET /"}}
	EOF
    test_cmp expect rows
'

test_expect_success 'field types survive: float always has a point, uint, bool, string escapes' '
    test "$(lb_req POST "/write?db=m1" --data-binary "t,host=h2 f=1,u=7u,b=t,B=FALSE,s=\"a\\\"b\\\\c\" 1700000000000000001")" = 204 &&
    q m1 h2 >rows &&
    grep -q "\"f\":1.0" rows &&
    grep -q "\"u\":7" rows &&
    grep -q "\"b\":true" rows &&
    grep -q "\"B\":false" rows &&
    grep -q "\"s\":\"a\\\\\"b\\\\\\\\c\"" rows
'

test_expect_success 'escaped names and tag values' '
    test "$(lb_req POST "/write?db=m1" --data-binary "my\ meas\,x,host=h\ 3,k\=1=v\,2 x=1i 1700000000000000002")" = 204 &&
    q m1 "h%203" >rows &&
    grep -q "\"event\":\"my meas,x\"" rows &&
    grep -q "\"k=1\":\"v,2\"" rows
'

test_expect_success 'every precision lands on the same nanosecond' '
    for p in h m s ms us ns n u; do
        case $p in
        h) t=472223;; m) t=28333380;; s) t=1700002800;; ms) t=1700002800000;;
        us|u) t=1700002800000000;; ns|n) t=1700002800000000000;;
        esac
        test "$(lb_req POST "/write?db=prec&precision=$p" --data-binary "e,host=p$p v=1i $t")" = 204 || return 1
        q prec p$p | grep -q "\"ts\":1700002800000000000" || return 1
    done
'

test_expect_success 'a line without a timestamp takes the arrival time' '
    before=$(date +%s) &&
    test "$(lb_req POST "/write?db=m1" --data-binary "now,host=hn v=1")" = 204 &&
    after=$(date +%s) &&
    ts=$(q m1 hn | sed -n "s/.*\"ts\":\([0-9]*\).*/\1/p") &&
    test $((ts / 1000000000)) -ge $before &&
    test $((ts / 1000000000)) -le $after
'

test_expect_success 'POST /api/v2/write with bucket and org' '
    test "$(lb_req POST "/api/v2/write?bucket=v2db&org=acme&precision=s" \
        --data-binary "mem,host=h1 used=3i 1700000000")" = 204 &&
    q v2db h1 | grep -q "\"used\":3"
'

test_expect_success 'bucket=db/rp and rp= are accepted' '
    test "$(lb_req POST "/api/v2/write?bucket=v2rp/autogen&org=o" --data-binary "m,host=a v=1i 1")" = 204 &&
    q v2rp a | grep -q "\"v\":1" &&
    test "$(lb_req POST "/write?db=v1rp&rp=autogen" --data-binary "m,host=a v=2i 1")" = 204 &&
    q v1rp a | grep -q "\"v\":2"
'

test_expect_success 'missing db is 400 with a JSON error' '
    test "$(lb_req POST /write --data-binary "m,host=a v=1 1")" = 400 &&
    grep -q "\"error\":" body &&
    test -n "$(lb_header X-Influxdb-Error)" &&
    test "$(lb_req POST "/api/v2/write?org=o" --data-binary "m,host=a v=1 1")" = 400
'

test_expect_success 'a partial write stores the good lines and names the bad ones' '
    printf "pw,host=g v=1i 1\npw,host=g v= 2\npw,host=g v=3i 3\npw,host=g 4\n" >lp &&
    test "$(lb_req POST "/write?db=pw" --data-binary @lp)" = 400 &&
    grep -q "partial write" body &&
    grep -q "line 2:" body &&
    grep -q "line 4:" body &&
    ! grep -q "line 1:" body &&
    grep -q "\"written\":2" body &&
    grep -q "\"dropped\":2" body &&
    test $(q pw g | wc -l) = 2
'

test_expect_success 'every line bad is 400 unable to parse and stores nothing' '
    test "$(lb_req POST "/write?db=allbad" --data-binary "garbage
more garbage")" = 400 &&
    grep -q "unable to parse" body &&
    test -z "$(q allbad x)"
'

test_expect_success 'an empty body is 204' '
    test "$(lb_req POST "/write?db=m1" --data-binary "")" = 204
'

test_expect_success 'a body over max_body_bytes is 413 and stores nothing' '
    awk "BEGIN { for (i = 0; i < 5000; i++) printf \"big,host=b v=%di %d\\n\", i, i + 1 }" >big.lp &&
    test $(wc -c <big.lp) -gt 65536 &&
    test "$(lb_req POST "/write?db=big" --data-binary @big.lp)" = 413 &&
    grep -q "\"error\":" body &&
    ! q big b | grep -q "\"ts\""
'

test_expect_success 'a gzip body is accepted' '
    printf "gz,host=z v=1i 10\ngz,host=z v=2i 20\n" | gzip -c >body.gz &&
    test "$(lb_req POST "/write?db=gz" -H "Content-Encoding: gzip" --data-binary @body.gz)" = 204 &&
    test $(q gz z | wc -l) = 2
'

test_expect_success 'a gzip bomb gets 413, not an out-of-memory' '
    head -c 20000000 /dev/zero | gzip -c >bomb.gz &&
    test $(wc -c <bomb.gz) -lt 65536 &&
    test "$(lb_req POST "/write?db=gz" -H "Content-Encoding: gzip" --data-binary @bomb.gz)" = 413 &&
    test "$(lb_req GET /ping)" = 204
'

test_expect_success 'a corrupt gzip body is 400' '
    printf "not gzip at all" >notgz &&
    test "$(lb_req POST "/write?db=gz" -H "Content-Encoding: gzip" --data-binary @notgz)" = 400
'

test_expect_success 'POST /query CREATE DATABASE as Telegraf sends it, then its writes land there' '
    test "$(lb_req POST "/query" --data-urlencode "q=CREATE DATABASE \"tg\"")" = 200 &&
    grep -q "^{\"results\":\[{\"statement_id\":0}\]}" body &&
    test "$(lb_req POST "/query?q=CREATE%20DATABASE%20tg")" = 200 &&
    grep -q "^{\"results\":\[{\"statement_id\":0}\]}" body &&
    test "$(lb_req GET "/query?q=SHOW%20DATABASES")" = 200 &&
    grep -q "\"name\":\"databases\",\"columns\":\[\"name\"\],\"values\":\[.*\[\"tg\"\]" body &&
    test "$(lb_req POST "/write?db=tg" --data-binary "cpu,host=tg-1 usage=1.5")" = 204 &&
    test $(q tg tg-1 | wc -l) = 1
'

test_expect_success 'POST /query WITH DURATION sets the TTL; a bad name is a statement error' '
    test "$(lb_req POST "/query" --data-urlencode "q=CREATE DATABASE tg7 WITH DURATION 7d REPLICATION 1")" = 200 &&
    test "$(lb_req POST /api/v1/sql --data-binary "SHOW DATABASES")" = 200 &&
    grep -q "\"name\":\"tg7\".*\"ttl\":\"7d\"" body &&
    test "$(lb_req POST "/query" --data-urlencode "q=CREATE DATABASE \"no/slash\"")" = 200 &&
    grep -q "\"statement_id\":0,\"error\":\"bad database name" body
'

test_expect_success 'POST /query: a statement InfluxQL lacks is a 400 parse error, a missing q too' '
    test "$(lb_req POST "/query?db=tg" --data-urlencode "q=GRANT ALL TO u")" = 400 &&
    grep -q "^{\"error\":\"error parsing query: GRANT statements are not supported" body &&
    lb_header X-Influxdb-Error | grep -q "error parsing query" &&
    test "$(lb_req POST "/query")" = 400 &&
    grep -q "missing required parameter" body &&
    test "$(lb_req DELETE "/query")" = 405
'

test_expect_success 'raw lines: one event per line, field msg, strictly increasing ts' '
    printf "first line\nsecond line\r\nthird line\n" >raw &&
    test "$(lb_req POST "/api/v1/ingest?db=raw&host=app-1&event=log" --data-binary @raw)" = 204 &&
    q raw app-1 "&order=asc" >rows &&
    test $(wc -l <rows) = 3 &&
    sed -n 1p rows | grep -q "\"msg\":\"first line\"" &&
    sed -n 2p rows | grep -q "\"msg\":\"second line\"" &&
    sed -n "s/.*\"ts\":\([0-9]*\).*/\1/p" rows >ts &&
    sort -n -u ts | test_cmp ts -
'

test_expect_success 'raw lines: a line in another encoding is kept, bad bytes as U+FFFD' '
    printf "caf\351 cr\350me\n" >latin1 &&
    test "$(lb_req POST "/api/v1/ingest?db=raw8&host=h&event=log" --data-binary @latin1)" = 204 &&
    q raw8 h >rows &&
    test $(wc -l <rows) = 1 &&
    printf "caf\357\277\275 cr\357\277\275me" >want &&
    grep -q "\"msg\":\"$(cat want)\"" rows
'

test_expect_success 'raw lines without host or event are 400' '
    test "$(lb_req POST "/api/v1/ingest?db=raw" --data-binary "x")" = 400
'

test_expect_success 'JSON lines: ts, host, event, nested fields flattened' '
    printf "%s\n" "{\"ts\":1700000000000000000,\"host\":\"j1\",\"event\":\"req\",\"status\":200,\"lat\":0.25,\"ok\":true,\"http\":{\"method\":\"GET\"}}" \
        "{\"ts\":\"2023-11-14T22:13:21Z\",\"host\":\"j1\",\"event\":\"req\",\"status\":404}" >jl &&
    test "$(lb_req POST "/api/v1/ingest?db=jl&format=jsonl" --data-binary @jl)" = 204 &&
    q jl j1 "&order=asc" >rows &&
    test $(wc -l <rows) = 2 &&
    sed -n 1p rows | grep -q "\"http.method\":\"GET\"" &&
    sed -n 1p rows | grep -q "\"lat\":0.25" &&
    sed -n 2p rows | grep -q "\"ts\":1700000001000000000"
'

test_expect_success 'JSON lines: a bad line is a partial write' '
    printf "%s\n" "{\"host\":\"j2\",\"event\":\"e\",\"v\":1}" "{not json" "{\"host\":\"j2\",\"v\":2}" >jl2 &&
    test "$(lb_req POST "/api/v1/ingest?db=jl&format=jsonl" --data-binary @jl2)" = 400 &&
    grep -q "line 2:" body &&
    grep -q "line 3:" body &&
    test $(q jl j2 | wc -l) = 1
'

test_expect_success 'JSON lines: host= and event= in the URL for lines without them (log shippers)' '
    printf "%s\n" "{\"log\":\"a\",\"ts\":\"2024-05-01T10:00:00Z\"}" \
        "{\"log\":\"b\",\"event\":\"own\",\"ts\":\"2024-05-01T10:00:01Z\"}" >jl3 &&
    test "$(lb_req POST "/api/v1/ingest?db=jl&format=jsonl&host=ship-1&event=app" --data-binary @jl3)" = 204 &&
    q jl ship-1 "&order=asc" >rows &&
    test $(wc -l <rows) = 2 &&
    sed -n 1p rows | grep -q "\"event\":\"app\".*\"log\":\"a\"" &&
    sed -n 2p rows | grep -q "\"event\":\"own\".*\"log\":\"b\"" &&
    test "$(lb_req POST "/api/v1/ingest?db=jl&format=jsonl&event=" --data-binary @jl3)" = 400 &&
    grep -q "event= must not be empty" body
'

test_expect_success 'stop and restart keeps every acknowledged row' '
    q m1 web-1 >before &&
    lb_stop 10 &&
    lb_start --set max_body_bytes=64KiB &&
    q m1 web-1 >after &&
    test_cmp before after &&
    test $(q pw g | wc -l) = 2
'

test_expect_success 'auto_create_databases = false: unknown db is 404' '
    lb_stop 10 &&
    lb_start --set auto_create_databases=false &&
    test "$(lb_req POST "/write?db=newdb" --data-binary "m,host=a v=1 1")" = 404 &&
    grep -q "newdb" body &&
    test "$(lb_req POST "/write?db=m1" --data-binary "m,host=a v=1 1")" = 204
'

test_expect_success 'SIGTERM during a slow write: the write completes, exit 0 within 5 s' '
    awk "BEGIN { for (i = 0; i < 300; i++) printf \"slow,host=slowh v=%di %d\\n\", i, i + 1 }" >slow.lp &&
    ( curl -s -o slow.body -w "%{http_code}" --limit-rate 2K --data-binary @slow.lp \
        "$LB_URL/write?db=m1" >slow.code & echo $! >curl.pid ) &&
    sleep 1 &&
    start=$(date +%s) &&
    lb_stop 5 &&
    end=$(date +%s) &&
    wait_for_curl=0 &&
    while kill -0 $(cat curl.pid) 2>/dev/null && test $wait_for_curl -lt 100; do sleep 0.1; wait_for_curl=$((wait_for_curl+1)); done &&
    test "$(cat slow.code)" = 204 &&
    test $((end - start)) -le 5 &&
    lb_start &&
    test $(q m1 slowh | wc -l) = 300
'

test_done
