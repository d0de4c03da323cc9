#!/bin/sh
test_description='live tail, GET /api/v1/tail: rows in order and complete under concurrent writers, the newest N then live rows without gap or duplicate, filters (host, event, where, search), SSE and NDJSON keep-alives, bad parameters, max_tail_clients, a client that stops reading gets a dropped marker while the daemon memory stays bounded, auth, and a prompt shutdown with clients attached'
. "$(dirname "$0")/lib.sh"

# tail_bg NAME PATH [curl args]: a tail client in the background (curl
# -N), output in NAME.out, headers in NAME.h; returns once the headers
# came (the client is registered then).
tail_bg() {
    name=$1
    path=$2
    shift 2
    : >"$name.h"
    curl -sN --max-time 60 -D "$name.h" -o "$name.out" "$@" "$LB_URL$path" &
    echo $! >"$name.pid"
    n=0
    while ! grep -q '^HTTP' "$name.h" 2>/dev/null; do
        n=$((n + 1))
        [ $n -lt 200 ] || return 1
        sleep 0.05
    done
}
tail_end() {
    kill "$(cat "$1.pid")" 2>/dev/null
    wait "$(cat "$1.pid")" 2>/dev/null
    return 0
}
# wait_for FILE TEXT: up to 10 s for TEXT to appear in FILE
wait_for() {
    n=0
    while ! grep -q -- "$2" "$1" 2>/dev/null; do
        n=$((n + 1))
        [ $n -lt 200 ] || { echo "no '$2' in $1:"; tail -c 500 "$1"; return 1; }
        sleep 0.05
    done
}
# writes LINES (line protocol) to db t
lp() {
    curl -s -o /dev/null -w '%{http_code}' -XPOST "$LB_URL/write?db=${DB:-t}" --data-binary "$1" |
        grep -q 204
}
# no_clients: waits (up to 10 s) until the daemon has let go of every tail
# client (a client that hung up is noticed within a quarter second, with
# http_threads > 0 at its next keep-alive)
no_clients() {
    n=0
    while ! curl -s "$LB_URL/metrics" | grep -q "^logbucket_tail_clients 0$"; do
        n=$((n + 1))
        [ $n -lt 200 ] || return 1
        sleep 0.05
    done
}
rss_kb() {
    sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$LB_PID/status
}

test_expect_success 'start with small tail buffers and a 1 s keep-alive' '
    lb_start --set http_threads=${TAIL_HTTP_THREADS:-0} --set tail_keepalive=1s \
        --set tail_buffer_bytes=64KiB --set max_tail_clients=8 \
        --set memtable_bytes=16MiB --set wal_sync=none &&
    lp "boot,host=h v=1 1"
'

test_expect_success 'rows of four concurrent writers arrive complete and each in its order' '
    tail_bg all "/api/v1/tail?db=t&event=seq" &&
    for w in 1 2 3 4; do
        (
            i=0
            while [ $i -lt 20 ]; do
                lines=""
                j=0
                while [ $j -lt 25 ]; do
                    n=$((i * 25 + j))
                    lines="${lines}seq,host=w$w n=${n}i
"
                    j=$((j + 1))
                done
                lp "$lines" || exit 1
                i=$((i + 1))
            done
        ) &
        eval "pid$w=\$!"
    done &&
    wait $pid1 && wait $pid2 && wait $pid3 && wait $pid4 &&
    wait_for all.out "\"host\":\"w4\".*\"n\":499}" &&
    wait_for all.out "\"host\":\"w1\".*\"n\":499}" &&
    wait_for all.out "\"host\":\"w2\".*\"n\":499}" &&
    wait_for all.out "\"host\":\"w3\".*\"n\":499}" &&
    tail_end all &&
    grep -q "^content-type: application/x-ndjson" all.h -i &&
    perl -MJSON::PP -ne '"'"'
        my $r = JSON::PP->new->decode($_); next unless exists $r->{ts};
        my $w = $r->{host}; my $n = $r->{fields}{n};
        die "$w: $n after $last{$w}\n" if defined $last{$w} && $n != $last{$w} + 1;
        die "$w starts at $n\n" if !defined $last{$w} && $n != 0;
        $last{$w} = $n; $rows++;
        END { die "rows $rows\n" unless $rows == 2000 }'"'"' all.out
'

test_expect_success 'limit=N starts with the newest N, oldest first, then the live rows' '
    for i in 0 1 2 3 4 5 6 7 8 9; do echo "cnt,host=c n=${i}i $((1700000000 + i))000000000"; done >cnt.lp &&
    lp "$(cat cnt.lp)" &&
    tail_bg init "/api/v1/tail?db=t&event=cnt&limit=3" &&
    lp "cnt,host=c n=10i 1700000010000000000" &&
    lp "cnt,host=c n=11i 1600000000000000000" &&
    wait_for init.out "\"n\":11}" &&
    tail_end init &&
    perl -MJSON::PP -ne '"'"'my $r = JSON::PP->new->decode($_);
        print "$r->{fields}{n}\n" if exists $r->{ts}'"'"' init.out >init.n &&
    printf "7\n8\n9\n10\n11\n" >init.want &&
    test_cmp init.want init.n
