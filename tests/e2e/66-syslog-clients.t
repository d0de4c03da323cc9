#!/bin/sh
test_description='real syslog clients: syslog-ng loggen (RFC 5424 octet-counted, BSD newline, UDP) and the npm syslog-client package (TCP and UDP, RFC 5424 and 3164), every record stored and mapped'
# fd 7: the script's own stderr, which prove shows (sharness sends a test's
# stderr elsewhere unless verbose), for the UDP test's diagnostics
exec 7>&2
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

ALL="SELECT /*+ full_scan */ * FROM syslog"
COUNT="SELECT /*+ full_scan */ COUNT(*) FROM syslog"
q() { printf "'%s'" "$1"; }

# loggen comes with Debian's syslog-ng-core, which conflicts with rsyslog:
# a machine that runs rsyslog is left alone.
if dpkg -s rsyslog >/dev/null 2>&1; then
    loggen_why='rsyslog is installed, and syslog-ng-core (loggen) conflicts with it'
elif ! command -v loggen >/dev/null && test "$(id -u)" = 0 && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends \
        --no-remove syslog-ng-core >apt.log 2>&1 || true
fi
if test -z "$loggen_why" && command -v loggen >/dev/null; then
    test_set_prereq LOGGEN
else
    loggen_why=${loggen_why:-loggen (Debian syslog-ng-core) is not installed and could not be}
fi

# The npm client, installed once per machine into a folder outside the tree.
client_dir=${LB_NPM_CACHE_DIR:-${TMPDIR:-/tmp}/logbucket-npm-syslog}
if command -v node >/dev/null && command -v npm >/dev/null &&
    ! test -d "$client_dir/node_modules/syslog-client"; then
    mkdir -p "$client_dir" &&
    (cd "$client_dir" && timeout 120 npm install --no-audit --no-fund --silent \
        syslog-client@1 >npm.log 2>&1) || true
fi
if test -d "$client_dir/node_modules/syslog-client"; then
    test_set_prereq SYSLOG_CLIENT
else
    client_why='npm could not install syslog-client (or node is missing)'
fi
test -n "$loggen_why" && echo "# skipping loggen: $loggen_why"
test -n "$client_why" && echo "# skipping syslog-client: $client_why"

test_expect_success 'start' '
    sl_start
'

# loggen_sent: the count of its "average rate" line
loggen_sent() { sed -n "s/^average rate.* count=\([0-9]*\),.*/\1/p" "$1" | tail -n 1; }

test_expect_success LOGGEN 'loggen: RFC 5424, octet-counted, over TCP: every message' '
    timeout 60 loggen --inet --stream --syslog-proto --active-connections 1 --rate 5000 \
        --interval 10 --number 5000 --size 200 127.0.0.1 "$SL_TCP" >out 2>err &&
    sent=$(loggen_sent err) && diag "loggen -P: $(grep "^average rate" err)" &&
    test "$sent" -ge 1000 &&
    sl_wait_count "$COUNT WHERE event = $(q prg00000)" "$sent" &&
    sl_sql "$ALL WHERE event = $(q prg00000)" >/dev/null &&
    test "$(sed -n "s/.*\"msg\":\"seq: \([0-9]*\),.*/\1/p" body | sort -u | wc -l)" = "$sent" &&
    test "$(grep -c "^{\"ts\":[0-9]*,\"host\":\"localhost\",\"event\":\"prg00000\",\"tags\":{\"facility\":\"auth\",\"level\":\"info\",\"procid\":\"1234\"},\"fields\":{\"msg\":\"seq: [0-9]*, thread: 0000, runid: [0-9]*, stamp: [-0-9T:]* PADD" body)" = "$sent" &&
    echo "$sent" >sent5424 &&
    date +%s >end5424
'

test_expect_success LOGGEN 'loggen: BSD format (RFC 3339 stamp), newline framing, over TCP' '
    before=$(sl_count "$COUNT WHERE event = $(q prg00000)") &&
    timeout 60 loggen --inet --stream --active-connections 1 --rate 5000 --interval 10 \
        --number 3000 --size 200 127.0.0.1 "$SL_TCP" >out 2>err &&
    sent=$(loggen_sent err) && diag "loggen: $(grep "^average rate" err)" &&
    test "$sent" -ge 1000 &&
    sl_wait_count "$COUNT WHERE event = $(q prg00000)" $((before + sent)) &&
    test "$(sl_metric "logbucket_syslog_messages_total{transport=\"tcp\",format=\"rfc3164\"}")" = "$sent" &&
    test "$(sl_metric "logbucket_syslog_rejects_total{transport=\"tcp\",reason=\"unparsed\"}")" = 0
'

