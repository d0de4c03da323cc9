#!/usr/bin/env bash
# real_logs.sh: disk bytes per event of one logbucketd build on real log
# text. The lines of FILE... (e.g. this machine's /var/log/dpkg.log and
# /var/log/apt/term.log) become JSON lines, one event each (host
# this-machine, event apt, the line as msg; control characters as spaces),
# stamped evenly over the 24 hours before now so that all but the newest
# two hour windows are cold (their final form: columnar zstd blocks). The
# daemon starts on 127.0.0.1:PORT with a temporary data folder, gets them in
# one request, and after WAIT seconds (the settle, default 100) the script
# prints the raw text's bytes per line, the stored bytes per event by window
# age (/metrics), the SSTables' bytes and count, and du -sb of the folder.
#
#   benchmarks/real_logs.sh DAEMON PORT FILE... [--wait S]
#   e.g. benchmarks/real_logs.sh ./logbucketd 18790 /var/log/dpkg.log /var/log/apt/term.log
set -euo pipefail
daemon=$1 port=$2
shift 2
wait_s=100 files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --wait) wait_s=$2; shift 2 ;;
        *) files+=("$1"); shift ;;
    esac
done
dir=$(mktemp -d /tmp/lb-real-logs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
lines=$(cat "${files[@]}" | wc -l)
bytes=$(cat "${files[@]}" | wc -c)
cat "${files[@]}" | awk -v now="$(date +%s%N)" -v n="$lines" '
    BEGIN { span = 86400 * 1000000000 }
    { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/[\001-\037]/, " ")
      printf "{\"ts\":%.0f,\"host\":\"this-machine\",\"event\":\"apt\",\"msg\":\"%s\"}\n",
             now - span + int(NR * (span / n)), $0 }' >"$dir/real.jsonl"
"$daemon" --listen "127.0.0.1:$port" --data-dir "$dir/data" --set wal_sync=always \
    >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/ping")" = 204 ] && break
    sleep 0.2
done
code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST \
    "http://127.0.0.1:$port/api/v1/ingest?db=real&format=jsonl" --data-binary @"$dir/real.jsonl")
echo "raw text: $lines lines, $bytes bytes, $(awk -v b="$bytes" -v n="$lines" 'BEGIN { printf "%.1f", b / n }') bytes a line; ingest answered $code"
sleep "$wait_s"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^logbucket_stored_(events|bytes_per_event)\{db="real"'
sst=$(find "$dir/data/real" -name '*.sst' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
echo "SSTables: $(find "$dir/data/real" -name '*.sst' | wc -l) files, $sst bytes, $(awk -v b="$sst" -v n="$lines" 'BEGIN { printf "%.1f", b / n }') bytes an event; du -sb of the folder: $(du -sb "$dir/data" | cut -f1)"
