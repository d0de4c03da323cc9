# Sourced by the benchmark scripts that start their own daemons: each on an
# empty data dir under $dir, kernel-chosen loopback ports for HTTP and a
# syslog TCP listener, stopped by its PID. The script sets top (the project
# root) and dir (its temporary folder, removed by its EXIT trap after
# stop_daemon).

pid=
stop_daemon() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        pid=
    fi
}

# start_daemon [--set K=V]...: a fresh build/logbucketd; sets pid, http
# (its HTTP port) and sl (its syslog TCP port)
start_daemon() {
    rm -rf "$dir/data"
    # the previous daemon's log would satisfy the wait below before the
    # new daemon's shell has truncated it (then no ports are found)
    rm -f "$dir/log"
    "$top/build/logbucketd" --listen 127.0.0.1:0 --data-dir "$dir/data" \
        --set syslog_tcp_listen=127.0.0.1:0 "$@" 2>"$dir/log" &
    pid=$!
    n=0
    while [ $n -lt 200 ] && ! grep -qs "syslog: listening on tcp" "$dir/log"; do
        sleep 0.05
        n=$((n + 1))
    done
    http=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/log")
    sl=$(sed -n 's/.*syslog: listening on tcp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/log")
    [ -n "$http" ] && [ -n "$sl" ]
}
