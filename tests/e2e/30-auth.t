#!/bin/sh
test_description='tokens: read, write and admin rights per database'
. "$(dirname "$0")/lib.sh"

test_expect_success 'start with tokens' '
    cat >auth.conf <<-\EOF &&
	token = wr1ter write logs
	token = r3ader read logs,metrics
	token = adm1n admin *
	EOF
    lb_start -c auth.conf
'

test_expect_success '/ping and /health need no token' '
    test "$(lb_req GET /ping)" = 204 &&
    test "$(lb_req GET /health)" = 200
'

test_expect_success 'no token is 401, unknown token is 401' '
    test "$(lb_req POST "/write?db=logs" --data-binary "m,host=a v=1i 1")" = 401 &&
    grep -q "authorization required" body &&
    test "$(lb_req POST "/write?db=logs" -H "Authorization: Token nope" --data-binary "m,host=a v=1i 1")" = 401 &&
    test "$(lb_req GET /metrics)" = 401
'

test_expect_success 'a write token writes its database: Token, Bearer, Basic, u/p' '
    test "$(lb_req POST "/write?db=logs" -H "Authorization: Token wr1ter" --data-binary "m,host=a v=1i 1")" = 204 &&
    test "$(lb_req POST "/write?db=logs" -H "Authorization: Bearer wr1ter" --data-binary "m,host=a v=2i 2")" = 204 &&
    test "$(lb_req POST "/write?db=logs" -u "any:wr1ter" --data-binary "m,host=a v=3i 3")" = 204 &&
    test "$(lb_req POST "/write?db=logs&u=any&p=wr1ter" --data-binary "m,host=a v=4i 4")" = 204
'

test_expect_success 'a write token may not write another database or read' '
    test "$(lb_req POST "/write?db=metrics" -H "Authorization: Token wr1ter" --data-binary "m,host=a v=1i 1")" = 403 &&
    grep -q "forbidden" body &&
    test "$(lb_req GET "/api/v1/query?db=logs&host=a" -H "Authorization: Token wr1ter")" = 403
'

test_expect_success 'a read token reads but may not write' '
    test "$(lb_req GET "/api/v1/query?db=logs&host=a" -H "Authorization: Token r3ader")" = 200 &&
    test $(wc -l <body) = 4 &&
    test "$(lb_req POST "/write?db=logs" -H "Authorization: Token r3ader" --data-binary "m,host=a v=1i 9")" = 403
'

test_expect_success 'admin statements need the admin right' '
    test "$(lb_req POST /api/v1/sql -H "Authorization: Token r3ader" --data-binary "DROP DATABASE logs")" = 403 &&
    test "$(lb_req POST /api/v1/sql -H "Authorization: Token r3ader" --data-binary "SHOW DATABASES")" = 200 &&
    test "$(lb_req POST /api/v1/sql -H "Authorization: Token adm1n" --data-binary "CREATE DATABASE other")" = 200 &&
    test "$(lb_req GET /metrics -H "Authorization: Token r3ader")" = 200
'

test_expect_success '/query: CREATE DATABASE needs admin, SHOW DATABASES a read right' '
    test "$(lb_req POST /query --data-urlencode "q=CREATE DATABASE tg")" = 401 &&
    test "$(lb_req POST /query -u "telegraf:wr1ter" --data-urlencode "q=CREATE DATABASE tg")" = 403 &&
    test "$(lb_req POST /query -H "Authorization: Token adm1n" --data-urlencode "q=CREATE DATABASE tg")" = 200 &&
    test "$(lb_req GET "/query?q=SHOW%20DATABASES&u=x&p=r3ader")" = 200 &&
    grep -q "\"databases\"" body
'

test_expect_success 'SHOW DATABASES lists only the databases the token may read' '
    test "$(lb_req POST /api/v1/sql -H "Authorization: Token r3ader" --data-binary "SHOW DATABASES")" = 200 &&
    grep -q "^{\"name\":\"logs\"" body &&
    test $(wc -l <body) = 1 &&
    test "$(lb_req POST "/api/v1/sql?format=json" -H "Authorization: Token r3ader" --data-binary "SHOW DATABASES")" = 200 &&
    grep -q "^{\"results\":\[{\"name\":\"logs\",[^{}]*}\]}$" body &&
    test "$(lb_req GET "/query?q=SHOW%20DATABASES&u=x&p=r3ader")" = 200 &&
    grep -q "\"values\":\[\[\"logs\"\]\]" body &&
    test "$(lb_req POST /api/v1/sql -H "Authorization: Token adm1n" --data-binary "SHOW DATABASES")" = 200 &&
    grep -q "^{\"name\":\"other\"" body &&
    grep -q "^{\"name\":\"tg\"" body &&
    test "$(lb_req GET "/query?q=SHOW%20DATABASES&u=x&p=adm1n")" = 200 &&
    grep -q "\"values\":\[\[\"logs\"\],\[\"other\"\],\[\"tg\"\]\]" body
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
