#!/bin/sh
# Slow and greedy clients (slow-loris): a client that sends its request
# headers a byte at a time is cut off request_timeout after it connected,
# however steadily it trickles; one client address cannot take more than
# max_connections_per_client slots; and when every slot is taken, /ping and
# /health still answer from a reserve while other requests get a clear 503.
# Clients come from several loopback addresses (127.0.0.2, .3, ...), which
# reach the daemon's 127.0.0.1 on Linux.

test_description='slow headers, connections per client, the health reserve'
. "$(dirname "$0")/lib.sh"

SLOW=$LB_TOP/tests/e2e/slowconn.pl

# held FILE: waits up to 10 s for slowconn.pl's "ready" line in FILE.
held() {
    n=0
    while ! grep -q '^ready' "$1" && [ $n -lt 200 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    grep -q '^ready' "$1"
}

test_expect_success 'start with request_timeout 2s, 8 connections, 3 per client' '
    lb_start --set request_timeout=2s --set max_connections=8 \
        --set max_connections_per_client=3
'

test_expect_success 'headers trickled a byte every 0.5 s are cut off within request_timeout + 1 s' '
    "$SLOW" $LB_PORT 127.0.0.1 2 0.5 10 >slow.out &&
    cat slow.out &&
    grep -q "^ready 2$" slow.out &&
    closed=$(sed -n "s/^closed \([0-9]*\) after \([0-9]*\).*/\1 \2/p" slow.out) &&
    test "${closed% *}" = 2 &&
    test "${closed#* }" -le 3 &&
    lb_req GET /metrics >/dev/null &&
    grep "^logbucket_http_slow_clients_closed_total" body &&
    grep -q "^logbucket_http_slow_clients_closed_total [2-9]" body
'

test_expect_success 'one client address gets at most max_connections_per_client slots' '
    "$SLOW" $LB_PORT 127.0.0.2 5 0.2 1 >greedy.out &&
    cat greedy.out &&
    grep -q "^ready 3$" greedy.out
'

test_expect_success 'every slot taken: /ping and /health answer, a query gets 503 with the reason' '
    "$SLOW" $LB_PORT 127.0.0.2 3 0.2 1.8 >a.out &
    a=$! &&
    "$SLOW" $LB_PORT 127.0.0.3 3 0.2 1.8 >b.out &
    b=$! &&
    "$SLOW" $LB_PORT 127.0.0.4 2 0.2 1.8 >c.out &
    c=$! &&
    held a.out && held b.out && held c.out &&
    cat a.out b.out c.out &&
    test "$(lb_req GET /ping --interface 127.0.0.5)" = 204 &&
    test "$(lb_req GET /health --interface 127.0.0.5)" = 200 &&
    code=$(lb_req POST /api/v1/sql --interface 127.0.0.5 --data-binary "SHOW DATABASES") &&
    wait $a $b $c &&
    test "$code" = 503 &&
    grep -q "too many connections" body &&
    test "$(lb_header Retry-After)" = 1
'

test_expect_success 'once they are gone, everything is served again' '
    test "$(lb_req POST /api/v1/sql --data-binary "SHOW DATABASES")" = 200 &&
    test "$(lb_req POST "/write?db=alive" --data-binary "m,host=a v=1i 1")" = 204
'

test_expect_success 'a slow but complete request within request_timeout is served' '
    printf "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n" >ping.req &&
    perl -e '"'"'
        use IO::Socket::INET; use Time::HiRes qw(sleep);
        my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ARGV[0]") or die;
        for my $c (split //, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n") { syswrite($s, $c); sleep 0.02 }
        my $r; sysread($s, $r, 4096); print((split /\r\n/, $r)[0], "\n");
    '"'"' $LB_PORT >slowping.out &&
    test "$(cat slowping.out)" = "HTTP/1.1 204 No Content"
'

test_expect_success 'stop' '
    lb_stop
'

test_done