'

test_expect_success 'since= starts at a time; no row is sent twice' '
    tail_bg since "/api/v1/tail?db=t&event=cnt&since=1700000008000000000" &&
    lp "cnt,host=c n=12i 1700000012000000000" &&
    wait_for since.out "\"n\":12}" &&
    tail_end since &&
    perl -MJSON::PP -ne '"'"'my $r = JSON::PP->new->decode($_);
        print "$r->{fields}{n}\n" if exists $r->{ts}'"'"' since.out >since.n &&
    printf "8\n9\n10\n12\n" >since.want &&
    test_cmp since.want since.n
'

test_expect_success 'filters: host, event, where and search' '
    tail_bg fh "/api/v1/tail?db=t&host=web-1" &&
    tail_bg fe "/api/v1/tail?db=t&event=nginx" &&
    tail_bg fw "/api/v1/tail?db=t&where=code%20%3E%3D%20500%20AND%20tags.dc%20%3D%20%27eu%27" &&
    tail_bg fs "/api/v1/tail?db=t&search=%22connection%20reset%22" &&
    lp "nginx,host=web-1,dc=eu code=200i,msg=\"GET / ok\"
nginx,host=web-2,dc=eu code=503i,msg=\"upstream connection reset\"
app,host=web-1,dc=us code=500i,msg=\"connection was reset\"
app,host=web-2,dc=eu code=502i,msg=\"Connection reset by peer\"
end,host=web-1,dc=eu code=0i,msg=\"end\"" &&
    wait_for fh.out "\"event\":\"end\"" && wait_for fw.out "\"host\":\"web-2\",\"event\":\"app\"" &&
    wait_for fe.out "\"host\":\"web-2\"" && wait_for fs.out "Connection reset" &&
    lp "end,host=web-2,dc=eu code=500i,msg=\"connection reset end\"" &&
    wait_for fw.out "\"event\":\"end\"" && wait_for fs.out "\"event\":\"end\"" &&
    for f in fh fe fw fs; do tail_end $f; done &&
    no_clients &&
    test $(grep -c "\"ts\"" fh.out) = 3 && ! grep -q "web-2" fh.out &&
    test $(grep -c "\"ts\"" fe.out) = 2 && ! grep -q "\"event\":\"app\"" fe.out &&
    test $(grep -c "\"ts\"" fw.out) = 3 && ! grep -q "\"dc\":\"us\"" fw.out &&
    test $(grep -c "\"ts\"" fs.out) = 3 && ! grep -q "was reset" fs.out
'

test_expect_success 'SSE: data events and keep-alive comments through an idle second' '
    tail_bg sse "/api/v1/tail?db=t&event=sse" -H "Accept: text/event-stream" &&
    lp "sse,host=s v=1i 1700000000000000000" &&
    wait_for sse.out "^data: {\"ts\":1700000000000000000,\"host\":\"s\",\"event\":\"sse\",\"tags\":{},\"fields\":{\"v\":1}}$" &&
    wait_for sse.out "^: keep-alive$" &&
    tail_end sse &&
    grep -qi "^content-type: text/event-stream" sse.h &&
    grep -qi "^cache-control: no-cache" sse.h
'

# within a second of the write (three under the sanitizers)
LAT_MS=1000
[ "${LB_SAN:-0}" = 1 ] && LAT_MS=3000
test_expect_success 'a row arrives within a second of its acknowledged write' '
    tail_bg lat "/api/v1/tail?db=t&event=lat" &&
    t0=$(date +%s%N) &&
    lp "lat,host=l v=1i" &&
    wait_for lat.out "\"event\":\"lat\"" &&
    t1=$(date +%s%N) &&
    tail_end lat &&
    echo "arrived $(( (t1 - t0) / 1000000 )) ms after the write was sent" &&
    test $(( (t1 - t0) / 1000000 )) -lt $LAT_MS
'

test_expect_success 'NDJSON: a heartbeat object through an idle second' '
    tail_bg hb "/api/v1/tail?db=t&event=nothing" &&
    wait_for hb.out "^{\"heartbeat\":[0-9]*}$" &&
    tail_end hb
'

