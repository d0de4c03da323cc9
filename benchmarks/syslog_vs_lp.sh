#!/bin/sh
# Syslog over TCP against the line-protocol path, in the same run, on the
# same events: for each of line protocol (ingest_bench over HTTP), syslog
# with newline framing and syslog with octet counting (syslog_bench, every
# host's messages over every connection), and newline framing with each
# connection carrying its own hosts' messages (--senders, as connections
# from syslog senders do; mode "syslog-s" in the table), a
# fresh build/logbucketd on kernel-chosen loopback ports with its own empty
# temporary data dir (so no run inherits another's memtables, flushes or
# compactions), --server-pid for its CPU, stopped by its PID after.
#
#   benchmarks/syslog_vs_lp.sh [EVENTS] [CONNS]     (default 500000 4)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
events=${1:-500000}
conns=${2:-4}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lb-syslog-bench.XXXXXX")
. "$top/benchmarks/daemon.sh"
trap 'stop_daemon; rm -rf "$dir"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $events events, $conns connections, a fresh daemon each"
start_daemon
"$top/build/bench/ingest_bench" --port "$http" --db lpbench --events "$events" --batch 5000 \
    --conns "$conns" --server-pid "$pid"
stop_daemon
start_daemon
"$top/build/bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
    --conns "$conns" --server-pid "$pid"
stop_daemon
start_daemon
"$top/build/bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
    --conns "$conns" --server-pid "$pid" --octet
stop_daemon
start_daemon
"$top/build/bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
    --conns "$conns" --server-pid "$pid" --senders
stop_daemon
