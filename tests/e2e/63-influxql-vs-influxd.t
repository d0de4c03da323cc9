#!/bin/sh
test_description='InfluxQL: random statements of what dashboards and people ask answer as InfluxDB 1.x answers them, on the same points'
# the differences go to the test's stderr (fd 7), which prove shows
exec 7>&2
. "$(dirname "$0")/lib.sh"
. "$LB_TOP/tests/e2e/influxd.sh"

# The same points go to Debian's influxd (1.6.7) and to logbucket; each
# statement goes to both and the replies must be the same
# (63-influxql-vs-influxd.py; the cases where InfluxDB's answer depends on
# its own quirks, listed in README.md, are not generated). Two seeds:
# one fixed, one new every run (printed, to rerun). The points are of
# 2023: their windows settle a second after the write, so the statements
# read host sections as well as rows.

ifx_peer_start

test_expect_success BOTH 'start logbucket (settle_after=1s)' '
    lb_start --set settle_after=1s
'

seed=$(od -An -N2 -tu2 /dev/urandom | tr -d " ")
for s in 1 "$seed"; do
    test_expect_success BOTH "300 statements of seed $s: the same replies" "
        '$PY' '$LB_TOP/tests/e2e/63-influxql-vs-influxd.py' '$LB_URL' '$IFX_URL' $s 300 >out 2>&1 ||
        { cat out >&7; false; } &&
        grep -q \"^300 statements, 0 differences\" out
    "
done

test_expect_success BOTH 'stop logbucket and InfluxDB' '
    lb_stop 10 && ifx_stop
'

test_done
