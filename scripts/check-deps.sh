#!/bin/sh
# The dependency rule of DESIGN.md section 2, checked:
#   1. includes point down: http -> ingest, query -> store -> model ->
#      config -> base; ingest and query never include each other;
#   2. query/ and http/ never include the store's internals (store_int.h,
#      the SSTable, WAL and memtable headers, ...): they use store/store.h,
#      store/iter.h and the data model of model/;
#   3. no file cycle inside a layer: with the objects of BUILD (default
#      build/) at hand, a file that calls a function defined in another file
#      of its layer depends on it, and these dependencies form no cycle.
# Usage: scripts/check-deps.sh [BUILD]   (step 3 is skipped without objects)
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
status=0

layers="base config model store ingest query http"
# the layers above each one (what it must not include)
above() {
    case $1 in
    base) echo "config model store ingest query http" ;;
    config) echo "model store ingest query http" ;;
    model) echo "store ingest query http" ;;
    store) echo "ingest query http" ;;
    ingest) echo "query http" ;;
    query) echo "ingest http" ;;
    http) echo "" ;;
    esac
}

sources() { # sources LAYER: its .c and .h files, sub-folders too
    [ -d "$1" ] && find "$1" -name '*.[ch]' | sort
}

for layer in $layers; do
    files=$(sources "$layer")
    [ -n "$files" ] || continue
    for up in $(above "$layer"); do
        hits=$(grep -n "#include \"$up/" $files 2>/dev/null)
        if [ -n "$hits" ]; then
            echo "$layer/ must not include $up/:"
            echo "$hits" | sed 's/^/  /'
            status=1
        fi
    done
done

# The store's public headers; everything else under store/ is internal.
public='store/store\.h|store/iter\.h|store/slice\.h'
for layer in query http ingest; do
    files=$(sources "$layer")
    [ -n "$files" ] || continue
    hits=$(grep -nE '#include "store/' $files | grep -vE "#include \"($public)\"")
    if [ -n "$hits" ]; then
        echo "$layer/ must not include store internals (only $public):" | sed 's/\\//g'
        echo "$hits" | sed 's/^/  /'
        status=1
    fi
done

# File cycles: edges "a b" when a.o uses a symbol b.o defines, per layer.
for layer in $layers; do
    objs=$(find "$BUILD/$layer" -name '*.o' 2>/dev/null | sort)
    [ -n "$objs" ] || continue
    for o in $objs; do
        f=${o#"$BUILD/$layer/"}
        f=${f%.o}
        nm "$o" | awk -v f="$f" '$2 ~ /^[TDBR]$/ { print "D", $3, f } $1 == "U" { print "U", $2, f }'
    done | awk -v layer="$layer" '
        $1 == "D" { def[$2] = $3 }
        $1 == "U" { n++; usym[n] = $2; ufile[n] = $3 }
        END {
            for (i = 1; i <= n; i++) {
                d = def[usym[i]]
                if (d != "" && d != ufile[i] && !((ufile[i], d) in seen)) {
                    seen[ufile[i], d] = 1
                    adj[ufile[i]] = adj[ufile[i]] " " d
                    why[ufile[i], d] = usym[i]
                    nodes[ufile[i]] = 1
                    nodes[d] = 1
                }
            }
            bad = 0
            for (v in nodes)
                if (!color[v])
                    visit(v, "")
            exit bad
        }
        function visit(v, path,    k, m, w, parts) {
            color[v] = 1
            m = split(adj[v], parts, " ")
            for (k = 1; k <= m; k++) {
                w = parts[k]
                if (color[w] == 1) {
                    printf "%s/: a cycle of files: %s%s -> %s (%s)\n", layer, path, v, w, why[v, w]
                    bad = 1
                } else if (!color[w]) {
                    visit(w, path v " -> ")
                }
            }
            color[v] = 2
        }' || status=1
done

[ $status = 0 ] &&
    echo "check-deps: includes point down (http -> ingest, query -> store -> model -> config -> base), no store internals above the store, no file cycles in a layer"
exit $status
