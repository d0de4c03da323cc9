#!/bin/sh
test_description='syslog bad input: truncated and oversize frames, binary garbage, NUL bytes, broken octet counting, silent and surplus connections; counted, nothing half-stored, the daemon keeps serving'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

SEND="$LB_TOP/tests/e2e/syslog-send.pl"
BAD="SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = 'bad'"
rej() { sl_metric "logbucket_syslog_rejects_total{transport=\"$1\",reason=\"$2\"}"; }
# frame MSG: MSG octet-counted
frame() { printf '%d %s' "${#1}" "$1"; }
good() { printf '<13>1 - h bad - - - %s' "$1"; }

test_expect_success 'a listener beyond loopback needs a token or insecure' '
    test_must_fail "$LOGBUCKETD" --set syslog_tcp_listen=0.0.0.0:5514 --check-config 2>err &&
    grep -q "syslog_tcp_listen = \"0.0.0.0:5514\" is reachable beyond loopback" err &&
    test_must_fail "$LOGBUCKETD" --set syslog_udp_listen=nohost --check-config 2>err &&
    grep -q "syslog_udp_listen" err &&
    "$LOGBUCKETD" --set syslog_udp_listen=0.0.0.0:5514 --set insecure=true --check-config &&
    test_must_fail "$LOGBUCKETD" --set syslog_db=.hidden --check-config 2>err &&
    grep -q "syslog_db = \".hidden\": a database name is" err
'

test_expect_success 'start with small limits' '
    sl_start --set syslog_max_message_bytes=1KiB --set syslog_max_connections=4 \
        --set syslog_idle_timeout=1s
'

test_expect_success 'a truncated octet-counted frame is counted, not stored' '
    { frame "$(good good1)" && printf "50 %s" "$(good cut)"; } >f &&
    "$SEND" tcp "$SL_TCP" f &&
    sl_wait_count "$BAD" 1 &&
    test "$(rej tcp truncated)" = 1 &&
    sl_sql "SELECT /*+ full_scan */ * FROM syslog WHERE event = '"'"'bad'"'"'" &&
    grep -q "\"msg\":\"good1\"" body && ! grep -q cut body
'

test_expect_success 'an oversize frame is dropped and the connection goes on' '
    big=$(printf "%02000d" 0) &&
    { frame "$(good "$big")" && frame "$(good good2)"; } >f &&
    "$SEND" tcp "$SL_TCP" f &&
    { good "$big" && echo && good good3 && echo; } >f &&
    "$SEND" tcp "$SL_TCP" f &&
    sl_wait_count "$BAD" 3 &&
    test "$(rej tcp oversize)" = 2
'

test_expect_success 'an oversize UDP datagram is dropped' '
    good "$big" >d1 && good good4 >d2 &&
    "$SEND" udp "$SL_UDP" d1 d2 &&
    sl_wait_count "$BAD" 4 &&
    test "$(rej udp oversize)" = 1
'

test_expect_success 'binary garbage is stored whole (UTF-8 repaired), a NUL byte is refused' '
    { printf X && head -c 4096 /dev/urandom | tr -d "\000\n" | head -c 600 && echo &&
      printf "a\000b\n" && good good5 && echo; } >f &&
    "$SEND" tcp "$SL_TCP" f &&
    sl_wait_count "$BAD" 5 &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'syslog'"'"'" 1 &&
    test "$(rej tcp unparsed)" = 1 &&
    test "$(rej tcp bad_message)" = 1 &&
    sl_sql "SELECT /*+ full_scan */ * FROM syslog WHERE event = '"'"'syslog'"'"'" &&
    grep -q "^{\"ts\":[0-9]*,\"host\":\"127.0.0.1\",\"event\":\"syslog\",\"tags\":{},\"fields\":{\"msg\":\"X" body
'

test_expect_success 'octet counting that loses its length closes the connection' '
    { frame "$(good good6)" && printf "xyz %s" "$(good never)"; } >f &&
    "$SEND" tcp "$SL_TCP" f &&
    sl_wait_count "$BAD" 6 &&
    test "$(rej tcp bad_frame)" = 1
'

test_expect_success 'a connection that never sends is closed after syslog_idle_timeout' '
    "$SEND" hold "$SL_TCP" 1 5 >held &&
    read state tenths <held &&
    test "$state" = closed && test "$tenths" -ge 9 && test "$tenths" -le 40 &&
    test "$(sl_metric logbucket_syslog_idle_closes_total)" -ge 1
'

test_expect_success 'a connection over syslog_max_connections is closed at once' '
    "$SEND" hold "$SL_TCP" 5 5 >held &&
    cat held &&
    test "$(sed -n 5p held | cut -d" " -f1)" = closed &&
    test "$(sed -n 5p held | cut -d" " -f2)" -le 5 &&
    test "$(sed -n 1,4p held | awk "\$1 == \"closed\" && \$2 >= 9" | wc -l)" = 4 &&
    test "$(rej tcp connection_limit)" = 1
'

test_expect_success 'the daemon keeps serving; nothing half-stored' '
    test "$(lb_req GET /ping)" = 204 &&
    frame "$(good good7)" >f2 && "$SEND" tcp "$SL_TCP" f2 &&
    sl_wait_count "$BAD" 7 &&
    sl_sql "SELECT /*+ full_scan */ * FROM syslog WHERE event = '"'"'bad'"'"'" &&
    sed -n "s/.*\"msg\":\"\([^\"]*\)\".*/\1/p" body | sort >got &&
    printf "good%d\n" 1 2 3 4 5 6 7 >want &&
    test_cmp want got &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog")" = 8 &&
    test "$(sl_metric logbucket_syslog_connections)" = 0
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
