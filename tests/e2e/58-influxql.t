#!/bin/sh
test_description='InfluxQL on /query with curl: every statement kind, GET and POST, q as URL argument and form field, db, rp, epoch, pretty, chunked and chunk_size, statement lists, InfluxDB 1.x reply shapes and status codes, and the rights of tokens'
. "$(dirname "$0")/lib.sh"

# The rows (line protocol, seconds; T = 2023-11-14T22:13:20Z):
#   cpu,host=a,region=eu usage=1.5,n=3i  T       mem,host=a used=100i T
#   cpu,host=a,region=eu usage=2.5,n=5i  T+30    mem,host=b used=300i T+30
#   cpu,host=b,region=us usage=10,n=7i   T+60
#   cpu,host=a,region=eu usage=4.5,n=9i  T+150
T=1700000000

iq() { # iq STATEMENT [curl args]: GET /query?db=d&q=...; prints the status
    stmt=$1
    shift
    lb_req GET /query -G --data-urlencode "db=d" --data-urlencode "q=$stmt" "$@"
}

# body_is TEXT: ./body is exactly TEXT and a newline
body_is() {
    printf "%s\n" "$1" >want &&
    test_cmp want body
}

test_expect_success 'start, create the database with InfluxQL and write' '
    lb_start &&
    test "$(lb_req POST /query --data-urlencode "q=CREATE DATABASE \"d\" WITH DURATION INF")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0}]}" &&
    cat >lines <<-EOF &&
	cpu,host=a,region=eu usage=1.5,n=3i ${T}000000000
	cpu,host=a,region=eu usage=2.5,n=5i $((T + 30))000000000
	cpu,host=b,region=us usage=10,n=7i $((T + 60))000000000
	cpu,host=a,region=eu usage=4.5,n=9i $((T + 150))000000000
	mem,host=a used=100i ${T}000000000
	mem,host=b used=300i $((T + 30))000000000
	EOF
    test "$(lb_req POST "/write?db=d" --data-binary @lines)" = 204
'

test_expect_success 'SHOW DATABASES, MEASUREMENTS, RETENTION POLICIES' '
    test "$(iq "SHOW DATABASES")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"databases\",\"columns\":[\"name\"],\"values\":[[\"d\"]]}]}]}" &&
    test "$(iq "SHOW MEASUREMENTS")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],\"values\":[[\"cpu\"],[\"mem\"]]}]}]}" &&
    test "$(iq "SHOW MEASUREMENTS WITH MEASUREMENT =~ /m.*/ LIMIT 1")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],\"values\":[[\"mem\"]]}]}]}" &&
    test "$(iq "SHOW MEASUREMENTS WHERE \"region\" = '"'"'us'"'"'")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"measurements\",\"columns\":[\"name\"],\"values\":[[\"cpu\"]]}]}]}" &&
    test "$(iq "SHOW RETENTION POLICIES ON d")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"name\",\"duration\",\"shardGroupDuration\",\"replicaN\",\"default\"],\"values\":[[\"autogen\",\"0s\",\"168h0m0s\",1,true]]}]}]}" &&
    test "$(iq "SHOW MEASUREMENT EXACT CARDINALITY")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"count\"],\"values\":[[2]]}]}]}"
'

test_expect_success 'SHOW TAG KEYS, TAG VALUES, FIELD KEYS, SERIES' '
    test "$(iq "SHOW TAG KEYS FROM cpu")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"tagKey\"],\"values\":[[\"host\"],[\"region\"]]}]}]}" &&
    test "$(iq "SHOW TAG VALUES WITH KEY = \"host\"")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[[\"host\",\"a\"],[\"host\",\"b\"]]},{\"name\":\"mem\",\"columns\":[\"key\",\"value\"],\"values\":[[\"host\",\"a\"],[\"host\",\"b\"]]}]}]}" &&
    test "$(iq "SHOW TAG VALUES FROM cpu WITH KEY =~ /reg/ WHERE host = '"'"'a'"'"'")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"key\",\"value\"],\"values\":[[\"region\",\"eu\"]]}]}]}" &&
    test "$(iq "SHOW FIELD KEYS")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"fieldKey\",\"fieldType\"],\"values\":[[\"n\",\"integer\"],[\"usage\",\"float\"]]},{\"name\":\"mem\",\"columns\":[\"fieldKey\",\"fieldType\"],\"values\":[[\"used\",\"integer\"]]}]}]}" &&
    test "$(iq "SHOW SERIES FROM cpu")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"key\"],\"values\":[[\"cpu,host=a,region=eu\"],[\"cpu,host=b,region=us\"]]}]}]}"
'

test_expect_success 'SELECT raw rows: RFC 3339 times without epoch, fields and tags, WHERE on tags and fields' '
    test "$(iq "SELECT * FROM \"d\".\"autogen\".\"cpu\" WHERE time >= '"'"'2023-11-14T22:13:20Z'"'"' AND usage > 2 AND region =~ /e/")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"host\",\"n\",\"region\",\"usage\"],\"values\":[[\"2023-11-14T22:13:50Z\",\"a\",5,\"eu\",2.5],[\"2023-11-14T22:15:50Z\",\"a\",9,\"eu\",4.5]]}]}]}"
'

test_expect_success 'the dashboard query: mean per minute of one host, epoch=ms' '
    test "$(iq "SELECT mean(\"usage\") FROM \"cpu\" WHERE (\"host\" = '"'"'a'"'"') AND time >= 1700000000000ms and time <= 1700000179999ms GROUP BY time(1m) fill(null)" --data-urlencode epoch=ms)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"mean\"],\"values\":[[1699999980000,2],[1700000040000,null],[1700000100000,4.5],[1700000160000,null]]}]}]}"
'

test_expect_success 'GROUP BY time and a tag, fill(0), several aggregates, arithmetic, aliases' '
    test "$(iq "SELECT count(n) AS c, max(n) * 10, sum(usage) FROM cpu WHERE time >= 1700000000000ms and time < 1700000120000ms GROUP BY time(1m), \"host\" fill(0)" --data-urlencode epoch=s)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"tags\":{\"host\":\"a\"},\"columns\":[\"time\",\"c\",\"max\",\"sum\"],\"values\":[[1699999980,2,50,4],[1700000040,0,0,0],[1700000100,0,0,0]]},{\"name\":\"cpu\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\",\"c\",\"max\",\"sum\"],\"values\":[[1699999980,0,0,0],[1700000040,1,70,10],[1700000100,0,0,0]]}]}]}"
