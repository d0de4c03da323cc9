#!/bin/sh
test_description='real log shippers: rsyslog (omfwd octet-counted RFC 5424 and traditional newline, omelasticsearch bulk) and syslog-ng (syslog(), network(), elasticsearch-http()), every line once and mapped'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/syslog-lib.sh"

# Each shipper runs as this user in the foreground, with its own config,
# state and pid file in the trash directory, reading N known lines from
# files there and sending to 127.0.0.1 only; it is stopped by its PID.
#
# Both run, as the daemon does, in a zone of +05:30 (a POSIX TZ, no tzdata
# needed): an RFC 3339 stamp then carries +05:30, and the traditional BSD
# stamp (no zone) is read in the daemon's zone; every row's ts must be the
# wall clock of the run, so a lost or doubled offset shows.
TZ=IST-5:30
export TZ
N=200
H=$(hostname | cut -d. -f1)
q() { printf "'%s'" "$1"; }

DEBIAN_FRONTEND=noninteractive
export DEBIAN_FRONTEND
apt_get() {
    timeout 300 apt-get -o DPkg::Lock::Timeout=120 "$@" >>apt.log 2>&1
}
# apt_install PKG...: as root, never removing a package (--no-remove: a
# conflicting one stays, and the install fails instead)
apt_install() {
    test "$(id -u)" = 0 && command -v apt-get >/dev/null || return 1
    apt_get install -y -q --no-install-recommends --no-remove "$@" ||
        { apt_get update -q && apt_get install -y -q --no-install-recommends --no-remove "$@"; }
}

# syslog-ng: Debian's syslog-ng-core (it conflicts with rsyslog: a machine
# that runs rsyslog is left alone), its http module and the SCL, which
# holds elasticsearch-http().
sng_ready() {
    command -v syslog-ng >/dev/null && command -v syslog-ng-ctl >/dev/null &&
        syslog-ng --version 2>/dev/null | sed -n 's/^Available-Modules: *//p' | tr ',' '\n' | grep -qx http &&
        test -f /usr/share/syslog-ng/include/scl/elasticsearch/elastic-http.conf
}
if dpkg -s rsyslog >/dev/null 2>&1 && ! sng_ready; then
    sng_why='rsyslog is installed, and syslog-ng-core conflicts with it'
elif ! sng_ready; then
    apt_install syslog-ng-core syslog-ng-mod-http syslog-ng-scl || true
fi
if test -z "$sng_why" && sng_ready; then
    test_set_prereq SYSLOG_NG
else
    sng_why=${sng_why:-syslog-ng with its http module and SCL (Debian syslog-ng-core, syslog-ng-mod-http, syslog-ng-scl) is not installed and could not be}
fi

