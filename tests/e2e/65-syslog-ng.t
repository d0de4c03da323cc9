#!/bin/sh
test_description='a real client: syslog-ng relays loggen messages as JSON lines to /api/v1/ingest'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

# syslog-ng stamps with whole seconds (${ISODATE}): thousands of messages of
# one host and program share each second, and every one must be kept.

# syslog-ng is a system logger: Debian's syslog-ng-core conflicts with
# rsyslog, so a machine that runs rsyslog is left alone.
if dpkg -s rsyslog >/dev/null 2>&1; then
    skip_all='rsyslog is installed, and syslog-ng conflicts with it'
    test_done
fi

sng_ready() {
    command -v syslog-ng >/dev/null && command -v loggen >/dev/null &&
        command -v syslog-ng-ctl >/dev/null &&
        syslog-ng --version 2>/dev/null | sed -n 's/^Available-Modules: *//p' | tr ',' '\n' | grep -qx http
}

# Installed once per machine, as root, by apt-get: never removing a package
# (--no-remove: another syslog daemon stays, and the install fails instead).
if ! sng_ready && test "$(id -u)" = 0 && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive
    export DEBIAN_FRONTEND
    apt_install() {
        timeout 300 apt-get install -y -qq --no-install-recommends --no-remove \
            syslog-ng-core syslog-ng-mod-http >>apt.log 2>&1
    }
    apt_install || { timeout 300 apt-get update -qq >>apt.log 2>&1 && apt_install; } || true
fi
if ! sng_ready; then
    skip_all='syslog-ng with its http module (Debian syslog-ng-core, syslog-ng-mod-http) is not installed and could not be'
    test -s apt.log && skip_all="$skip_all (apt-get: $(tail -n 1 apt.log | tr -d '#'))"
    test_done
fi

# diag TEXT: a TAP comment, shown by prove -v even when the test is quiet
diag() { printf '%s\n' "$*" | sed 's/^/# /' >&5; }

sql() { lb_req POST /api/v1/sql -H "Content-Type: text/plain" --data-binary "$1"; }

# count STATEMENT: prints N of the reply {"count":N}
count() {
    code=$(sql "$1")
    if test "$code" != 200; then
        diag "$1: HTTP $code $(cat body)"
        return 1
    fi
    sed -n 's/^{"count":\([0-9]*\)}$/\1/p' body
}

# The syslog-ng instance of the test: its own config, persist file, pid file
# and control socket in the trash directory; stopped by its PID (sng_stop).
SNG_DIR=$SHARNESS_TRASH_DIRECTORY

# sng_config PORT DB: a TCP syslog source on PORT, every message posted to
# the daemon's DB as a JSON line (ts, host, event = the program, msg), in
# batches of up to 500 lines; flow control, so that nothing is dropped when
# the daemon is slower than loggen.
sng_config() {
    sng_version=$(syslog-ng --version | sed -n 's/^Config version: *//p')
    cat >"$SNG_DIR/syslog-ng.conf" <<-EOF
	@version: ${sng_version:-3.38}
	options {
	    stats-freq(0);
	    use-dns(no);
	    dns-cache(no);
	    keep-hostname(yes);
	    chain-hostnames(no);
	    log-fifo-size(20000);
	};
	source s_net {
	    network(ip("127.0.0.1") port($1) transport("tcp") max-connections(4)
	            log-iw-size(10000) flags(no-multi-line));
	};
	destination d_lb {
	    http(url("$LB_URL/api/v1/ingest?db=$2&format=jsonl")
	         method("POST")
	         headers("Content-Type: application/x-ndjson")
	         body("\$(format-json ts=\${ISODATE} host=\${HOST} event=\${PROGRAM} msg=\${MSG})")
	         batch-lines(500)
	         batch-timeout(200)
	         workers(2)
	         timeout(30));
	};
	log { source(s_net); destination(d_lb); flags(flow-control); };
	EOF
}

# sng_start DB: syslog-ng in the foreground (its stderr in sng.log),
# listening on SNG_PORT once it says so.
sng_start() {
    for try in 1 2 3; do
        SNG_PORT=$(free_port) && sng_config "$SNG_PORT" "$1" &&
        syslog-ng --syntax-only -f "$SNG_DIR/syslog-ng.conf" >sng.syntax 2>&1 || {
            cat sng.syntax >&2
            return 1
        }
        sng_run "$SNG_DIR" && return 0
    done
    return 1
}

