#!/bin/sh
# Syslog over TCP against the line-protocol path, in the same run, on the
# same events: starts build/logbucketd on kernel-chosen loopback ports with
# a temporary data dir, runs ingest_bench (line protocol over HTTP) and
# syslog_bench (RFC 5424 over TCP, newline then octet-counted framing)
# with --server-pid, prints both tables, stops the daemon by its PID.
#
#   benchmarks/syslog_vs_lp.sh [EVENTS] [CONNS]     (default 500000 4)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
events=${1:-500000}
conns=${2:-4}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lb-syslog-bench.XXXXXX")
"$top/build/logbucketd" --listen 127.0.0.1:0 --data-dir "$dir/data" \
    --set syslog_tcp_listen=127.0.0.1:0 2>"$dir/log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
n=0
while [ $n -lt 200 ] && ! grep -q "syslog: listening on tcp" "$dir/log"; do
    sleep 0.05
    n=$((n + 1))
done
http=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/log")
sl=$(sed -n 's/.*syslog: listening on tcp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/log")
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; logbucketd pid $pid, http $http, syslog tcp $sl; $events events, $conns connections"
"$top/build/bench/ingest_bench" --port "$http" --db lpbench --events "$events" --batch 5000 \
    --conns "$conns" --server-pid "$pid"
"$top/build/bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
    --conns "$conns" --server-pid "$pid"
"$top/build/bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
    --conns "$conns" --server-pid "$pid" --octet
