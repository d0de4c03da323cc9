#!/bin/sh
test_description='the statements Grafana sends to an InfluxDB (InfluxQL) data source, replayed against logbucket and InfluxDB 1.6.7 on the same data, the replies compared value for value'
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/influxd.sh"

if ! ifx_available; then
    skip_all='InfluxDB 1.x (Debian influxdb, /usr/bin/influxd) is not installed and could not be'
    test_done
fi
if ! ifx_start 2>"$SHARNESS_TRASH_DIRECTORY/influxd.err"; then
    skip_all="influxd did not start: $(tail -n 1 "$SHARNESS_TRASH_DIRECTORY/influxd.err")"
    test_done
fi
PY=/usr/bin/python3
command -v "$PY" >/dev/null || PY=python3

# The data: cpu (tags host, region; float fields value, usage_idle) every
# 10 s and mem (tag host; float value, integer counter used) every 30 s,
# from 200 s before the dashboard's hour to 200 s after it, with a gap of
# six minutes in web-2's cpu (so fill() has empty buckets to fill).
# Values are quarters, so sums are exact in binary.
gen_data() {
    perl -e '
        my @hosts = (["web-1", "eu"], ["web-2", "us"], ["db-1", "eu"]);
        for my $i (0 .. 400) {
            my $t = 1699999800 + 10 * $i;
            for my $h (0 .. 2) {
                my ($host, $region) = @{$hosts[$h]};
                next if $host eq "web-2" && $i >= 100 && $i < 136;
                my $v = (($i * 37 + $h * 11) % 101) / 4;
                my $idle = 100 - (($i * 13 + $h * 7) % 61) / 4;
                print "cpu,host=$host,region=$region value=$v,usage_idle=$idle $t\n";
                next if $i % 3;
                my $used = 1000 * $h + 7 * $i + ($i % 5) * 3;
                my $mv = (($i * 29 + $h * 5) % 83) / 4;
                print "mem,host=$host value=$mv,used=${used}i $t\n";
            }
        }'
}

TF='time >= 1700000000000ms and time <= 1700003600000ms'

test_expect_success 'start logbucket (InfluxDB 1.x is running)' '
    lb_start
'

test_expect_success 'the same line protocol is written to both' '
    gen_data >data.lp &&
    test $(wc -l <data.lp) = 1557 &&
    for url in "$IFX_URL" "$LB_URL"; do
        code=$(curl -s -o /dev/null -w "%{http_code}" -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE d") &&
        test "$code" = 200 &&
        code=$(curl -s -o write.out -w "%{http_code}" -XPOST "$url/write?db=d&precision=s" --data-binary @data.lp) &&
        { test "$code" = 204 || { cat write.out; false; }; } || return 1
    done
'

# replay N MODE STATEMENT: the request Grafana's backend makes
# (pkg/tsdb/influxdb/influxql, createRequest) to both, the replies compared.
# MODE GET: GET /query?db=d&epoch=ms&q=...; POST (the data source's HTTP
# method set to POST): q in an application/x-www-form-urlencoded body, db
# and epoch in the URL; RP: GET with rp=autogen, as Grafana adds for a
# retention policy other than "default".
send() {  # URL OUT MODE STATEMENT: prints the HTTP status, the body to OUT
    case "$3" in
        POST) curl -s -o "$2" -w "%{http_code}" --max-time 60 -XPOST "$1/query?db=d&epoch=ms" \
            --data-urlencode "q=$4" ;;
        RP) curl -s -o "$2" -w "%{http_code}" --max-time 60 -G "$1/query" --data-urlencode "db=d" \
            --data-urlencode "rp=autogen" --data-urlencode "epoch=ms" --data-urlencode "q=$4" ;;
        *) curl -s -o "$2" -w "%{http_code}" --max-time 60 -G "$1/query" --data-urlencode "db=d" \
            --data-urlencode "epoch=ms" --data-urlencode "q=$4" ;;
    esac
}

replay() {  # N MODE STATEMENT
    send "$IFX_URL" "ifx.$1.json" "$2" "$3" >"ifx.$1.status" &&
    send "$LB_URL" "lb.$1.json" "$2" "$3" >"lb.$1.status" &&
    "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" "$(cat ifx.$1.status)" "ifx.$1.json" \
        "$(cat lb.$1.status)" "lb.$1.json" >"diff.$1" || {
        cat "diff.$1"
        false
    }
}

# A line "[POST] statement" or "[RP] statement" is sent that way, any other GET.
# "[KNOWN] statement": a difference from InfluxDB listed in the README's
# InfluxQL table; replayed as a known breakage (sharness reports it "fixed"
# the day the replies agree).
n=0
while IFS= read -r line <&9; do
    case "$line" in '' | '#'*) continue ;; esac
    n=$((n + 1))
    mode=GET
    expect=test_expect_success
    case "$line" in '[KNOWN] '*) expect=test_expect_failure line=${line#'[KNOWN] '} ;; esac
    case "$line" in
        '[POST] '*) mode=POST line=${line#'[POST] '} ;;
        '[RP] '*) mode=RP line=${line#'[RP] '} ;;
    esac
    stmt=$(printf '%s' "$line" | sed "s/\\\$TF/$TF/g")
    $expect "grafana $n ($mode): $line" "replay $n $mode '$(printf '%s' "$stmt" | sed "s/'/'\\\\''/g")'"
done 9<"$LB_TOP/tests/e2e/63-grafana-statements.txt"

test_expect_success 'the replay covered every statement and InfluxDB answered them with data' '
    test $n -ge 66 &&
    grep -l "\"values\"" ifx.*.json >with-data &&
    test $(wc -l <with-data) -ge 50
'

# The comparison is not blind: InfluxDB's own reply passes against itself
# and fails with one value, one tag or one series changed.
test_expect_success 'iqlcmp tells a changed value, tag or series from the same reply' '
    f=$(grep -l "\"tags\":{\"host\":\"web-1\"}" ifx.*.json | head -1) &&
    "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 "$f" 200 "$f" &&
    sed "s/,\([0-9][0-9]*\.[0-9]*\)\]/,1\1]/" "$f" >changed-value.json &&
    ! cmp -s "$f" changed-value.json &&
    test_must_fail "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 "$f" 200 changed-value.json &&
    sed "s/\"web-1\"/\"web-9\"/" "$f" >changed-tag.json &&
    test_must_fail "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 "$f" 200 changed-tag.json &&
    "$PY" -c "import json, sys; r = json.load(open(sys.argv[1])); r[\"results\"][0][\"series\"].pop(); json.dump(r, sys.stdout)" "$f" >fewer.json &&
    test_must_fail "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 "$f" 200 fewer.json &&
    test_must_fail "$PY" "$LB_TOP/tests/e2e/iqlcmp.py" 200 "$f" 400 "$f"
'

test_expect_success 'stop both' '
    ifx_stop &&
    lb_stop 10
'

test_done
