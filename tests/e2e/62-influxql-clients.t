#!/bin/sh
test_description='real InfluxDB 1.x clients read back what they wrote through /query: the influx CLI, python3-influxdb and the npm influx package'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/influxd.sh"

# Every check runs against logbucket and, when Debian's influxd (1.6.7) can
# be started, first against InfluxDB itself: the expected values below are
# then shown to be InfluxDB's own answers, not ones made up to fit logbucket.

# The clients, installed when missing (apt-get as root; npm into a folder
# outside the tree, kept between runs: LB_NPM_INFLUX1_DIR).
if ! command -v influx >/dev/null && [ "$(id -u)" = 0 ]; then
    timeout 300 apt-get install -y -q influxdb-client >/dev/null 2>&1 || true
fi
command -v influx >/dev/null && test_set_prereq CLI
if ! /usr/bin/python3 -c 'import influxdb' 2>/dev/null && [ "$(id -u)" = 0 ]; then
    timeout 300 apt-get install -y -q python3-influxdb >/dev/null 2>&1 || true
fi
/usr/bin/python3 -c 'import influxdb' 2>/dev/null && test_set_prereq PY
npm_dir=${LB_NPM_INFLUX1_DIR:-${TMPDIR:-/tmp}/logbucket-npm-influx1}
if command -v npm >/dev/null && ! test -f "$npm_dir/node_modules/influx/package.json"; then
    mkdir -p "$npm_dir" &&
    (cd "$npm_dir" && timeout 120 npm install --no-audit --no-fund --silent influx >npm.log 2>&1) || true
fi
command -v node >/dev/null && test -f "$npm_dir/node_modules/influx/package.json" && test_set_prereq JS
test_have_prereq CLI || say "skipping the influx CLI: influxdb-client is not installed and could not be"
test_have_prereq PY || say "skipping python3-influxdb: not installed and could not be"
test_have_prereq JS || say "skipping the npm influx package: node, npm or the package is missing"
ifx_available && test_set_prereq INFLUXD
test_have_prereq INFLUXD || say "InfluxDB 1.x (influxd) cannot run: the expectations are checked against logbucket only"

W='time >= 1700000000000ms AND time < 1700000010000ms'

