#!/bin/sh
test_description='kill -9 during writes: every acknowledged write is there after a restart'
. "$(dirname "$0")/../e2e/lib.sh"

# writer N: posts batches of 20 lines (host wN, ts = batch*1000 + line) until
# killed or 400 batches; appends the batch number to acked.N after each 204.
writer() {
    b=1
    while [ $b -le 400 ]; do
        awk -v w="$1" -v b=$b 'BEGIN { for (i = 0; i < 20; i++)
            printf "crash,host=w%s seq=%di,msg=\"batch %d line %d\" %d\n", w, b, b, i, b * 1000 + i }' >batch.$1
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
            --data-binary @batch.$1 "$LB_URL/write?db=crash") || return 0
        [ "$code" = 204 ] && echo $b >>acked.$1
        b=$((b + 1))
    done
}

# verify N: every acknowledged batch of writer N has its 20 rows.
verify() {
    [ -s acked.$1 ] || return 0
    curl -s --max-time 30 "$LB_URL/api/v1/query?db=crash&host=w$1&order=asc" |
        sed -n 's/.*"ts":\([0-9]*\),.*/\1/p' >have.$1
    while read -r b; do
        n=$(awk -v b=$b '$1 >= b * 1000 && $1 < b * 1000 + 20' have.$1 | wc -l)
        if [ "$n" != 20 ]; then
            echo "writer $1 batch $b acknowledged but $n of 20 rows found" >&2
            return 1
        fi
    done <acked.$1
    # No batch is ever half there.
    awk '{ print int($1 / 1000) }' have.$1 | sort -n | uniq -c | awk '$1 != 20 { bad = 1 } END { exit bad }'
}

test_expect_success 'start' '
    lb_start --set wal_sync=always
'

for round in 1 2 3 4 5 6; do
    test_expect_success "round $round: kill -9 while 3 writers write, restart, verify" '
        rm -f acked.1 acked.2 acked.3 &&
        ( writer 1 & writer 2 & writer 3 & wait ) &
        wpid=$! &&
        sleep 0.$(( (round * 37) % 9 + 1 )) &&
        lb_kill9 &&
        wait $wpid;
        lb_start --set wal_sync=always &&
        verify 1 && verify 2 && verify 3 &&
        cat acked.1 acked.2 acked.3 2>/dev/null | wc -l >>rounds.log
    '
done

test_expect_success 'at least some writes were acknowledged across the rounds' '
    total=$(awk "{ s += \$1 } END { print s + 0 }" rounds.log) &&
    echo "acknowledged batches: $total" &&
    test "$total" -gt 10
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
