#!/bin/sh
test_description='search and aggregation through the HTTP API: LIKE, ILIKE, regular expressions, MATCH words and phrases, OR and NOT, GROUP BY time buckets and keys, HAVING, ORDER BY and LIMIT, FILL, EXPLAIN ANALYZE, search= and where= on /api/v1/query, and every new error as a clear message'
. "$(dirname "$0")/lib.sh"

# The rows (T is an hour boundary, so minutes are aligned):
#   logs (JSON lines)                     metrics (line protocol)
#   T+0   web-1 app  GET /api/users ...   cpu web-1 eu usage 10 T+0, 20 T+60, 40 T+180
#   T+5   web-2 app  error: Connection..  cpu web-2 us usage 50 T+0, 70 T+60, 90 T+120
#   T+10  web-1 app  ERROR: connection..  mem web-1 eu used 1000 T+0
#   T+20  db-1  db   slow query (level)   mem web-2 us used 3000 T+0
#   T+30  web-1 app  (no msg: status 503)
#   T+65  web-2 app  reset connection pool
#   T+70  web-1 app  Timeout waiting ...
#   T+75  web-1 app  warn: disk 91% full
#   T+130 web-1 app  GET /api/orders ...
#   T+140 web-2 app  timeouts exceeded
#   T+200 db-1  db   checkpoint complete
T=1699999200
NS=000000000
T0=$T$NS
T4=$((T + 240))$NS

sql() { # sql STATEMENT [URL args]: prints the status; body in ./body
    lb_req POST "/api/v1/sql$1" -H "Content-Type: text/plain" --data-binary "$2"
}
q() { sql "" "$1"; }

# cols "k1 k2": the values of these keys in each NDJSON row of ./body (a
# key of the row, else a path: fields.status is {"fields":{"status":...}})
cols() {
    K="$1" perl -MJSON::PP -ne '
        my $r = JSON::PP->new->decode($_);
        print join(" ", map {
            my $v = $r;
            if (exists $r->{$_}) { $v = $r->{$_} } else { $v = $v->{$_} for split /\./ }
            !defined $v ? "null" : ref $v ? ($v ? "true" : "false") : $v
        } split / /, $ENV{K}), "\n"' body
}

