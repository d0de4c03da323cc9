# Helpers of the syslog end-to-end tests, sourced after lib.sh: the daemon
# with both syslog listeners on kernel-chosen loopback ports (read from its
# "syslog: listening on" log lines), SQL counts, /metrics values.
#
#   sl_start [daemon args...]   lb_start with the listeners; sets SL_TCP, SL_UDP
#   sl_count STATEMENT          prints N of {"count":N}
#   sl_wait_count STATEMENT N   waits (10 s at most) until the count is N
#   sl_metric 'NAME{LABELS}'    prints the value of a /metrics line (0 if none)

sl_ports() {
    SL_TCP=$(sed -n 's/.*syslog: listening on tcp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LB_LOG.new" | tail -n 1)
    SL_UDP=$(sed -n 's/.*syslog: listening on udp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LB_LOG.new" | tail -n 1)
    test -n "$SL_TCP" && test -n "$SL_UDP"
}

sl_start() {
    lb_start --set syslog_tcp_listen=127.0.0.1:0 --set syslog_udp_listen=127.0.0.1:0 "$@" &&
    sl_ports
}

sl_sql() { lb_req POST /api/v1/sql -H "Content-Type: text/plain" --data-binary "$1"; }

sl_count() {
    code=$(sl_sql "$1")
    if test "$code" != 200; then
        echo "$1: HTTP $code $(cat body)" >&2
        return 1
    fi
    sed -n 's/^{"count":\([0-9]*\)}$/\1/p' body
}

sl_wait_count() {  # SQL WANT [TRIES]: TRIES (100) tenths of a second at most
    n=0
    while test $n -lt "${3:-100}"; do
        got=$(sl_count "$1") || got=
        test "$got" = "$2" && return 0
        sleep 0.1
        n=$((n + 1))
    done
    echo "$1: $got rows, want $2" >&2
    return 1
}

sl_metric() {
    curl -s "$LB_URL/metrics" >metrics.txt &&
    awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }' metrics.txt
}

# diag TEXT: a TAP comment, shown by prove -v even when the test is quiet
diag() { printf '%s\n' "$*" | sed 's/^/# /' >&5; }

# sl_rows STATEMENT: the rows with ts replaced by TS (compared whole)
sl_rows() {
    code=$(sl_sql "$1") && test "$code" = 200 &&
    sed 's/^{"ts":[0-9]*,/{"ts":TS,/' body
}

# sl_ts_within STATEMENT LO HI: every row's ts (ns) is in [LO, HI] seconds
sl_ts_within() {
    code=$(sl_sql "$1") && test "$code" = 200 &&
    sed -n 's/^{"ts":\([0-9]*\),.*/\1/p' body >ts.txt &&
    test -s ts.txt &&
    awk -v lo="$2" -v hi="$3" '{ s = substr($1, 1, length($1) - 9) + 0; if (s < lo || s > hi) bad++ }
        END { exit bad ? 1 : 0 }' ts.txt
}

# A syslog-ng the test started (SNG_PID), stopped by its PID; sourcing this
# file stops it at exit too.
SNG_PID=
sng_stop() {
    lb_stop_pid "$SNG_PID" 2>/dev/null
    SNG_PID=
    return 0
}
trap 'sng_stop; lb_cleanup' EXIT

# A free loopback TCP port (the kernel's pick, released at once: a small
# race, so the callers try three ports).
free_port() {
    perl -MIO::Socket::INET -e \
        'print IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0, ReuseAddr => 1)->sockport'
}

# sng_run DIR: syslog-ng in the foreground with DIR/syslog-ng.conf (its
# persist file, pid file and control socket in DIR, its stderr in sng.log),
# SNG_PID; returns once it says it started, or 1 (its log on stderr,
# stopped) if it did not within 10 s.
sng_run() {
    : >sng.log
    syslog-ng -F -e --no-caps -f "$1/syslog-ng.conf" -R "$1/syslog-ng.persist" \
        -p "$1/syslog-ng.pid" -c "$1/syslog-ng.ctl" >sng.log 2>&1 </dev/null &
    SNG_PID=$!
    n=0
    while test $n -lt 200; do
        grep -q "syslog-ng starting up" sng.log && return 0
        kill -0 "$SNG_PID" 2>/dev/null || break
        sleep 0.05
        n=$((n + 1))
    done
    cat sng.log >&2
    sng_stop
    return 1
}
