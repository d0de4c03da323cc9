#!/bin/sh
test_description='syslog: random RFC 5424 and BSD messages are parsed as syslog-ng parses them (host, program, PID, MSGID, message, facility, level, structured data, stamp)'
# the differences go to the test's stderr (fd 7), which prove shows
exec 7>&2
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

# Each message goes over TCP to logbucket and to syslog-ng, which writes
# what it parsed as JSON lines; 66-syslog-vs-syslog-ng.py compares them
# (the cases where logbucket differs on purpose, listed in
# ingest/README.md, are not generated). Two seeds: one fixed, one new every
# run (printed, to rerun). Both run in UTC, so that a BSD stamp (local
# time, no zone) means the same instant to both.

# syslog-ng-core conflicts with rsyslog (a system logger): a machine that
# runs rsyslog is left alone; else it is installed as 65-syslog-ng.t does.
if dpkg -s rsyslog >/dev/null 2>&1; then
    skip_all='rsyslog is installed, and syslog-ng conflicts with it'
    test_done
fi
if ! command -v syslog-ng >/dev/null && test "$(id -u)" = 0 && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq --no-install-recommends \
        --no-remove syslog-ng-core >apt.log 2>&1 || true
fi
if ! command -v syslog-ng >/dev/null; then
    skip_all='syslog-ng (Debian syslog-ng-core) is not installed and could not be'
    test_done
fi
PY=/usr/bin/python3
command -v "$PY" >/dev/null || PY=python3
if ! command -v "$PY" >/dev/null; then
    skip_all='python3 is missing'
    test_done
fi

TZ=UTC
export TZ

# sng_start: syslog-ng with an RFC 3164 source on SNG_BSD and an RFC 5424
# one on SNG_5424 (newline framing), each written to its file as JSON
sng_start() {
    dir=$SHARNESS_TRASH_DIRECTORY
    for try in 1 2 3; do
        SNG_BSD=$(free_port) && SNG_5424=$(free_port) || return 1
        version=$(syslog-ng --version | sed -n 's/^Config version: *//p')
        cat >"$dir/syslog-ng.conf" <<-CONF
	@version: ${version:-3.38}
	options { stats-freq(0); use-dns(no); dns-cache(no); keep-hostname(yes);
	          chain-hostnames(no); keep-timestamp(yes); frac-digits(9); };
	source s_bsd { network(ip("127.0.0.1") port($SNG_BSD) transport("tcp")); };
	source s_5424 { network(ip("127.0.0.1") port($SNG_5424) transport("tcp") flags(syslog-protocol)); };
	template t_json { template("\$(format-json --scope rfc5424 --scope nv-pairs --key ISODATE --key FACILITY --key LEVEL)\n"); };
	destination d_bsd { file("$dir/bsd.json" template(t_json)); };
	destination d_5424 { file("$dir/5424.json" template(t_json)); };
	log { source(s_bsd); destination(d_bsd); };
	log { source(s_5424); destination(d_5424); };
	CONF
        rm -f "$dir/bsd.json" "$dir/5424.json"
        sng_run "$dir" && return 0
    done
    return 1
}

seed=$(od -An -N2 -tu2 /dev/urandom | tr -d " ")
for s in 1 "$seed"; do
    test_expect_success "400 messages of seed $s: parsed as syslog-ng parses them" "
        { sl_start --set reject_older_than=0 --set reject_newer_than=0 ||
          { echo 'logbucketd did not start' >&7; false; }; } &&
        { sng_start || { echo 'syslog-ng did not start' >&7; cat sng.log >&7; false; }; } &&
        '$PY' '$LB_TOP/tests/e2e/66-syslog-vs-syslog-ng.py' \"\$LB_URL\" \"\$SL_TCP\" \"\$SNG_BSD\" \
            \"\$SNG_5424\" '$SHARNESS_TRASH_DIRECTORY/bsd.json' '$SHARNESS_TRASH_DIRECTORY/5424.json' \
            $s 400 >out 2>&1;
        rc=\$?
        sng_stop
        lb_stop 10
        st=\$?
        rm -rf '$SHARNESS_TRASH_DIRECTORY/data'
        { test \$rc = 0 || { cat out >&7; false; }; } &&
        { test \$st = 0 || { echo \"logbucketd exited with \$st\" >&7; tail -n 20 \"\$LB_LOG\" >&7; false; }; } &&
        { grep -q '^400 messages, 0 differences' out || { cat out >&7; false; }; }
    "
done

test_done