# cli_checks NAME PORT: the influx CLI writes with INSERT and reads back with
# -execute (column, -format json and csv, -precision rfc3339 and ms).
cli_checks() {
    name=$1
    port=$2
    I="influx -host 127.0.0.1 -port $port"
    test_expect_success CLI "$name: influx CLI creates a database and INSERTs three points" "
        $I -execute 'CREATE DATABASE clid' &&
        $I -database clid -precision ms -execute 'INSERT disk,host=cli-1,dev=sda used=10.5,inodes=100i,mode=\"rw\" 1700000000000
INSERT disk,host=cli-1,dev=sdb used=20.25,inodes=200i,mode=\"ro\" 1700000001000
INSERT disk,host=cli-2,dev=sda used=30,inodes=300i,mode=\"rw\" 1700000002000'
    "
    test_expect_success CLI "$name: influx CLI -execute SELECT *" "
        $I -database clid -execute \"SELECT * FROM disk WHERE $W\" >out &&
        cat >expect <<-\EOF &&
	name: disk
	time                dev host  inodes mode used
	----                --- ----  ------ ---- ----
	1700000000000000000 sda cli-1 100    rw   10.5
	1700000001000000000 sdb cli-1 200    ro   20.25
	1700000002000000000 sda cli-2 300    rw   30
	EOF
        test_cmp expect out
    "
    test_expect_success CLI "$name: influx CLI -precision rfc3339, a host's rows" "
        $I -database clid -precision rfc3339 -execute \"SELECT used FROM disk WHERE host = 'cli-1' AND $W\" >out &&
        cat >expect <<-\EOF &&
	name: disk
	time                 used
	----                 ----
	2023-11-14T22:13:20Z 10.5
	2023-11-14T22:13:21Z 20.25
	EOF
        test_cmp expect out
    "
    test_expect_success CLI "$name: influx CLI -format json, aggregates GROUP BY host (chunked)" "
        $I -database clid -format json -execute \"SELECT mean(used), max(inodes) FROM disk WHERE $W GROUP BY host\" >out &&
        cat >expect <<-\EOF &&
	{\"results\":[{\"series\":[{\"name\":\"disk\",\"tags\":{\"host\":\"cli-1\"},\"columns\":[\"time\",\"mean\",\"max\"],\"values\":[[1700000000000000000,15.375,200]]}]},{\"series\":[{\"name\":\"disk\",\"tags\":{\"host\":\"cli-2\"},\"columns\":[\"time\",\"mean\",\"max\"],\"values\":[[1700000000000000000,30,300]]}]}]}
	EOF
        test_cmp expect out
    "
    test_expect_success CLI "$name: influx CLI -format json -precision ms" "
        $I -database clid -format json -precision ms -execute \"SELECT used FROM disk WHERE $W\" >out &&
        cat >expect <<-\EOF &&
	{\"results\":[{\"series\":[{\"name\":\"disk\",\"columns\":[\"time\",\"used\"],\"values\":[[1700000000000,10.5],[1700000001000,20.25],[1700000002000,30]]}]}]}
	EOF
        test_cmp expect out
    "
    test_expect_success CLI "$name: influx CLI SHOW MEASUREMENTS, TAG KEYS, TAG VALUES, FIELD KEYS, SERIES" "
        for q in 'SHOW MEASUREMENTS' 'SHOW TAG KEYS' 'SHOW TAG VALUES WITH KEY = dev' \
                 'SHOW FIELD KEYS' 'SHOW SERIES'; do
            $I -database clid -execute \"\$q\" || return 1
        done >out &&
        cat >expect <<-\EOF &&
	name: measurements
	name
	----
	disk
	name: disk
	tagKey
	------
	dev
	host
	name: disk
	key value
	--- -----
	dev sda
	dev sdb
	name: disk
	fieldKey fieldType
	-------- ---------
	inodes   integer
	mode     string
	used     float
	key
	---
	disk,dev=sda,host=cli-1
	disk,dev=sda,host=cli-2
	disk,dev=sdb,host=cli-1
	EOF
        test_cmp expect out
    "
    # shardGroupDuration is InfluxDB's own notion: only its column is asked for.
    test_expect_success CLI "$name: influx CLI SHOW RETENTION POLICIES (csv)" "
        $I -database clid -format csv -execute 'SHOW RETENTION POLICIES' >out &&
        perl -F, -lane 'if (\$. == 1) { %c = map { \$F[\$_] => \$_ } 0 .. \$#F; next }
            exists \$c{shardGroupDuration} or die qq(no shardGroupDuration column\n);
            print join q( ), map { \$F[\$c{\$_}] } qw(name duration replicaN default)' out >got &&
        echo 'autogen 0s 1 true' >expect &&
        test_cmp expect got
    "
    test_expect_success CLI "$name: influx CLI -format csv" "
        $I -database clid -format csv -execute \"SELECT used FROM disk WHERE $W\" >out &&
        cat >expect <<-\EOF &&
	name,time,used
	disk,1700000000000000000,10.5
	disk,1700000001000000000,20.25
	disk,1700000002000000000,30
	EOF
        test_cmp expect out
    "
}

client_checks() {  # NAME PORT
    cli_checks "$1" "$2"
    test_expect_success PY "$1: python3-influxdb writes and reads back" "
        /usr/bin/python3 '$LB_TOP/tests/e2e/62-influxql-clients.py' $2 pyd >out 2>&1 ||
        { cat out; false; }
    "
    test_expect_success JS "$1: npm influx writes and reads back" "
        NODE_PATH='$npm_dir/node_modules' node '$LB_TOP/tests/e2e/62-influxql-clients.js' $2 jsd >out 2>&1 ||
        { cat out; false; }
    "
}

if test_have_prereq INFLUXD && ! ifx_start 2>"$SHARNESS_TRASH_DIRECTORY/influxd.err"; then
    say "influxd did not start ($(tail -n 1 "$SHARNESS_TRASH_DIRECTORY/influxd.err")): the expectations are checked against logbucket only"
elif test_have_prereq INFLUXD; then
    client_checks influxdb "$IFX_PORT"
    test_expect_success INFLUXD 'stop InfluxDB' 'ifx_stop'
fi

test_expect_success 'start logbucket' '
    lb_start
'
client_checks logbucket "$LB_PORT"

test_expect_success 'stop logbucket' '
    lb_stop 10
'

test_done
