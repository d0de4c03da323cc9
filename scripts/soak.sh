#!/bin/sh
# soak.sh [SECONDS] [CONNS]: a bounded soak of the daemon (make soak):
# CONNS client loops (default 64) of mixed writes (line protocol, JSON
# lines, raw lines) and queries (newest rows of a host, a count over the
# last minute, a word search, SHOW) against a fresh daemon on a free
# loopback port below 32768, for SECONDS (default 600). The daemon runs with
# a 16 MiB memtable budget and block cache, so that warm-up (memtables and
# cache filling) ends early. Every 10 s it prints the daemon's RSS, open
# file descriptors (files, not the client sockets, which come and go), the
# SSTables and WAL segments on disk (each holds a descriptor open, and
# their number grows with the data), sockets and requests served; at the
# end it checks that RSS after warm-up (the first third) grew by at most
# 25%, that the descriptors beyond the tables on disk grew by at most 16,
# and that no request got a 5xx.
set -eu
SECS=${1:-600}
CONNS=${2:-64}
TOP=$(cd "$(dirname "$0")/.." && pwd)
DAEMON=${LOGBUCKETD:-$TOP/logbucketd}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lb-soak.XXXXXX")
PORT=$(( 20000 + $$ % 10000 ))
"$DAEMON" --listen 127.0.0.1:$PORT --data-dir "$WORK/data" --set memtable_bytes=16MiB \
    --set block_cache_bytes=16MiB 2>"$WORK/daemon.log" &
PID=$!
cleanup() {
    kill $(cat "$WORK"/loop.* 2>/dev/null) 2>/dev/null || true
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
URL=http://127.0.0.1:$PORT
i=0
until curl -s -o /dev/null "$URL/ping"; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "soak: the daemon did not start" >&2; cat "$WORK/daemon.log" >&2; exit 1; }
    sleep 0.1
done
END=$(( $(date +%s) + SECS ))

loop() { # loop N: requests until END; status codes to codes.N
    n=$1
    k=0
    while [ "$(date +%s)" -lt $END ]; do
        k=$((k + 1))
        now=$(date +%s)
        case $((k % 6)) in
        0) awk -v n=$n -v k=$k -v t=$now 'BEGIN { for (i = 0; i < 200; i++)
               printf "cpu,host=h%d,core=c%d usage=%d.5,n=%di %d%09d\n", n % 50, i % 8, i, k, t, i }' |
           curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary @- "$URL/write?db=soak" ;;
        1) awk -v n=$n -v k=$k 'BEGIN { for (i = 0; i < 100; i++)
               printf "{\"host\":\"h%d\",\"event\":\"app\",\"msg\":\"request %d of loop %d took %d ms\",\"level\":\"%s\"}\n",
                   n % 50, k, n, i, (i % 10 ? "info" : "error") }' |
           curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary @- "$URL/api/v1/ingest?db=logs&format=jsonl" ;;
        2) seq 1 50 | sed "s/^/raw line of loop $n: /" |
           curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary @- "$URL/api/v1/ingest?db=raw&host=h$n&event=raw" ;;
        3) curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 "$URL/api/v1/query?db=soak&host=h$((n % 50))&limit=100" ;;
        4) curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary \
               "SELECT host, COUNT(*) FROM logs WHERE ts >= now() - 1m AND MATCH('error') GROUP BY host ORDER BY 2 DESC LIMIT 5" "$URL/api/v1/sql" ;;
        5) curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --data-binary "SHOW DATABASES" "$URL/api/v1/sql" ;;
        esac
    done >"$WORK/codes.$n"
}

n=0
while [ $n -lt "$CONNS" ]; do
    loop $n &
    echo $! >"$WORK/loop.$n"
    n=$((n + 1))
done

echo "soak: $CONNS loops for $SECS s against pid $PID (data in $WORK)"
printf '%6s %10s %5s %6s %7s %10s\n' secs rss_kib files tables sockets requests
start=$(date +%s)
: >"$WORK/samples"
while [ "$(date +%s)" -lt $END ]; do
    sleep 10
    t=$(( $(date +%s) - start ))
    rss=$(awk '/^VmRSS/ { print $2 }' /proc/$PID/status)
    all=$(ls /proc/$PID/fd | wc -l)
    socks=$(ls -l /proc/$PID/fd 2>/dev/null | grep -c 'socket:' || true)
    reqs=$(cat "$WORK"/codes.* 2>/dev/null | wc -l)
    tables=$(find "$WORK/data" -name '*.sst' -o -name '*.log' 2>/dev/null | wc -l)
    printf '%6d %10d %5d %6d %7d %10d\n' "$t" "$rss" $((all - socks)) "$tables" "$socks" "$reqs" |
        tee -a "$WORK/samples"
done
wait $(cat "$WORK"/loop.*) 2>/dev/null || true
total=$(cat "$WORK"/codes.* | wc -l)
bad=$(cat "$WORK"/codes.* | grep -c '^5' || true)
echo "soak: $total requests, $bad answered 5xx"
awk -v bad="$bad" '
    { t[NR] = $1; rss[NR] = $2; fds[NR] = $3; extra[NR] = $3 - $4 }
    END {
        w = int(NR / 3) + 1
        printf "soak: after warm-up (%ds) rss %d KiB, files %d (%d beyond the tables); at the end rss %d KiB, files %d (%d beyond the tables)\n",
            t[w], rss[w], fds[w], extra[w], rss[NR], fds[NR], extra[NR]
        ok = rss[NR] <= rss[w] * 1.25 && extra[NR] <= extra[w] + 16 && bad == 0
        print (ok ? "soak: PASS" : "soak: FAIL")
        exit !ok
    }' "$WORK/samples"
status=$?
[ $status -eq 0 ] && rm -rf "$WORK"
exit $status
