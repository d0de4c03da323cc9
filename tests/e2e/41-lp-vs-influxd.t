#!/bin/sh
test_description='line protocol: random lines of escapes, quotes and values of every kind are accepted, refused and read back as InfluxDB 1.x does'
# the differences go to the test's stderr (fd 7), which prove shows
exec 7>&2
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/influxd.sh"

# Each line goes to Debian's influxd (1.6.7) and to logbucket, alone, in a
# database of its own; both must accept or refuse it alike and read back
# the same measurement, tags and fields (41-lp-vs-influxd.py; the classes
# where logbucket differs on purpose, listed in ingest/README.md, are not
# generated). Two seeds: one fixed, one new every run (printed, to rerun).

ifx_peer_start

test_expect_success BOTH 'start logbucket' '
    lb_start
'

seed=$(od -An -N2 -tu2 /dev/urandom | tr -d " ")
for s in 1 "$seed"; do
    test_expect_success BOTH "300 lines of seed $s: accepted, refused and read back alike" "
        '$PY' '$LB_TOP/tests/e2e/41-lp-vs-influxd.py' '$LB_URL' '$IFX_URL' $s 300 >out 2>&1 ||
        { cat out >&7; false; } &&
        grep -q \"^300 lines, 0 differences\" out
    "
done

test_expect_success BOTH 'stop logbucket and InfluxDB' '
    lb_stop 10 && ifx_stop
'

test_done
