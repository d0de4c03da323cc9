#!/usr/bin/env bash
# Every log path against line protocol, in rounds: each run on a fresh
# build/logbucketd (empty temporary data dir, settle_after = 1h, a syslog
# TCP listener, kernel-chosen loopback ports), stopped by its PID after.
# A round runs line protocol (ingest_bench), Elasticsearch bulk
# (ingest_bench --es), syslog over TCP (syslog_bench, every host on every
# connection), and Loki JSON, Loki protobuf, OTLP/JSON and OTLP protobuf
# (push_bench --only PATH --alone: that path only, as the others); the
# order turns by one each round. Every tool sends the same
# events (ingest_bench's generator). Prints each run, then per path the
# median, lowest and highest share of line protocol's rate in the same
# round, and the median daemon CPU per event once settled.
#
#   benchmarks/log_paths.sh [ROUNDS] [EVENTS] [CONNS]    (default 5 1000000 4)
#
# The machine is shared: the share moves by 20-30 points from round to
# round on 2 busy cores; read the medians, and the CPU figures.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
events=${2:-1000000}
conns=${3:-4}
bench=$top/build/bench
dir=$(mktemp -d "${TMPDIR:-/tmp}/lb-log-paths.XXXXXX")
. "$top/benchmarks/daemon.sh"
trap 'stop_daemon; rm -rf "$dir"' EXIT

# run PATH: one burst of PATH on a fresh daemon; prints "rate cpu_us"
# (cpu: the daemon's CPU per event once settled)
run() {
    local path=$1 out rate cpu
    start_daemon --set settle_after=1h
    case $path in
    lineproto | es)
        out=$("$bench/ingest_bench" --port "$http" --db bench --events "$events" --batch 5000 \
            --conns "$conns" --server-pid "$pid" $([ "$path" = es ] && echo --es))
        rate=$(awk '$1 == "lp" || $1 == "es" { print $5; exit }' <<<"$out")
        cpu=$(sed -n 's/^settled.*total \([0-9.]*\).*/\1/p' <<<"$out")
        ;;
    syslog)
        out=$("$bench/syslog_bench" --port "$sl" --http-port "$http" --events "$events" \
            --conns "$conns" --server-pid "$pid")
        rate=$(awk '$1 == "syslog" { print $7; exit }' <<<"$out")
        cpu=$(sed -n 's/^settled.*per event \([0-9.]*\) us.*/\1/p' <<<"$out")
        ;;
    *)
        out=$("$bench/push_bench" --port "$http" --events "$events" --batch 5000 --conns "$conns" \
            --rounds 1 --only "$path" --alone --server-pid "$pid")
        rate=$(awk -v p="$path" '$1 == p { print $2; exit }' <<<"$out")
        cpu=$(awk -v p="$path" '$1 == p { print $(NF - 3) / 1000; exit }' <<<"$out")
        ;;
    esac
    stop_daemon
    if [ -z "$rate" ] || [ -z "$cpu" ]; then
        echo "log_paths: no figures from the $path run:" >&2
        echo "$out" >&2
        exit 1
    fi
    echo "$rate $cpu"
}

paths=(lineproto es syslog loki-json loki-proto otlp-json otlp-proto)
np=${#paths[@]}
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
    "$rounds rounds, $events events a run, $conns connections, a fresh daemon each," \
    "commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '%-6s %-11s %10s %9s %8s\n' round path events/s "% of lp" "cpu us"
results=$dir/results
: >"$results"
for ((r = 0; r < rounds; r++)); do
    declare -A rate=() cpu=()
    for ((k = 0; k < np; k++)); do
        p=${paths[$(((k + r) % np))]}
        read -r rate[$p] cpu[$p] < <(run "$p")
    done
    for p in "${paths[@]}"; do
        share=$(awk -v a="${rate[$p]}" -v b="${rate[lineproto]}" 'BEGIN { printf "%.1f", 100 * a / b }')
        printf '%-6s %-11s %10s %9s %8s\n' $((r + 1)) "$p" "${rate[$p]}" "$share" "${cpu[$p]}"
        echo "$p $share ${cpu[$p]}" >>"$results"
    done
    unset rate cpu
done
echo
printf '%-11s %14s %8s %8s %14s %14s\n' path "median % of lp" lowest highest "median cpu us" "lp cpu / cpu"
# per path, in the order of the table: the median, lowest and highest share,
# and the median CPU against line protocol's (the medians sort in place)
awk -v order="${paths[*]}" '
    function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++)
            for (j = i + 1; j <= n; j++)
                if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { n[$1]++; s[$1, n[$1]] = $2; c[$1, n[$1]] = $3 }
    END {
        np = split(order, names, " ")
        for (k = 1; k <= np; k++) {
            p = names[k]
            for (i = 1; i <= n[p]; i++) { ss[i] = s[p, i]; cc[i] = c[p, i] }
            share[p] = median(ss, n[p]); lo[p] = ss[1]; hi[p] = ss[n[p]]; cpu[p] = median(cc, n[p])
        }
        for (k = 1; k <= np; k++) {
            p = names[k]
            printf "%-11s %14.1f %8.1f %8.1f %14.2f %13.0f%%\n", p, share[p], lo[p], hi[p], cpu[p],
                100 * cpu["lineproto"] / cpu[p]
        }
    }' "$results"