'

test_expect_success 'transformations, GROUP BY *, SLIMIT, ORDER BY time DESC, LIMIT' '
    test "$(iq "SELECT derivative(usage, 1s) FROM cpu WHERE host = '"'"'a'"'"' AND time > now() - 100000d" --data-urlencode epoch=s)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"derivative\"],\"values\":[[1700000030,0.03333333333333333],[1700000150,0.016666666666666666]]}]}]}" &&
    test "$(iq "SELECT last(used) FROM mem WHERE time > 0 GROUP BY * SLIMIT 1 SOFFSET 1" --data-urlencode epoch=s)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"mem\",\"tags\":{\"host\":\"b\"},\"columns\":[\"time\",\"last\"],\"values\":[[1700000030,300]]}]}]}" &&
    test "$(iq "SELECT n FROM cpu WHERE time > 0 ORDER BY time DESC LIMIT 2" --data-urlencode epoch=s)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"n\"],\"values\":[[1700000150,9],[1700000060,7]]}]}]}"
'

test_expect_success 'a form field with an encoded NUL is 400 and runs nothing' '
    test "$(lb_req POST /query --data "q=DROP%20DATABASE%20d%00x")" = 400 &&
    grep -q "NUL" body &&
    test "$(lb_req POST /api/v1/sql --data "q=DROP%20DATABASE%20d%00x")" = 400 &&
    test "$(lb_req POST "/query?db=d" --data-urlencode "q=SELECT used FROM mem WHERE time > 0 LIMIT 1")" = 200 &&
    grep -q "\"name\":\"mem\"" body
'

test_expect_success 'POST with q as a form field, rp accepted; epoch units; db and epoch as form fields too' '
    test "$(lb_req POST "/query?db=d&rp=autogen&epoch=h" --data-urlencode "q=SELECT used FROM mem WHERE time > 0 LIMIT 1")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"mem\",\"columns\":[\"time\",\"used\"],\"values\":[[472222,100]]}]}]}" &&
    test "$(lb_req POST /query --data-urlencode "q=SELECT used FROM mem WHERE time > 0 LIMIT 1" --data-urlencode db=d --data-urlencode epoch=m)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"mem\",\"columns\":[\"time\",\"used\"],\"values\":[[28333333,100]]}]}]}" &&
    for u in ns u µs ms s m h; do
        test "$(iq "SELECT used FROM mem WHERE time > 0 LIMIT 1" --data-urlencode "epoch=$u")" = 200 || return 1
    done &&
    test "$(iq "SELECT used FROM mem WHERE time > 0 LIMIT 1" --data-urlencode epoch=u)" = 200 &&
    grep -q "\[\[1700000000000000,100\]\]" body
'

test_expect_success 'pretty=true indents as InfluxDB does' '
    test "$(iq "SHOW DATABASES" --data-urlencode pretty=true)" = 200 &&
    cat >want <<-\EOF &&
	{
	    "results": [
	        {
	            "statement_id": 0,
	            "series": [
	                {
	                    "name": "databases",
	                    "columns": [
	                        "name"
	                    ],
	                    "values": [
	                        [
	                            "d"
	                        ]
	                    ]
	                }
	            ]
	        }
	    ]
	}
	EOF
    test_cmp want body
'

