#!/bin/sh
test_description='syslog listeners: logger over TCP and UDP, RFC 5424 and 3164, newline and octet-counted framing, the mapping field by field, durability'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

if ! command -v logger >/dev/null; then
    skip_all='logger (bsdutils) is not installed'
    test_done
fi

# logger's own host name: the short name, or with --rfc5424 the FQDN
HOSTS="$(hostname) $(hostname -f 2>/dev/null)"
host_ok() { for h in $HOSTS; do test "$1" = "$h" && return 0; done; return 1; }
ALL="SELECT /*+ full_scan */ * FROM syslog"

test_expect_success 'start with both listeners' '
    sl_start &&
    diag "syslog tcp $SL_TCP, udp $SL_UDP"
'

test_expect_success 'a listener is off unless configured' '
    "$LOGBUCKETD" --print-config | grep -q "^syslog_tcp_listen = \"\"" &&
    "$LOGBUCKETD" --print-config | grep -q "^syslog_udp_listen = \"\""
'

test_expect_success 'RFC 5424 over TCP: every part mapped' '
    t0=$(date +%s) &&
    logger -n 127.0.0.1 -P "$SL_TCP" -T --rfc5424=notq -p local3.warning -t app5424 --id=4242 \
        --msgid ID7 --sd-id ex@32473 --sd-param "k=\"v 1\"" --sd-param "n=\"2\"" \
        "hello 5424 over tcp" &&
    t1=$(date +%s) &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'app5424'"'"'" 1 &&
    sl_rows "$ALL WHERE event = '"'"'app5424'"'"'" >row &&
    host=$(sed -n "s/.*\"host\":\"\([^\"]*\)\".*/\1/p" row) &&
    host_ok "$host" &&
    cat >expect <<-EOF &&
	{"ts":TS,"host":"$host","event":"app5424","tags":{"facility":"local3","level":"warning","procid":"4242","msgid":"ID7","ex@32473.k":"v 1","ex@32473.n":"2"},"fields":{"msg":"hello 5424 over tcp"}}
	EOF
    test_cmp expect row &&
    sl_ts_within "$ALL WHERE event = '"'"'app5424'"'"'" $((t0 - 1)) $((t1 + 1))
'

test_expect_success 'RFC 3164 over TCP: tag, pid, local time in whole seconds' '
    t0=$(date +%s) &&
    logger -n 127.0.0.1 -P "$SL_TCP" -T --rfc3164 -p daemon.err -t app3164 --id=77 \
        "hello 3164 over tcp" &&
    t1=$(date +%s) &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'app3164'"'"'" 1 &&
    sl_rows "$ALL WHERE event = '"'"'app3164'"'"'" >row &&
    host=$(sed -n "s/.*\"host\":\"\([^\"]*\)\".*/\1/p" row) &&
    host_ok "$host" &&
    cat >expect <<-EOF &&
	{"ts":TS,"host":"$host","event":"app3164","tags":{"facility":"daemon","level":"err","procid":"77"},"fields":{"msg":"hello 3164 over tcp"}}
	EOF
    test_cmp expect row &&
    sl_ts_within "$ALL WHERE event = '"'"'app3164'"'"'" $((t0 - 1)) $((t1 + 1)) &&
    grep -q "000000000$" ts.txt
'

test_expect_success 'octet counting over TCP: 300 messages on one connection, each once' '
    seq 1 300 | sed "s/^/octet line /" >lines &&
    logger -n 127.0.0.1 -P "$SL_TCP" -T --octet-count --rfc5424 -p user.info -t octapp <lines &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'octapp'"'"'" 300 &&
    sl_sql "$ALL WHERE event = '"'"'octapp'"'"'" &&
    sed -n "s/.*\"msg\":\"\([^\"]*\)\".*/\1/p" body | sort >got &&
    sort lines >want &&
    test_cmp want got &&
    grep -c "\"level\":\"info\"" body >n && test "$(cat n)" = 300
'

test_expect_success 'newline framing over TCP: 500 RFC 3164 messages, each once' '
    seq 1 500 | sed "s/^/newline line /" >lines &&
    logger -n 127.0.0.1 -P "$SL_TCP" -T --rfc3164 -p local7.debug -t nlapp <lines &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'nlapp'"'"'" 500 &&
    sl_sql "$ALL WHERE event = '"'"'nlapp'"'"'" &&
    sed -n "s/.*\"msg\":\"\([^\"]*\)\".*/\1/p" body | sort >got &&
    sort lines >want &&
    test_cmp want got &&
    test "$(grep -c "\"facility\":\"local7\",\"level\":\"debug\"" body)" = 500