# error_is TEXT: ./body is one {"error": ...} whose message contains TEXT
error_is() {
    perl -MJSON::PP -e '
        local $/; my $r = JSON::PP->new->decode(<STDIN>);
        exit(index($r->{error} // "", $ARGV[0]) >= 0 ? 0 : 1)' "$1" <body ||
        { echo "error lacks: $1"; cat body; false; }
}

test_expect_success 'start; write log lines as JSON lines and metrics as line protocol' '
    lb_start &&
    cat >logs.jsonl <<-EOF &&
	{"ts":$((T + 0))$NS,"host":"web-1","event":"app","msg":"GET /api/users 200 in 12ms"}
	{"ts":$((T + 5))$NS,"host":"web-2","event":"app","msg":"error: Connection Reset"}
	{"ts":$((T + 10))$NS,"host":"web-1","event":"app","msg":"ERROR: connection reset by peer"}
	{"ts":$((T + 20))$NS,"host":"db-1","event":"db","msg":"slow query: 2.5s","level":"warn"}
	{"ts":$((T + 30))$NS,"host":"web-1","event":"app","status":503}
	{"ts":$((T + 65))$NS,"host":"web-2","event":"app","msg":"reset connection pool"}
	{"ts":$((T + 70))$NS,"host":"web-1","event":"app","msg":"Timeout waiting for upstream"}
	{"ts":$((T + 75))$NS,"host":"web-1","event":"app","msg":"warn: disk 91% full"}
	{"ts":$((T + 130))$NS,"host":"web-1","event":"app","msg":"GET /api/orders 500 in 3000ms"}
	{"ts":$((T + 140))$NS,"host":"web-2","event":"app","msg":"timeouts exceeded"}
	{"ts":$((T + 200))$NS,"host":"db-1","event":"db","msg":"checkpoint complete"}
	EOF
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" --data-binary @logs.jsonl)" = 204 &&
    cat >metrics.lp <<-EOF &&
	cpu,host=web-1,region=eu usage=10 $((T + 0))
	cpu,host=web-1,region=eu usage=20 $((T + 60))
	cpu,host=web-1,region=eu usage=40 $((T + 180))
	cpu,host=web-2,region=us usage=50 $((T + 0))
	cpu,host=web-2,region=us usage=70 $((T + 60))
	cpu,host=web-2,region=us usage=90 $((T + 120))
	mem,host=web-1,region=eu used=1000i $((T + 0))
	mem,host=web-2,region=us used=3000i $((T + 0))
	EOF
    test "$(lb_req POST "/write?db=metrics&precision=s" --data-binary @metrics.lp)" = 204 &&
    q "SELECT COUNT(*) FROM logs WHERE ts >= $T0" >/dev/null &&
    grep -q "^{\"count\":11}" body
'

# --- search ---

Q="SELECT ts FROM logs WHERE ts >= $T0 AND msg LIKE '%timeout%'"
test_expect_success 'LIKE is case-sensitive and finds substrings' '
    test "$(q "$Q")" = 200 &&
    cols ts >got && echo $((T + 140))$NS >want && test_cmp want got
'

Q="SELECT ts FROM logs WHERE ts >= $T0 AND msg ILIKE '%TIMEOUT%' ORDER BY ts ASC"
test_expect_success 'ILIKE folds case' '
    test "$(q "$Q")" = 200 &&
    cols ts >got && printf "%s\n" $((T + 70))$NS $((T + 140))$NS >want && test_cmp want got
'

Q="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg NOT LIKE '%GET%'"
Q2="SELECT host, status FROM logs WHERE ts >= $T0 AND msg IS NULL"
test_expect_success 'NOT LIKE skips rows without msg; IS NULL finds them' '
    test "$(q "$Q")" = 200 && grep -q "^{\"count\":8}" body &&
    test "$(q "$Q2")" = 200 && cols "host fields.status" >got && echo "web-1 503" >want &&
    test_cmp want got
'

Q="SELECT ts FROM logs WHERE ts >= $T0 AND msg LIKE '%91\\% full'"
Q2="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg LIKE 'GET /api/_____s %'"
test_expect_success 'LIKE escapes and _' '
    test "$(q "$Q")" = 200 && cols ts >got && echo $((T + 75))$NS >want && test_cmp want got &&
    test "$(q "$Q2")" = 200 && grep -q "^{\"count\":1}" body
'

Q1="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg ~ 'reset'"
Q2="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg ~* 'reset'"
Q3="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg ~ '^GET /api/[a-z]+ [0-9]{3} '"
Q4="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg !~* 'reset|timeout'"
Q5="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg REGEXP 'in [0-9]+ms\$'"
test_expect_success 'regular expressions: ~, ~* (caseless), !~*, REGEXP' '
    test "$(q "$Q1")" = 200 && grep -q "^{\"count\":2}" body &&
    test "$(q "$Q2")" = 200 && grep -q "^{\"count\":3}" body &&
    test "$(q "$Q3")" = 200 && grep -q "^{\"count\":2}" body &&
    test "$(q "$Q4")" = 200 && grep -q "^{\"count\":5}" body &&
    test "$(q "$Q5")" = 200 && grep -q "^{\"count\":2}" body
'

Q1="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND msg MATCH 'connection reset'"
Q2="SELECT ts FROM logs WHERE ts >= $T0 AND msg MATCH '\"CONNECTION reset\"' ORDER BY ts ASC"
Q3="SELECT ts FROM logs WHERE ts >= $T0 AND msg MATCH 'timeout'"
test_expect_success 'MATCH: whole words in any case, "phrases" as consecutive words' '
    test "$(q "$Q1")" = 200 && grep -q "^{\"count\":3}" body &&
    test "$(q "$Q2")" = 200 && cols ts >got &&
    printf "%s\n" $((T + 5))$NS $((T + 10))$NS >want && test_cmp want got &&
    test "$(q "$Q3")" = 200 && cols ts >got && echo $((T + 70))$NS >want && test_cmp want got
'

Q1="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND MATCH('web')"
Q2="SELECT ts FROM logs WHERE ts >= $T0 AND MATCH('db warn')"
test_expect_success 'MATCH('"'"'...'"'"') looks in every string: host, event, fields' '
    test "$(q "$Q1")" = 200 && grep -q "^{\"count\":9}" body &&
    test "$(q "$Q2")" = 200 && cols ts >got && echo $((T + 20))$NS >want && test_cmp want got
'

Q1="SELECT host FROM logs WHERE host = 'web-2' OR host = 'db-1'"
Q2="SELECT COUNT(*) FROM logs WHERE ts >= $T0 AND NOT host = 'web-1'"
Q3="SELECT ts FROM logs WHERE ts >= $T0 AND ((host = 'web-1' AND msg LIKE 'GET%') OR (host = 'web-2' AND msg ILIKE '%reset%')) ORDER BY ts ASC"
test_expect_success 'OR of hosts is an INDEX plan over both; NOT; parentheses' '
    test "$(q "EXPLAIN $Q1")" = 200 && grep -q "\"plan\":\"INDEX\"" body &&
    test "$(q "$Q1")" = 200 && cols host | sort | uniq -c | tr -s " " >got &&
    printf " 2 db-1\n 3 web-2\n" >want && test_cmp want got &&
    test "$(q "$Q2")" = 200 && grep -q "^{\"count\":5}" body &&
    test "$(q "$Q3")" = 200 && cols ts >got &&
    printf "%s\n" $((T + 0))$NS $((T + 5))$NS $((T + 65))$NS $((T + 130))$NS >want &&
    test_cmp want got
'

test_expect_success 'an OR that narrows nothing is a full scan: refused unless asked for' '
    test "$(q "SELECT * FROM logs WHERE host = '"'"'web-1'"'"' OR msg LIKE '"'"'%x%'"'"'")" = 400 &&
    error_is "full scan refused" &&
    test "$(q "SELECT /*+ full_scan */ COUNT(*) FROM logs WHERE host = '"'"'db-1'"'"' OR msg LIKE '"'"'%full%'"'"'")" = 200 &&
    grep -q "^{\"count\":3}" body
'

# --- aggregates ---

Q="SELECT time_bucket('1m') AS m, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T4 GROUP BY m"
test_expect_success 'COUNT per minute, newest first (the stored order)' '
    test "$(q "$Q")" = 200 && cols "m count" >got &&
    printf "%s 1\n%s 2\n%s 3\n%s 5\n" $((T + 180))$NS $((T + 120))$NS $((T + 60))$NS $T0 >want &&
    test_cmp want got
'

test_expect_success 'ORDER BY the bucket ASC gives the oldest first' '
    test "$(q "$Q ORDER BY m ASC")" = 200 && cols "m count" >got &&
    printf "%s 5\n%s 3\n%s 2\n%s 1\n" $T0 $((T + 60))$NS $((T + 120))$NS $((T + 180))$NS >want &&
    test_cmp want got
'

Q="SELECT time_bucket('1m', '30s') AS m, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T4 GROUP BY 1 ORDER BY 1"
test_expect_success 'time_bucket with an offset' '
    test "$(q "$Q")" = 200 && cols "m count" >got &&
    printf "%s 4\n%s 4\n%s 2\n%s 1\n" $((T - 30))$NS $((T + 30))$NS $((T + 90))$NS $((T + 150))$NS >want &&
    test_cmp want got
'

Q="SELECT host, COUNT(*) AS n FROM logs WHERE ts >= $T0 GROUP BY host"
test_expect_success 'top-N: ORDER BY an aggregate DESC with LIMIT; HAVING' '
    test "$(q "$Q ORDER BY n DESC LIMIT 2")" = 200 && cols "host n" >got &&
    printf "web-1 6\nweb-2 3\n" >want && test_cmp want got &&
    test "$(q "$Q HAVING n > 2")" = 200 && cols "host n" >got && test_cmp want got &&
    test "$(q "$Q HAVING COUNT(*) <= 2 OR host LIKE '"'"'%-2'"'"'")" = 200 && cols "host n" >got &&
    printf "db-1 2\nweb-2 3\n" >want && test_cmp want got
'

Q="SELECT host, COUNT(*) FROM metrics WHERE ts >= $T0 GROUP BY host, event"
test_expect_success 'GROUP BY two keys, one of them not selected' '
    test "$(q "$Q")" = 200 && cols "host count" >got &&
    printf "web-1 3\nweb-1 1\nweb-2 3\nweb-2 1\n" >want && test_cmp want got
'

Q="SELECT tags.region, MIN(usage), MAX(usage), PERCENTILE(usage, 50), MEDIAN(usage), LAST(usage), FIRST(usage), AVG(usage) AS a, SUM(used), COUNT(used) FROM metrics WHERE ts >= $T0 GROUP BY tags.region"
test_expect_success 'every aggregate by a tag' '
    test "$(q "$Q")" = 200 &&
    cols "tags.region min(usage) max(usage) percentile(usage,50) median(usage) last(usage) first(usage) a sum(used) count(used)" >got &&
    printf "eu 10 40 20 20 40 10 23.3333333333333 1000 1\nus 50 90 70 70 90 50 70 3000 1\n" >want &&
    test_cmp want got &&
    grep -q "\"sum(used)\":1000," body &&
    grep -q "\"max(usage)\":40.0," body
'

Q="SELECT host, LAST(usage) FROM metrics WHERE event = 'cpu' AND ts >= $T0 GROUP BY host"
test_expect_success 'latest value per host' '
    test "$(q "$Q")" = 200 && cols "host last(usage)" >got &&
    printf "web-1 40\nweb-2 90\n" >want && test_cmp want got
'

Q="SELECT time_bucket('1m') AS m, AVG(usage) AS a FROM metrics WHERE host = 'web-1' AND event = 'cpu' AND ts >= $T0 AND ts < $T4 GROUP BY m"
test_expect_success 'without FILL a bucket without rows is left out' '
    test "$(q "$Q")" = 200 && cols "m a" >got &&
    printf "%s 40\n%s 20\n%s 10\n" $((T + 180))$NS $((T + 60))$NS $T0 >want && test_cmp want got
'

test_expect_success 'FILL(NULL) and FILL(0) fill the missing minute' '
    test "$(q "$Q FILL(NULL)")" = 200 && cols "m a" >got &&
    printf "%s 40\n%s null\n%s 20\n%s 10\n" $((T + 180))$NS $((T + 120))$NS $((T + 60))$NS $T0 >want &&
    test_cmp want got &&
    test "$(q "$Q FILL(0)")" = 200 && cols "m a" >got &&
    printf "%s 40\n%s 0\n%s 20\n%s 10\n" $((T + 180))$NS $((T + 120))$NS $((T + 60))$NS $T0 >want &&
    test_cmp want got
'

test_expect_success 'FILL(PREVIOUS) takes the earlier minute, whatever the output order' '
    test "$(q "$Q FILL(PREVIOUS)")" = 200 && cols "m a" >got &&
    printf "%s 40\n%s 20\n%s 20\n%s 10\n" $((T + 180))$NS $((T + 120))$NS $((T + 60))$NS $T0 >want &&
    test_cmp want got &&
    test "$(q "$Q FILL(PREVIOUS) ORDER BY m ASC")" = 200 && cols "m a" >got &&
    printf "%s 10\n%s 20\n%s 20\n%s 40\n" $T0 $((T + 60))$NS $((T + 120))$NS $((T + 180))$NS >want &&
    test_cmp want got
'

Q="SELECT time_bucket('1m') AS m, COUNT(*) FROM metrics WHERE host = 'web-2' AND ts >= $T0 AND ts < $T4 GROUP BY m FILL(0)"
test_expect_success 'FILL gives COUNT 0 to a missing bucket' '
    test "$(q "$Q")" = 200 && cols "m count" >got &&
    printf "%s 0\n%s 1\n%s 1\n%s 2\n" $((T + 180))$NS $((T + 120))$NS $((T + 60))$NS $T0 >want &&
    test_cmp want got
'

# --- EXPLAIN ANALYZE, /api/v1/query ---

test_expect_success 'EXPLAIN ANALYZE: the plan and what running it took' '
    test "$(q "EXPLAIN ANALYZE SELECT * FROM logs WHERE ts >= $T0 AND msg MATCH '"'"'timeout'"'"'")" = 200 &&
    perl -MJSON::PP -e '"'"'
        local $/; my $r = JSON::PP->new->decode(<STDIN>); my $a = $r->{analyze};
        for my $k (qw(rows_scanned rows_returned rows_skipped blocks_read blocks_skipped groups ms)) {
            die "no analyze.$k\n" unless defined $a->{$k};
        }
        die "rows_returned $a->{rows_returned}\n" unless $a->{rows_returned} == 1;
        die "rows_scanned $a->{rows_scanned}\n" unless $a->{rows_scanned} >= 1;
        # rows without the bytes "timeout" are passed over undecoded; the
        # match and "timeouts exceeded" (the bytes, not the word) are not
        die "rows_skipped $a->{rows_skipped} of $a->{rows_scanned}\n"
            unless $a->{rows_skipped} >= 1 && $a->{rows_skipped} <= $a->{rows_scanned} - 2;
        die "no plan\n" unless $r->{plan};'"'"' <body &&
    test "$(q "EXPLAIN ANALYZE SELECT host, COUNT(*) FROM logs WHERE ts >= $T0 GROUP BY host")" = 200 &&
    grep -q "\"groups\":3" body && grep -q "\"rows_skipped\":0," body
'

test_expect_success '/api/v1/query: search= words and phrases, where= with OR' '
    test "$(lb_req GET "/api/v1/query?db=logs&start=$T0&search=timeout")" = 200 &&
    cols ts >got && echo $((T + 70))$NS >want && test_cmp want got &&
    test "$(lb_req GET "/api/v1/query?db=logs&start=$T0&order=asc&search=%22connection%20reset%22")" = 200 &&
    cols ts >got && printf "%s\n" $((T + 5))$NS $((T + 10))$NS >want && test_cmp want got &&
    test "$(lb_req GET "/api/v1/query?db=logs&start=$T0&search=web%20timeouts")" = 200 &&
    cols ts >got && echo $((T + 140))$NS >want && test_cmp want got &&
    test "$(lb_req GET "/api/v1/query?db=logs&where=host%20%3D%20%27web-2%27%20OR%20host%20%3D%20%27db-1%27&search=reset")" = 200 &&
    cols ts >got && printf "%s\n" $((T + 65))$NS $((T + 5))$NS >want && test_cmp want got &&
    test "$(lb_req GET "/api/v1/query?db=logs&start=$T0&search=%2B%2B")" = 400 &&
    error_is "MATCH needs at least one word"
'

test_expect_success 'discovery: SHOW HOSTS, TAG VALUES, FIELDS' '
    test "$(q "SHOW HOSTS FROM logs")" = 200 && cols host >got &&
    printf "db-1\nweb-1\nweb-2\n" >want && test_cmp want got &&
    test "$(q "SHOW TAG VALUES FROM metrics WITH KEY = '"'"'region'"'"'")" = 200 &&
    cols tag_value >got && printf "eu\nus\n" >want && test_cmp want got &&
    test "$(q "SHOW FIELDS FROM metrics")" = 200 && cols "field type" >got &&
    printf "usage float\nused integer\n" >want && test_cmp want got
'

# --- errors: 4xx with a message that says what is wrong ---

Q="SELECT host, COUNT(*) FROM logs WHERE ts >= $T0 GROUP BY host"
test_expect_success 'too many groups: max_groups=2 in the URL' '
    test "$(sql "?max_groups=2" "$Q")" = 400 &&
    error_is "too many groups: more than max_groups = 2" &&
    test "$(sql "?max_groups=3" "$Q")" = 200 && test $(wc -l <body) = 3
'

test_expect_success 'too many groups while streaming by time bucket ends the stream with the error' '
    test "$(sql "?max_groups=2" "SELECT time_bucket('"'"'1m'"'"'), host, COUNT(*) FROM logs WHERE ts >= $T0 AND ts < $T4 GROUP BY 1, 2")" = 200 &&
    tail -n 1 body | grep -q "^{\"error\":\"too many groups: more than max_groups = 2" &&
    head -n 1 body | grep -q "\"ts\":$((T + 180))$NS"
'

test_expect_success 'a bad max_groups value is refused' '
    test "$(sql "?max_groups=abc" "$Q")" = 400 && error_is "bad max_groups '"'"'abc'"'"'" &&
    test "$(sql "?max_groups=0" "$Q")" = 400 && error_is "bad max_groups" &&
    test "$(sql "?max_groups=-4" "$Q")" = 400 && error_is "bad max_groups"
'

test_expect_success 'a bad regular expression names its position' '
    test "$(q "SELECT * FROM logs WHERE ts >= 0 AND msg ~ '"'"'a(b'"'"'")" = 400 &&
    error_is "error at position 48: bad regular expression: missing closing parenthesis"
'

test_expect_success 'a bad bucket width, an unknown function, two buckets, FILL without a range' '
    test "$(q "SELECT time_bucket('"'"'0s'"'"'), COUNT(*) FROM logs WHERE ts >= 0 GROUP BY 1")" = 400 &&
    error_is "bad bucket width: between 1ms and 366d" &&
    test "$(q "SELECT time_bucket('"'"'400d'"'"'), COUNT(*) FROM logs WHERE ts >= 0 GROUP BY 1")" = 400 &&
    error_is "bad bucket width" &&
    test "$(q "SELECT lower(msg) FROM logs WHERE ts >= 0")" = 400 &&
    error_is "unknown function '"'"'lower'"'"'" &&
    test "$(q "SELECT COUNT(*) FROM logs WHERE ts >= 0 GROUP BY time_bucket('"'"'1m'"'"'), time_bucket('"'"'5m'"'"')")" = 400 &&
    error_is "time_bucket" &&
    test "$(q "SELECT time_bucket('"'"'1m'"'"'), COUNT(*) FROM logs WHERE ts >= 0 GROUP BY 1 FILL(0)")" = 400 &&
    error_is "FILL needs a bounded ts range" &&
    test "$(q "SELECT host, COUNT(*) FROM logs WHERE ts >= 0 GROUP BY 2")" = 400 &&
    error_is "cannot GROUP BY an aggregate" &&
    test "$(q "SELECT host, event, COUNT(*) FROM logs WHERE ts >= 0 GROUP BY host")" = 400 &&
    error_is "'"'"'event'"'"' must be in GROUP BY"
'

# A stream that fails after its headers ends with {"error":...} and is cut
# off (curl exits 18), so the status may be 200.
test_expect_success 'a catastrophic regular expression ends with an error, not a hang' '
    perl -e "print qq({\"ts\":${T0},\"host\":\"evil\",\"event\":\"x\",\"msg\":\"), q(a) x 30000, qq(b\"}\n)" >evil.jsonl &&
    test "$(lb_req POST "/api/v1/ingest?db=evil&format=jsonl" --data-binary @evil.jsonl)" = 204 &&
    start=$(date +%s) &&
    { code=$(curl -s -o body -w "%{http_code}" --max-time 20 -XPOST "$LB_URL/api/v1/sql" \
        --data-binary "SELECT ts FROM evil WHERE ts >= 0 AND msg ~ '"'"'(a+)+\$'"'"'") || :; } &&
    test $(( $(date +%s) - start )) -lt 20 &&
    { test "$code" = 200 || test "$code" = 400 || test "$code" = 413; } &&
    tail -n 1 body | grep -q "\"error\":" &&
    tail -n 1 body | grep -qi "regular expression"
'

test_expect_success '/metrics counts the blocks queries read and skip, and the rows passed over' '
    test "$(lb_req GET /metrics)" = 200 &&
    grep -q "^logbucket_query_blocks_read_total [0-9]" body &&
    grep -q "^logbucket_query_blocks_skipped_total [0-9]" body &&
    grep -q "^logbucket_query_rows_skipped_total [1-9]" body
'

test_expect_success 'max_groups from the config (--set max_groups=3); a request may only lower it' '
    lb_stop &&
    lb_start --set max_groups=3 &&
    Q="SELECT host, COUNT(*) FROM metrics WHERE ts >= $T0 GROUP BY host, event" &&
    test "$(q "$Q")" = 400 && error_is "more than max_groups = 3" &&
    test "$(sql "?max_groups=100" "$Q")" = 400 && error_is "more than max_groups = 3" &&
    test "$(q "SELECT host, COUNT(*) FROM logs WHERE ts >= $T0 GROUP BY host")" = 200 &&
    test $(wc -l <body) = 3
'

test_expect_success 'stop' '
    lb_stop
'

test_done