# A loggen message holds its sequence number and the second its run
# started (runid, stamp); with the same host, app, procid and second-precision
# ts, the UDP run's messages would be byte for byte the first ones of the
# RFC 5424 run above if both started in one second: exact duplicates, one
# row each (DESIGN §1). So the UDP run starts in a later second.
test_expect_success LOGGEN 'loggen: UDP datagrams (octet-counted by loggen: the count is taken off)' '
    n=0 &&
    while test "$(date +%s)" -le "$(cat end5424)" && test $n -lt 30; do
        sleep 0.1; n=$((n + 1))
    done &&
    timeout 60 loggen --inet --dgram --syslog-proto --rate 1000 --interval 10 --number 300 \
        --size 200 127.0.0.1 "$SL_UDP" >out 2>err &&
    sent=$(loggen_sent err) && diag "loggen -D: $(grep "^average rate" err)" &&
    test "$sent" -ge 100 &&
    want=$(( $(cat sent5424) + $(sl_metric "logbucket_syslog_messages_total{transport=\"tcp\",format=\"rfc3164\"}") + sent )) &&
    if ! sl_wait_count "SELECT COUNT(*) FROM syslog WHERE host = $(q localhost) AND event = $(q prg00000)" \
        "$want" 300
    then
        # what the daemon counted, and what the kernel dropped on the socket
        sl_metric x >/dev/null
        { echo "66-syslog-clients test 4: want $want rows; loggen: $(grep "^average rate" err)"
          grep "^logbucket_syslog.*udp" metrics.txt
          port_hex=$(printf "%04X" "$SL_UDP")
          awk -v p=":$port_hex" "\$2 ~ p \"\$\" { print \"udp socket drops: \" \$NF }" /proc/net/udp
          sl_count "SELECT COUNT(*) FROM syslog WHERE host = $(q localhost) AND event = $(q prg00000)"
          sl_sql "EXPLAIN ANALYZE SELECT COUNT(*) FROM syslog WHERE host = $(q localhost) AND event = $(q prg00000)" >/dev/null
          cat body
          sl_sql "SELECT /*+ full_scan */ host, event, COUNT(*) FROM syslog GROUP BY host, event" >/dev/null
          cat body
          sl_sql "SELECT /*+ full_scan */ COUNT(*) FROM syslog WHERE host = $(q localhost) AND event = $(q prg00000)" >/dev/null
          cat body
        } >&7 2>&1
        false
    fi
'

test_expect_success SYSLOG_CLIENT 'syslog-client: RFC 5424 over TCP, field by field' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/66-syslog-client.js" \
        "$SL_TCP" tcp 5424 200 nodetcp >out 2>err &&
    grep -q "sent 200" out &&
    sl_wait_count "SELECT COUNT(*) FROM syslog WHERE host = $(q node-host) AND event = $(q nodetcp)" 200 &&
    sl_rows "$ALL WHERE event = $(q nodetcp)" >rows &&
    sed "s/\"procid\":\"[0-9]*\"/\"procid\":\"PID\"/" rows | sort -u >got &&
    sed -n "s/.*\"msg\":\"client message \([0-9]*\)\".*/\1/p" rows | sort -n >n &&
    seq 0 199 >want_n && test_cmp want_n n &&
    sed "s/\"msg\":\"client message [0-9]*\"/\"msg\":\"M\"/" got | sort -u >shape &&
    cat >want <<-\EOF &&
	{"ts":TS,"host":"node-host","event":"nodetcp","tags":{"facility":"local2","level":"warning","procid":"PID","msgid":"CM"},"fields":{"msg":"M"}}
	EOF
    test_cmp want shape
'

test_expect_success SYSLOG_CLIENT 'syslog-client: RFC 5424 over UDP, RFC 3164 over TCP and UDP' '
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/66-syslog-client.js" \
        "$SL_UDP" udp 5424 200 nodeudp >out 2>err &&
    grep -q "sent 200" out &&
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/66-syslog-client.js" \
        "$SL_TCP" tcp 3164 200 bsdtcp >out 2>err &&
    grep -q "sent 200" out &&
    NODE_PATH="$client_dir/node_modules" timeout 60 node "$LB_TOP/tests/e2e/66-syslog-client.js" \
        "$SL_UDP" udp 3164 200 bsdudp >out 2>err &&
    grep -q "sent 200" out &&
    sl_wait_count "SELECT COUNT(*) FROM syslog WHERE host = $(q node-host) AND event = $(q nodeudp)" 200 &&
    sl_wait_count "SELECT COUNT(*) FROM syslog WHERE host = $(q node-host) AND event = $(q bsdtcp)" 200 &&
    sl_wait_count "SELECT COUNT(*) FROM syslog WHERE host = $(q node-host) AND event = $(q bsdudp)" 200 &&
    sl_rows "$ALL WHERE event = $(q bsdtcp)" >rows &&
    sed "s/\"msg\":\"client message [0-9]*\"/\"msg\":\"M\"/" rows | sort -u >shape &&
    cat >want <<-\EOF &&
	{"ts":TS,"host":"node-host","event":"bsdtcp","tags":{"facility":"local2","level":"warning","procid":"7"},"fields":{"msg":"M"}}
	EOF
    test_cmp want shape
'

test_expect_success 'nothing was refused' '
    for r in unparsed oversize truncated bad_frame bad_message store_error connection_limit; do
        for t in tcp udp; do
            v=$(sl_metric "logbucket_syslog_rejects_total{transport=\"$t\",reason=\"$r\"}")
            test "$v" = 0 || { echo "$t $r: $v" >&2; return 1; }
        done
    done
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
