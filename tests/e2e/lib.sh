# Shared helpers for the end-to-end tests: sharness, plus a daemon started on
# a free 127.0.0.1 port (the kernel picks it: --listen 127.0.0.1:0, and the
# port is read from the daemon's "listening on" log line) with a temporary
# data directory, stopped by its PID.
#
#   . "$(dirname "$0")/lib.sh"
#   lb_start [daemon args...]   sets LB_PID, LB_PORT, LB_URL, LB_DATA (https:// with
#                               tls_cert: curl then needs CURL_CA_BUNDLE)
#   lb_req METHOD PATH [curl args...]  prints the status; body in ./body, headers in ./headers
#   lb_stop                     SIGTERM, waits, returns the exit status
#   lb_kill9                    SIGKILL, waits

LB_TOP=$(cd "$(dirname "$0")/../.." && pwd)
: "${LOGBUCKETD:=$LB_TOP/logbucketd}"
export LOGBUCKETD LB_TOP

# sharness puts its trash directory under $root: keep it out of the tree.
root=$(mktemp -d "${TMPDIR:-/tmp}/lb-e2e.XXXXXX")
SHARNESS_TEST_DIRECTORY=$LB_TOP/tests/e2e
. /usr/share/sharness/sharness.sh

LB_PID=
lb_cleanup() {
    if [ -n "$LB_PID" ] && kill -0 "$LB_PID" 2>/dev/null; then
        kill -KILL "$LB_PID" 2>/dev/null
        wait "$LB_PID" 2>/dev/null
    fi
    rm -rf "$root"
}
trap lb_cleanup EXIT

# Waits up to $2 seconds (default 10) for file $1 to contain the listen line.
lb_wait_port() {
    n=0
    limit=$(( ${2:-10} * 20 ))
    while [ $n -lt $limit ]; do
        LB_PORT=$(sed -n 's/.*listening on https\{0,1\}:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1" | tail -n 1)
        LB_SCHEME=$(sed -n 's/.*listening on \(https\{0,1\}\):.*/\1/p' "$1" | tail -n 1)
        [ -n "$LB_PORT" ] && return 0
        kill -0 "$LB_PID" 2>/dev/null || return 1
        sleep 0.05
        n=$((n + 1))
    done
    return 1
}

lb_start() {
    LB_DATA=${LB_DATA:-$SHARNESS_TRASH_DIRECTORY/data}
    LB_LOG=$SHARNESS_TRASH_DIRECTORY/daemon.log
    : >"$LB_LOG.new"
    "$LOGBUCKETD" --listen 127.0.0.1:0 --data-dir "$LB_DATA" "$@" 2>"$LB_LOG.new" &
    LB_PID=$!
    if ! lb_wait_port "$LB_LOG.new" 20; then
        cat "$LB_LOG.new" >&2
        cat "$LB_LOG.new" >>"$LB_LOG"
        return 1
    fi
    LB_URL=$LB_SCHEME://127.0.0.1:$LB_PORT
    export LB_PID LB_PORT LB_URL LB_DATA
    n=0
    while [ $n -lt 100 ]; do
        code=$(curl -s -o /dev/null -w '%{http_code}' "$LB_URL/ping") && [ "$code" = 204 ] && return 0
        sleep 0.05
        n=$((n + 1))
    done
    return 1
}

# lb_stop_pid PID [SECONDS]: stops a process of the test (the daemon, a
# peer, a shipper) with SIGTERM and waits at most SECONDS (default 10);
# returns its exit status (124 if it did not stop in time: then it is killed).
lb_stop_pid() {
    [ -n "$1" ] || return 0
    kill -TERM "$1" 2>/dev/null
    n=0
    limit=$(( ${2:-10} * 20 ))
    while kill -0 "$1" 2>/dev/null && [ $n -lt $limit ]; do
        sleep 0.05
        n=$((n + 1))
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        return 124
    fi
    wait "$1"
}

# Stops the daemon with SIGTERM and waits (at most $1 seconds, default 10);
# returns its exit status (124 if it did not stop in time: then it is killed).
lb_stop() {
    [ -n "$LB_PID" ] || return 0
    lb_stop_pid "$LB_PID" "${1:-10}"
    rc=$?
    [ $rc -eq 124 ] || cat "$LB_LOG.new" >>"$LB_LOG" 2>/dev/null
    LB_PID=
    return $rc
}

lb_kill9() {
    [ -n "$LB_PID" ] || return 0
    kill -KILL "$LB_PID" 2>/dev/null
    wait "$LB_PID" 2>/dev/null
    cat "$LB_LOG.new" >>"$LB_LOG" 2>/dev/null
    LB_PID=
    return 0
}

# lb_req METHOD PATH [curl args...]: prints the HTTP status; the body goes to
# ./body and the headers to ./headers (in the test's trash directory).
lb_req() {
    method=$1
    path=$2
    shift 2
    curl -s -X "$method" -o body -D headers -w '%{http_code}' --max-time 30 "$@" "$LB_URL$path"
}

# lb_header NAME: the value of a response header of the last lb_req.
lb_header() {
    tr -d '\r' <headers | sed -n "s/^$1: //Ip" | tail -n 1
}

# lb_sql STATEMENT: POST /api/v1/sql as text; prints the status, body in ./body.
lb_sql() {
    lb_req POST "/api/v1/sql" -H "Content-Type: text/plain" --data-binary "$1"
}

# lb_analyze KEY: the value of KEY in ./body's "analyze" object (EXPLAIN
# ANALYZE), "none" without one.
lb_analyze() {
    K="$1" perl -MJSON::PP -e 'local $/; my $r = JSON::PP->new->decode(<STDIN>);
        print $r->{analyze}{$ENV{K}} // "none"' <body
}

# The sanitizer build uses the sanitizers' allocator instead of jemalloc.
[ "${LB_SAN:-0}" = 1 ] || test_set_prereq JEMALLOC