'

test_expect_success 'UDP, RFC 5424 and 3164: one message per datagram' '
    seq 1 50 | sed "s/^/udp 5424 /" >lines5 &&
    seq 1 50 | sed "s/^/udp 3164 /" >lines3 &&
    logger -n 127.0.0.1 -P "$SL_UDP" -d --rfc5424=notq -p mail.notice -t udp5424 --id=99 --msgid M <lines5 &&
    logger -n 127.0.0.1 -P "$SL_UDP" -d --rfc3164 -p local1.crit -t udp3164 <lines3 &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'udp5424'"'"'" 50 &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'udp3164'"'"'" 50 &&
    sl_rows "$ALL WHERE event = '"'"'udp5424'"'"' LIMIT 1" >row &&
    grep -q "\"tags\":{\"facility\":\"mail\",\"level\":\"notice\",\"procid\":\"99\",\"msgid\":\"M\"},\"fields\":{\"msg\":\"udp 5424 [0-9]*\"}}" row &&
    sl_rows "$ALL WHERE event = '"'"'udp3164'"'"' LIMIT 1" >row &&
    grep -q "\"tags\":{\"facility\":\"local1\",\"level\":\"crit\"},\"fields\":{\"msg\":\"udp 3164 [0-9]*\"}}" row
'

test_expect_success 'the host index finds the messages of a host' '
    host=$(sed -n "s/.*\"host\":\"\([^\"]*\)\".*/\1/p" row) &&
    total=$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog") &&
    test "$(sl_count "SELECT COUNT(*) FROM syslog WHERE host = '"'"'$host'"'"'")" -le "$total" &&
    test "$(sl_count "SELECT COUNT(*) FROM syslog WHERE host = '"'"'$host'"'"' AND event = '"'"'nlapp'"'"'")" = 500
'

test_expect_success 'an exact duplicate is one row; any difference is another' '
    dup="<13>1 2026-01-02T03:04:05.000006Z h1 dupapp - - - same text" &&
    printf "%s\n%s\n%s\n" "$dup" "$dup" "$dup." >dups &&
    "$LB_TOP/tests/e2e/syslog-send.pl" tcp "$SL_TCP" dups &&
    sl_wait_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'dupapp'"'"'" 2 &&
    sleep 0.2 &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'dupapp'"'"'")" = 2
'

test_expect_success 'metrics count messages, rows, bytes and connections' '
    test "$(sl_metric "logbucket_syslog_rows_total{transport=\"tcp\"}")" = 805 &&
    test "$(sl_metric "logbucket_syslog_rows_total{transport=\"udp\"}")" = 100 &&
    test "$(sl_metric "logbucket_syslog_messages_total{transport=\"tcp\",format=\"rfc5424\"}")" = 304 &&
    test "$(sl_metric "logbucket_syslog_messages_total{transport=\"tcp\",format=\"rfc3164\"}")" = 501 &&
    test "$(sl_metric "logbucket_syslog_messages_total{transport=\"udp\",format=\"rfc3164\"}")" = 50 &&
    test "$(sl_metric "logbucket_syslog_bytes_total{transport=\"tcp\"}")" -gt 20000 &&
    test "$(sl_metric "logbucket_syslog_connections_total")" -ge 4 &&
    test "$(sl_metric "logbucket_syslog_connections")" = 0
'

test_expect_success 'a written message survives kill -9' '
    lb_kill9 &&
    sl_start &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog")" = 904
'

# A stop writes what the listeners hold: with a 10 s flush interval and a
# TCP connection kept open, the batches are still pending at SIGTERM.
test_expect_success 'SIGTERM writes the pending batches' '
    lb_stop &&
    sl_start --set syslog_flush_interval=10s --set syslog_batch_rows=100000 &&
    seq 1 40 | sed "s/^/pending /" >lines &&
    sed "s/^/<13>1 - h pendapp - - - /" lines >frames &&
    { "$LB_TOP/tests/e2e/syslog-send.pl" keep "$SL_TCP" frames 20 & } &&
    keeper=$! &&
    logger -n 127.0.0.1 -P "$SL_UDP" -d --rfc5424 -t pendudp <lines &&
    sleep 0.5 &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'pendapp'"'"'")" = 0 &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'pendudp'"'"'")" = 0 &&
    lb_stop &&
    wait $keeper &&
    grep -q "logbucketd stopped" "$LB_LOG" &&
    sl_start &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'pendapp'"'"'")" = 40 &&
    test "$(sl_count "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE event = '"'"'pendudp'"'"'")" = 40
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