test_expect_success 'chunked=true&chunk_size=N: one document per chunk, partial on all but the last' '
    test "$(iq "SELECT n FROM cpu WHERE time > 0; SHOW DATABASES" --data-urlencode chunked=true --data-urlencode chunk_size=3 --data-urlencode epoch=s)" = 200 &&
    cat >want <<-\EOF &&
	{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","n"],"values":[[1700000000,3],[1700000030,5],[1700000060,7]],"partial":true}],"partial":true}]}
	{"results":[{"statement_id":0,"series":[{"name":"cpu","columns":["time","n"],"values":[[1700000150,9]]}]}]}
	{"results":[{"statement_id":1,"series":[{"name":"databases","columns":["name"],"values":[["d"]]}]}]}
	EOF
    test_cmp want body
'

test_expect_success 'a parse error is 400 with {"error":...}; a statement error is 200 inside results' '
    test "$(iq "SELECT FROM cpu")" = 400 &&
    body_is "{\"error\":\"error parsing query: found FROM, expected identifier at line 1, char 8\"}" &&
    test "$(iq "SELECT n FROM cpu")" = 200 &&
    grep -q "^{\"results\":\[{\"statement_id\":0,\"error\":\"a query without a time range or a host reads the whole database" body &&
    test "$(iq "SHOW TAG KEYS ON nope; SELECT bogus(n) FROM cpu WHERE time > 0")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"error\":\"database not found: nope\"},{\"statement_id\":1,\"error\":\"not executed\"}]}" &&
    test "$(iq "SHOW DATABASES; SELECT bogus(n) FROM cpu WHERE time > 0")" = 200 &&
    grep -q "{\"statement_id\":1,\"error\":\"undefined function bogus()\"}\]}$" body &&
    test "$(lb_req GET /query -G --data-urlencode "q=SELECT n FROM cpu WHERE time > 0")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"error\":\"database name required\"}]}" &&
    test "$(iq "SHOW DATABASES" --data-urlencode epoch=fortnight)" = 400 &&
    grep -q "invalid epoch" body &&
    test "$(iq "SHOW DATABASES" --data-urlencode chunked=true --data-urlencode chunk_size=0)" = 400 &&
    grep -q "invalid chunk_size" body &&
    test "$(lb_req GET /query)" = 400 &&
    body_is "{\"error\":\"missing required parameter \\\"q\\\"\"}"
'

test_expect_success 'DELETE and DROP MEASUREMENT remove rows; DROP DATABASE the database' '
    test "$(lb_req POST /query?db=d --data-urlencode "q=DELETE FROM cpu WHERE host = '"'"'b'"'"'; SHOW SERIES FROM cpu")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"series\":[{\"columns\":[\"key\"],\"values\":[[\"cpu,host=a,region=eu\"]]}]}]}" &&
    test "$(lb_req POST /query?db=d --data-urlencode "q=DROP MEASUREMENT mem; SELECT * FROM mem WHERE time > 0")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0},{\"statement_id\":1}]}" &&
    test "$(lb_req POST /query --data-urlencode "q=DROP DATABASE d; SHOW DATABASES")" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"series\":[{\"name\":\"databases\",\"columns\":[\"name\"]}]}]}"
'

test_expect_success 'stop' '
    lb_stop
'

test_expect_success 'with tokens: SELECT and SHOW need read, DELETE write, DROP DATABASE admin' '
    cat >auth.conf <<-\EOF &&
	token = r3ader read m
	token = wr1ter write m
	token = adm1n admin *
	EOF
    LB_DATA=$SHARNESS_TRASH_DIRECTORY/data2 lb_start -c auth.conf &&
    test "$(lb_req POST /query -H "Authorization: Token adm1n" --data-urlencode "q=CREATE DATABASE m")" = 200 &&
    test "$(lb_req POST "/write?db=m" -H "Authorization: Token wr1ter" --data-binary "cpu,host=a v=1 ${T}000000000")" = 204 &&
    test "$(lb_req GET "/query?db=m" -G --data-urlencode "q=SELECT v FROM cpu WHERE time > 0")" = 401 &&
    test "$(lb_req GET "/query?db=m" -H "Authorization: Token wr1ter" -G --data-urlencode "q=SHOW MEASUREMENTS")" = 403 &&
    test "$(lb_req GET "/query?db=m&u=x&p=r3ader" -G --data-urlencode "q=SELECT v FROM cpu WHERE time > 0" --data-urlencode epoch=s)" = 200 &&
    body_is "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"cpu\",\"columns\":[\"time\",\"v\"],\"values\":[[1700000000,1]]}]}]}" &&
    test "$(lb_req POST "/query?db=m" -H "Authorization: Token r3ader" --data-urlencode "q=DELETE FROM cpu WHERE time > 0")" = 403 &&
    test "$(lb_req POST "/query?db=m" -H "Authorization: Token wr1ter" --data-urlencode "q=DROP DATABASE m")" = 403 &&
    test "$(lb_req POST "/query?db=m" -H "Authorization: Token wr1ter" --data-urlencode "q=DELETE FROM cpu WHERE time > 0")" = 200 &&
    test "$(lb_req POST "/query" -H "Authorization: Token adm1n" --data-urlencode "q=DROP DATABASE m")" = 200 &&
    lb_stop
'

test_done