test_expect_success 'bad parameters are 400 with the reason, an unknown database 404' '
    test "$(lb_req GET "/api/v1/tail?db=t&where=code%20%3E%3E%201")" = 400 &&
    grep -q "where: " body &&
    test "$(lb_req GET "/api/v1/tail?db=t&limit=x")" = 400 && grep -q "bad limit" body &&
    test "$(lb_req GET "/api/v1/tail?db=t&limit=100000")" = 400 && grep -q "0 to 10000" body &&
    test "$(lb_req GET "/api/v1/tail?db=t&limit=5&since=yesterday")" = 400 && grep -q "bad since" body &&
    test "$(lb_req GET "/api/v1/tail?db=t&format=xml")" = 400 && grep -q "ndjson or sse" body &&
    test "$(lb_req GET "/api/v1/tail?db=t&search=%22open")" = 400 && grep -q "search: " body &&
    test "$(lb_req GET "/api/v1/tail")" = 400 && grep -q "missing db" body &&
    test "$(lb_req GET "/api/v1/tail?db=nope")" = 404 &&
    test "$(lb_req POST "/api/v1/tail?db=t")" = 405
'

test_expect_success 'max_tail_clients: one more is 503 with a clear error' '
    no_clients &&
    for i in 1 2 3 4 5 6 7 8; do tail_bg m$i "/api/v1/tail?db=t" || return 1; done &&
    test "$(lb_req GET "/api/v1/tail?db=t")" = 503 &&
    grep -q "max_tail_clients = 8" body &&
    curl -s "$LB_URL/metrics" >metrics &&
    grep -q "^logbucket_tail_clients 8$" metrics &&
    for i in 1 2 3 4 5 6 7 8; do tail_end m$i; done &&
    no_clients
'

# 40 bodies of 5000 rows of about 350 bytes (70 MB); a fifth under the
# sanitizers, which are slower.
NB=40
[ "${LB_SAN:-0}" = 1 ] && NB=8
export NB
test_expect_success 'a client that stops reading gets a dropped marker; memory stays bounded' '
    perl "$LB_TOP/tests/e2e/tailslow.pl" $LB_PORT "/api/v1/tail?db=t&event=bulk" slow.out 4 60 \
        "\"n\":-1}" >slow.ready &
    slow=$! &&
    wait_for slow.ready ready &&
    rss0=$(rss_kb) &&
    perl -e '"'"'my $pad = "x" x 300;
        for my $b (0 .. $ARGV[0] - 1) { open my $f, ">", "bulk$b.lp" or die;
            print $f "bulk,host=b n=${_}i,pad=\"$pad\"\n" for $b * 5000 .. $b * 5000 + 4999 }'"'"' $NB &&
    b=0 &&
    while [ $b -lt $NB ]; do lp "@bulk$b.lp" || return 1; b=$((b + 1)); done &&
    rss1=$(rss_kb) &&
    wait_for slow.ready reading &&
    sleep 1 &&
    lp "bulk,host=b n=-1i" &&
    wait $slow &&
    echo "RSS before $rss0 kB, after $((NB * 5000)) rows of 350 bytes: $rss1 kB" &&
    { ! test_have_prereq JEMALLOC || test $((rss1 - rss0)) -lt 49152; } &&
    { grep -q "^{\"dropped\":[0-9]*}$" slow.out || { head -c 300 slow.out; false; }; } &&
    perl -ne '"'"'$d += $1 if /^\{"dropped":(\d+)\}$/; $r++ if /^\{"ts"/;
        END { print "rows $r dropped $d\n"; exit($r + $d == $ENV{NB} * 5000 + 1 ? 0 : 1) }'"'"' slow.out &&
    curl -s "$LB_URL/metrics" | grep -q "^logbucket_tail_rows_dropped_total [1-9]"
'

test_expect_success 'the daemon stops promptly with tail clients attached' '
    tail_bg s1 "/api/v1/tail?db=t" &&
    tail_bg s2 "/api/v1/tail?db=t" -H "Accept: text/event-stream" &&
    start=$(date +%s) &&
    lb_stop 10 &&
    test $(($(date +%s) - start)) -le 3 &&
    wait "$(cat s1.pid)" && wait "$(cat s2.pid)"
'

test_expect_success 'auth: the read right on the database is needed' '
    LB_DATA=$SHARNESS_TRASH_DIRECTORY/auth lb_start --set "token=rd read t" \
        --set "token=wr write t" --set "token=other read x" &&
    test "$(lb_req GET "/api/v1/tail?db=t")" = 401 &&
    test "$(lb_req GET "/api/v1/tail?db=t" -H "Authorization: Token wr")" = 403 &&
    test "$(lb_req GET "/api/v1/tail?db=t" -H "Authorization: Token other")" = 403 &&
    curl -s -XPOST "$LB_URL/write?db=t" -H "Authorization: Token wr" --data-binary "a,host=h v=1" &&
    tail_bg au "/api/v1/tail?db=t" -H "Authorization: Token rd" &&
    grep -q "^HTTP/1.1 200" au.h &&
    curl -s -XPOST "$LB_URL/write?db=t" -H "Authorization: Token wr" --data-binary "a,host=h v=2" &&
    wait_for au.out "\"v\":2.0" &&
    tail_end au &&
    lb_stop
'

test_done
