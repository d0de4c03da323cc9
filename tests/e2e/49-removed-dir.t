#!/bin/sh
# The data directory removed while the daemon runs (rm -rf by mistake, a
# volume unmounted under it): the write-ahead log the daemon appends to is
# then a file nobody can read again, so a 204 would be a lie. Within about
# a second each database notices, turns read-only and writes get 500;
# the daemon keeps answering and stops cleanly, and a restart starts on
# what is there.

test_description='a data directory removed under the daemon'
. "$(dirname "$0")/lib.sh"

test_expect_success 'start with a database' '
    lb_start &&
    test "$(lb_req POST "/write?db=x" --data-binary "m,host=a v=1 1")" = 204
'

test_expect_success 'the data directory removed: writes get 500 within seconds' '
    rm -rf "$LB_DATA" &&
    n=0 &&
    while [ "$(lb_req POST "/write?db=x" --data-binary "m,host=a v=2 2")" = 204 ] && [ $n -lt 50 ]; do
        sleep 0.1; n=$((n + 1))
    done &&
    echo "# refused after $n polls of 0.1 s" &&
    test $n -lt 50 &&
    test "$(lb_req POST "/write?db=x" --data-binary "m,host=a v=3 3")" = 500 &&
    grep -q "nothing of this request was stored" body &&
    grep -q "write-ahead log under .* is gone" "$LB_LOG.new"
'

test_expect_success 'the daemon still answers' '
    test "$(lb_req GET /health)" = 200
'

test_expect_success 'it stops cleanly' '
    lb_stop
'

test_expect_success 'a restart starts on what is there' '
    lb_start &&
    test "$(lb_req POST "/write?db=x" --data-binary "m,host=a v=4 4")" = 204 &&
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT COUNT(*) FROM x WHERE host = '"'a'"'")" = 200 &&
    test "$(cat body)" = "{\"count\":1}" &&
    lb_stop
'

test_done
