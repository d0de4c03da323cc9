# Debian's InfluxDB 1.x beside logbucket, for the tests that compare the two
# (sourced after lib.sh). Everything lives under the test's trash directory:
# a generated config with temporary meta, data and WAL folders, the HTTP API
# on a free 127.0.0.1 port below 32768, reporting off, no other listener
# (the RPC bind-address is a second free loopback port, as influxd always
# opens it). Stopped by its PID.
#
#   ifx_available               true when /usr/bin/influxd runs (installed by
#                               apt-get when missing and the test is root)
#   ifx_start                   sets IFX_PID, IFX_PORT, IFX_URL
#   ifx_stop                    SIGTERM, waits, SIGKILL after 10 s
#   ifx_peer_start              for the tests that compare with a script:
#                               PY (python3) and influxd started, then the
#                               prereq BOTH; else says why the tests skip

IFX_PID=
IFX_BIN=${IFX_BIN:-/usr/bin/influxd}

ifx_available() {
    if ! test -x "$IFX_BIN" && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        timeout 300 apt-get install -y -q influxdb >"$SHARNESS_TRASH_DIRECTORY/apt.log" 2>&1 || true
    fi
    test -x "$IFX_BIN" && "$IFX_BIN" version >/dev/null 2>&1
}

# A port the kernel says is free now, below 32768 (bound and released by
# perl; the small race with other engineers is retried by ifx_start).
ifx_free_port() {
    perl -MIO::Socket::INET -e '
        for (1 .. 200) {
            my $p = 10000 + int(rand(22000));
            my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $p,
                                          Proto => "tcp", ReuseAddr => 0, Listen => 1) or next;
            close $s; print $p; exit 0;
        }
        exit 1;'
}

ifx_write_config() {  # dir http-port rpc-port
    cat >"$1/influxdb.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$3"
[meta]
  dir = "$1/meta"
  logging-enabled = false
[data]
  dir = "$1/data"
  wal-dir = "$1/wal"
  index-version = "inmem"
  query-log-enabled = false
[retention]
  enabled = false
[shard-precreation]
  enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:$2"
  log-enabled = false
  pprof-enabled = false
[logging]
  level = "warn"
  suppress-logo = true
[continuous_queries]
  enabled = false
[[graphite]]
  enabled = false
[[collectd]]
  enabled = false
[[opentsdb]]
  enabled = false
[[udp]]
  enabled = false
CONF
}

ifx_start() {
    dir=$SHARNESS_TRASH_DIRECTORY/influxd
    mkdir -p "$dir/meta" "$dir/data" "$dir/wal"
    tries=0
    while [ $tries -lt 3 ]; do
        tries=$((tries + 1))
        IFX_PORT=$(ifx_free_port) && rpc=$(ifx_free_port) || return 1
        ifx_write_config "$dir" "$IFX_PORT" "$rpc"
        "$IFX_BIN" run -config "$dir/influxdb.conf" >"$dir/influxd.log" 2>&1 &
        IFX_PID=$!
        IFX_URL=http://127.0.0.1:$IFX_PORT
        n=0
        while [ $n -lt 300 ] && kill -0 "$IFX_PID" 2>/dev/null; do
            code=$(curl -s -o /dev/null -w '%{http_code}' "$IFX_URL/ping")
            [ "$code" = 204 ] && export IFX_PID IFX_PORT IFX_URL && return 0
            sleep 0.1
            n=$((n + 1))
        done
        ifx_stop
    done
    cat "$dir/influxd.log" >&2
    return 1
}

ifx_stop() {
    lb_stop_pid "$IFX_PID" 2>/dev/null
    IFX_PID=
    return 0
}

trap 'ifx_stop; lb_cleanup' EXIT

ifx_peer_start() {
    PY=/usr/bin/python3
    command -v "$PY" >/dev/null || PY=python3
    if ! command -v "$PY" >/dev/null; then
        say "skipping: python3 is missing"
    elif ! ifx_available; then
        say "skipping: InfluxDB 1.x (influxd) is not installed and could not be"
    elif ! ifx_start 2>"$SHARNESS_TRASH_DIRECTORY/influxd.err"; then
        say "skipping: influxd did not start ($(tail -n 1 "$SHARNESS_TRASH_DIRECTORY/influxd.err"))"
    else
        test_set_prereq BOTH
    fi
}
