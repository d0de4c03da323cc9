#!/bin/sh
# Fails if a lower layer includes a higher one. Layers, bottom first:
#   config -> store -> ingest, query -> http
# ingest and query may not include each other.
cd "$(dirname "$0")/.." || exit 1
status=0
check() { # check LAYER FORBIDDEN...
    layer=$1
    shift
    for up in "$@"; do
        hits=$(grep -n "#include \"$up/" "$layer"/*.c "$layer"/*.h 2>/dev/null)
        if [ -n "$hits" ]; then
            echo "$layer/ must not include $up/:"
            echo "$hits" | sed 's/^/  /'
            status=1
        fi
    done
}
check config store ingest query http
check store ingest query http
check ingest query http
check query ingest http
[ $status = 0 ] && echo "check-deps: every include points down (http -> ingest, query -> store -> config)"
exit $status