# rsyslog: Debian's rsyslog conflicts with syslog-ng-core, which this and
# the other syslog tests use, so unless it is installed already its two
# packages (rsyslog, rsyslog-elasticsearch) are fetched with apt-get download
# and unpacked (dpkg-deb -x) once per machine into a folder outside the tree,
# not installed; their libraries are installed as usual (no conflict).
rs_dir=${LB_DEB_CACHE_DIR:-${TMPDIR:-/tmp}/logbucket-deb-rsyslog}
rs_find() {
    RSYSLOGD=
    RS_MODDIR=
    # (not $root: lib.sh's temporary folder, removed at exit)
    for rs_top in / "$rs_dir/root/"; do
        m=$(ls "$rs_top"usr/lib/*/rsyslog/omelasticsearch.so "$rs_top"usr/lib/rsyslog/omelasticsearch.so 2>/dev/null | head -n 1)
        if test -x "${rs_top}usr/sbin/rsyslogd" && test -n "$m" &&
            ! ldd "${rs_top}usr/sbin/rsyslogd" "$m" 2>/dev/null | grep -q 'not found'; then
            RSYSLOGD=${rs_top}usr/sbin/rsyslogd
            RS_MODDIR=$(dirname "$m")
            return 0
        fi
    done
    return 1
}
if ! rs_find && command -v apt-get >/dev/null; then
    apt_install libestr0 libfastjson4 liblognorm5 libcurl4 || true
    mkdir -p "$rs_dir/debs" &&
    (cd "$rs_dir/debs" && { apt_get download rsyslog rsyslog-elasticsearch ||
        { test "$(id -u)" = 0 && apt_get update -q && apt_get download rsyslog rsyslog-elasticsearch; }; }) &&
    for d in "$rs_dir"/debs/rsyslog*.deb; do
        dpkg-deb -x "$d" "$rs_dir/root" || break
    done
    mv "$rs_dir/debs/apt.log" . 2>/dev/null
    rs_find || true
fi
if test -n "$RSYSLOGD"; then
    test_set_prereq RSYSLOG
else
    rs_why='rsyslog and rsyslog-elasticsearch (Debian) are not installed and could not be fetched'
fi
test -n "$rs_why" && echo "# skipping rsyslog: $rs_why"
test -n "$sng_why" && echo "# skipping syslog-ng: $sng_why"

# The shippers' files: rsyslog refuses a path with a space (the trash
# directory has one).
W=$root/shippers
mkdir -p "$W"

RS_PID=
SNG_PID=
# stop_pid PID: lb_stop_pid, whatever the process's exit status
stop_pid() {
    lb_stop_pid "$1" 2>/dev/null
    return 0
}
trap 'stop_pid "$RS_PID"; stop_pid "$SNG_PID"; lb_cleanup' EXIT

# lines NAME: N known lines, with a quote, a percent sign and UTF-8
lines() {
    i=1
    while test $i -le $N; do
        printf '%s line %04d of %d: disk "sda" at 91%% on caf\303\251\n' "$1" $i $N
        i=$((i + 1))
    done
}

# wait_count DB EVENT: until the count of EVENT's rows is N (30 s at most)
wait_count() {
    sl_wait_count "SELECT COUNT(*) FROM $1 WHERE ts >= 0 AND event = $(q "$2")" "$N" 300
}

# check_rows DB EVENT WANT_PREFIX WANT_SUFFIX NAME [SED]: every row of
# EVENT (edited by the sed script SED) is PREFIX"msg":"NAME line I of N: .."
# SUFFIX once, for I = 1..N, its ts (ns) within the run
check_rows() {
    sl_ts_within "SELECT * FROM $1 WHERE ts >= 0 AND event = $(q "$2")" "$T0" "$(($(date +%s) + 1))" &&
    sl_rows "SELECT * FROM $1 WHERE ts >= 0 AND event = $(q "$2")" >rows &&
    sed "${6:-p;d}" rows | sort >got &&
    lines "$5" | sort | while IFS= read -r l; do
        printf '{"ts":TS,%s"msg":"%s"%s}\n' "$3" "$(printf '%s' "$l" | sed 's/"/\\"/g')" "$4"
    done >want &&
    test_cmp want got
}

# rs_start: rsyslogd in the foreground, its stderr in rs.log
rs_start() {
    "$RSYSLOGD" -n -f "$W/rsyslog.conf" -i "$W/rsyslog.pid" -M "$RS_MODDIR" >rs.log 2>&1 </dev/null &
    RS_PID=$!
}

# sng_start: syslog-ng in the foreground, its stderr in sng.log
sng_start() {
    syslog-ng -F -e --no-caps -f "$W/syslog-ng.conf" -R "$W/syslog-ng.persist" \
        -p "$W/syslog-ng.pid" -c "$W/syslog-ng.ctl" >sng.log 2>&1 </dev/null &
    SNG_PID=$!
}

test_expect_success 'start the daemon with both syslog listeners' '
    T0=$(date +%s) &&
    sl_start &&
    diag "TZ=$TZ, host $H, daemon $LB_URL, syslog tcp $SL_TCP"
'

test_expect_success RSYSLOG 'rsyslog: imfile -> omfwd (octet-counted RFC 5424, traditional) and omelasticsearch' '
    mkdir -p "$W/rs.work" &&
    lines rs5424 >"$W/rs5424.log" && lines rsbsd >"$W/rsbsd.log" && lines rses >"$W/rses.log" &&
    cat >"$W/rsyslog.conf" <<-EOF &&
	global(workDirectory="$W/rs.work")
	module(load="imfile" mode="polling" pollingInterval="1")
	module(load="omelasticsearch")
	template(name="es_doc" type="list" option.jsonf="on") {
	    property(outname="@timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
	    property(outname="host" name="hostname" format="jsonf")
	    property(outname="severity" name="syslogseverity-text" format="jsonf")
	    property(outname="facility" name="syslogfacility-text" format="jsonf")
	    property(outname="syslogtag" name="syslogtag" format="jsonf")
	    property(outname="message" name="msg" format="jsonf")
	}
	template(name="es_index" type="string" string="rsyslog-%\$YEAR%.%\$MONTH%.%\$DAY%")
	ruleset(name="to5424") {
	    action(type="omfwd" target="127.0.0.1" port="$SL_TCP" protocol="tcp"
	           TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
	}
	ruleset(name="tobsd") {
	    action(type="omfwd" target="127.0.0.1" port="$SL_TCP" protocol="tcp"
	           template="RSYSLOG_TraditionalForwardFormat")
	}
	ruleset(name="toes") {
	    action(type="omelasticsearch" server="127.0.0.1" serverport="$LB_PORT"
	           template="es_doc" searchIndex="es_index" dynSearchIndex="on"
	           bulkmode="on" errorFile="$W/rs-es-errors.json")
	}
	input(type="imfile" File="$W/rs5424.log" Tag="rs5424:" Facility="local3"
	      Severity="warning" ruleset="to5424" freshStartTail="off")
	input(type="imfile" File="$W/rsbsd.log" Tag="rsbsd:" Facility="local3"
	      Severity="warning" ruleset="tobsd" freshStartTail="off")
	input(type="imfile" File="$W/rses.log" Tag="rses:" Facility="local3"
	      Severity="warning" ruleset="toes" freshStartTail="off")
	EOF
    "$RSYSLOGD" -N1 -f "$W/rsyslog.conf" -M "$RS_MODDIR" >rs.check 2>&1 ||
        { cat rs.check >&2; false; } &&
    rs_start &&
    diag "$("$RSYSLOGD" -v | head -n 1 | sed "s/ *compiled with.*//") ($RSYSLOGD)" &&
    wait_count syslog rs5424 && wait_count syslog rsbsd &&
    index=$(date +rsyslog-%Y.%m.%d) &&
    wait_count logs "$index"
'

test_expect_success RSYSLOG 'rsyslog: every line once, host, event, ts and msg mapped' '
    check_rows syslog rs5424 "\"host\":\"$H\",\"event\":\"rs5424\",\"tags\":{\"facility\":\"local3\",\"level\":\"warning\"},\"fields\":{" "}" rs5424 &&
    check_rows syslog rsbsd "\"host\":\"$H\",\"event\":\"rsbsd\",\"tags\":{\"facility\":\"local3\",\"level\":\"warning\"},\"fields\":{" "}" rsbsd &&
    check_rows logs "$(date +rsyslog-%Y.%m.%d)" "\"host\":\"$H\",\"event\":\"$(date +rsyslog-%Y.%m.%d)\",\"tags\":{},\"fields\":{\"severity\":\"warning\",\"facility\":\"local3\",\"syslogtag\":\"rses:\"," "}" rses
'

test_expect_success RSYSLOG 'rsyslog: stops cleanly and logged no error' '
    stop_pid "$RS_PID" && RS_PID= &&
    ! test -s "$W/rs-es-errors.json" &&
    if grep -i -E "error|fail|suspend" rs.log >&2; then false; fi
'

test_expect_success SYSLOG_NG 'syslog-ng: file -> syslog() (RFC 5424 octet-counted), network() (BSD) and elasticsearch-http()' '
    lines sng5424 >"$W/sng5424.log" && lines sngbsd >"$W/sngbsd.log" && lines snges >"$W/snges.log" &&
    sng_version=$(syslog-ng --version | sed -n "s/^Config version: *//p") &&
    cat >"$W/syslog-ng.conf" <<-EOF &&
	@version: ${sng_version:-3.35}
	@include "scl.conf"
	options { stats-freq(0); use-dns(no); dns-cache(no); };
	source s_5424 { file("$W/sng5424.log" follow-freq(1) flags(no-parse)
	    program-override("sng5424") default-facility(local4) default-priority(notice)); };
	source s_bsd { file("$W/sngbsd.log" follow-freq(1) flags(no-parse)
	    program-override("sngbsd") default-facility(local4) default-priority(notice)); };
	source s_es { file("$W/snges.log" follow-freq(1) flags(no-parse)
	    program-override("snges") default-facility(local4) default-priority(notice)); };
	destination d_5424 { syslog("127.0.0.1" transport("tcp") port($SL_TCP) persist-name("lb_5424")); };
	destination d_bsd { network("127.0.0.1" transport("tcp") port($SL_TCP) persist-name("lb_bsd")); };
	destination d_es { elasticsearch-http(url("$LB_URL/_bulk")
	    index("syslog-ng-\${YEAR}.\${MONTH}.\${DAY}") type("") batch-lines(50) workers(2)); };
	log { source(s_5424); destination(d_5424); flags(flow-control); };
	log { source(s_bsd); destination(d_bsd); flags(flow-control); };
	log { source(s_es); destination(d_es); flags(flow-control); };
	EOF
    syslog-ng --syntax-only -f "$W/syslog-ng.conf" >sng.syntax 2>&1 ||
        { cat sng.syntax >&2; false; } &&
    sng_start &&
    diag "syslog-ng $(syslog-ng --version | sed -n "1s/^syslog-ng [0-9]* //p")" &&
    wait_count syslog sng5424 && wait_count syslog sngbsd &&
    wait_count logs "$(date +syslog-ng-%Y.%m.%d)"
'

test_expect_success SYSLOG_NG 'syslog-ng: every line once, host, event, ts and msg mapped' '
    check_rows syslog sng5424 "\"host\":\"$H\",\"event\":\"sng5424\",\"tags\":{\"facility\":\"local4\",\"level\":\"notice\"},\"fields\":{" "}" sng5424 \
        "s/,\"meta.sequenceId\":\"[0-9]*\"//" &&
    sed -n "s/.*\"meta.sequenceId\":\"\([0-9]*\)\".*line 0*\([0-9]*\) of.*/\1 \2/p" rows >seq &&
    test "$(wc -l <seq)" = $N &&
    awk "\$1 != \$2 { bad++ } END { exit bad ? 1 : 0 }" seq &&
    check_rows syslog sngbsd "\"host\":\"$H\",\"event\":\"sngbsd\",\"tags\":{\"facility\":\"local4\",\"level\":\"notice\"},\"fields\":{" "}" sngbsd &&
    index=$(date +syslog-ng-%Y.%m.%d) &&
    sl_rows "SELECT * FROM logs WHERE ts >= 0 AND event = $(q "$index") LIMIT 1" >one &&
    diag "syslog-ng elasticsearch-http() row: $(cat one)" &&
    check_rows logs "$index" "\"host\":\"$H\",\"event\":\"$index\",\"tags\":{},\"fields\":{\"PROGRAM\":\"snges\",\"PRIORITY\":\"notice\"," ",\"ISODATE\":\"D\",\"FACILITY\":\"local4\"}" snges \
        "s/\"ISODATE\":\"$(date +%Y-%m-%d)T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]+05:30\"/\"ISODATE\":\"D\"/"
'

test_expect_success SYSLOG_NG 'syslog-ng: delivered all, dropped none, logged no error' '
    syslog-ng-ctl stats -c "$W/syslog-ng.ctl" >stats &&
    awk -F";" "\$5 == \"dropped\" && \$6 != 0" stats >dropped &&
    ! test -s dropped &&
    stop_pid "$SNG_PID" && SNG_PID= &&
    grep -q "syslog-ng shutting down" sng.log &&
    if grep -i -E "error|fail" sng.log >&2; then false; fi
'

test_expect_success 'nothing was refused' '
    for r in unparsed oversize truncated bad_frame bad_message store_error connection_limit; do
        v=$(sl_metric "logbucket_syslog_rejects_total{transport=\"tcp\",reason=\"$r\"}")
        test "$v" = 0 || { echo "tcp $r: $v" >&2; return 1; }
    done
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