# sng_stat NAME: a counter of the http destination (written, dropped, queued)
sng_stat() {
    syslog-ng-ctl stats -c "$SNG_DIR/syslog-ng.ctl" 2>/dev/null |
        awk -F';' -v t="$1" '$1 == "dst.http" && $5 == t { n += $6 } END { print n + 0 }'
}

test_expect_success 'start the daemon and syslog-ng' '
    lb_start &&
    sng_start sl &&
    diag "syslog-ng $(syslog-ng --version | sed -n "1s/^syslog-ng //p") listening on 127.0.0.1:$SNG_PORT"
'

test_expect_success 'loggen sends 5,000 messages over one TCP connection in a few seconds' '
    timeout 60 loggen --inet --stream --active-connections 1 --rate 2000 --interval 10 \
        --number 5000 --size 200 127.0.0.1 $SNG_PORT >loggen.out 2>loggen.err &&
    sent=$(sed -n "s/^average rate.* count=\([0-9]*\),.*/\1/p" loggen.err | tail -n 1) &&
    diag "loggen: $(grep "^average rate" loggen.err)" &&
    test -n "$sent" &&
    test "$sent" -ge 1000 &&
    echo "$sent" >sent
'

# Until the daemon holds every message, or syslog-ng has delivered (or
# dropped) them all and the count no longer moves, for 60 s at most.
test_expect_success 'the daemon holds exactly the number loggen sent' '
    sent=$(cat sent) &&
    n=0 last=-1 stable=0 &&
    while test $n -lt 120; do
        got=$(count "SELECT COUNT(*) FROM sl WHERE ts >= 0") || got=
        test "$got" = "$sent" && break
        done_sng=$(( $(sng_stat written) + $(sng_stat dropped) ))
        if test "$done_sng" -ge "$sent" && test "$(sng_stat queued)" -eq 0 && test "$got" = "$last"; then
            stable=$((stable + 1))
            test $stable -ge 2 && break
        else
            stable=0
        fi
        last=$got
        sleep 0.5
        n=$((n + 1))
    done &&
    diag "syslog-ng: written $(sng_stat written), dropped $(sng_stat dropped), queued $(sng_stat queued); daemon: $got rows of $sent sent" &&
    test "$(sng_stat dropped)" -eq 0 &&
    test "$got" = "$sent"
'

test_expect_success 'every message once, many of them sharing a second' '
    sent=$(cat sent) &&
    test "$(sql "SELECT * FROM sl WHERE ts >= 0")" = 200 &&
    sed -n "s/.*\"msg\":\"\([^\"]*\)\".*/\1/p" body | sort -u >msgs &&
    sed -n "s/.*\"ts\":\([0-9]*\),.*/\1/p" body | sort -u >stamps &&
    diag "$(wc -l <body) rows, $(wc -l <msgs) distinct messages, $(wc -l <stamps) distinct seconds" &&
    test $(wc -l <body) -eq "$sent" &&
    test $(wc -l <msgs) -eq "$sent" &&
    test $(wc -l <stamps) -lt "$sent" &&
    host=$(sed -n "1s/.*\"host\":\"\([^\"]*\)\".*/\1/p" body) &&
    test -n "$host" &&
    test "$(count "SELECT COUNT(*) FROM sl WHERE host = '"'"'$host'"'"'")" = "$sent"
'

test_expect_success 'stop syslog-ng' '
    sng_stop &&
    grep -q "syslog-ng shutting down" sng.log
'

test_expect_success 'after a restart of the daemon (rows read from its SSTables) the same count' '
    sent=$(cat sent) &&
    lb_stop 30 &&
    lb_start &&
    test "$(count "SELECT COUNT(*) FROM sl WHERE ts >= 0")" = "$sent" &&
    test "$(sql "SELECT * FROM sl WHERE ts >= 0 LIMIT 1")" = 200 &&
    host=$(sed -n "1s/.*\"host\":\"\([^\"]*\)\".*/\1/p" body) &&
    test -n "$host" &&
    test "$(lb_req GET "/api/v1/query?db=sl&host=$host")" = 200 &&
    test $(wc -l <body) -eq "$sent"
'

test_expect_success 'stop' '
    lb_stop 30
'

test_done
