#!/bin/sh
test_description='the web console at /ui/: its files and headers (curl), then the page in Debian'"'"'s chromium, headless, driven through the DevTools protocol by puppeteer-core (tests/e2e/90-console.js): database picker, word search, histogram, rows, paging, context, chart, zoom, shared links, a <script> line shown as text, live tail, tokens'
. "$(dirname "$0")/lib.sh"
# stderr as prove sees it: a failing browser check's reason reaches the
# log without -v (sharness sends a test's own output nowhere without it)
exec 7>&2

# Screenshots of the main views are kept in the build folder.
out=${LB_BUILD:-$LB_TOP/build}/e2e/90-console
mkdir -p "$out"

test_expect_success 'start; write log lines of the last hour and cpu points' '
    lb_start &&
    now=$(date +%s) &&
    : >logs.jsonl &&
    i=1 &&
    while [ $i -le 22 ]; do
        case $((i % 3)) in 0) h=web-1 ;; 1) h=web-2 ;; *) h=db-1 ;; esac &&
        echo "{\"ts\":$((now - i * 120))000000000,\"host\":\"$h\",\"event\":\"app\",\"level\":\"info\",\"msg\":\"request $i served in $i ms\"}" >>logs.jsonl &&
        i=$((i + 1)) || return 1
    done &&
    cat >>logs.jsonl <<-EOF &&
	{"ts":$((now - 130))000000000,"host":"web-1","event":"app","level":"error","msg":"upstream timeout after 30s"}
	{"ts":$((now - 700))000000000,"host":"web-2","event":"app","level":"warn","msg":"Timeout waiting for db"}
	{"ts":$((now - 1300))000000000,"host":"db-1","event":"db","level":"warn","msg":"read timeout on replica"}
	{"ts":$((now - 1900))000000000,"host":"web-1","event":"app","level":"error","msg":"connect timeout to cache"}
	{"ts":$((now - 2500))000000000,"host":"web-1","event":"app","level":"info","msg":"timeouts reset"}
	{"ts":$((now - 1000))000000000,"host":"web-1","event":"app","level":"info","msg":"same ts a"}
	{"ts":$((now - 1000))000000000,"host":"web-1","event":"app","level":"info","msg":"same ts b"}
	{"ts":$((now - 1000))000000000,"host":"web-2","event":"app","level":"info","msg":"same ts c"}
	{"ts":$((now - 1000))000000000,"host":"db-1","event":"db","level":"info","msg":"same ts d"}
	{"ts":$((now - 1000))000000000,"host":"db-1","event":"app","level":"info","msg":"same ts e"}
	{"ts":$((now - 1500))000000000,"host":"web-2","event":"app","level":"error","msg":"<script>window.__lb_xss=1</script><img src=x onerror=\\"window.__lb_xss=2\\">"}
	EOF
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" --data-binary @logs.jsonl)" = 204 &&
    : >cpu.lp &&
    i=0 &&
    while [ $i -lt 20 ]; do
        echo "cpu,host=web-1,region=eu usage=$((20 + i * 3)).5 $((now - i * 150))000000000" >>cpu.lp &&
        echo "cpu,host=web-2,region=us usage=$((50 + i)) $((now - i * 150))000000000" >>cpu.lp &&
        i=$((i + 1)) || return 1
    done &&
    test "$(lb_req POST "/write?db=metrics" --data-binary @cpu.lp)" = 204 &&
    lb_req POST /api/v1/sql --data-binary "SELECT COUNT(*) FROM logs WHERE ts >= 0" >/dev/null &&
    grep -q "{\"count\":33}" body
'

# --- the files, with curl ---

test_expect_success '/ui redirects to /ui/; /ui/ is the page with a strict CSP' '
    test "$(lb_req GET /ui)" = 302 &&
    test "$(lb_header Location)" = /ui/ &&
    test "$(lb_req GET /ui/)" = 200 &&
    lb_header Content-Type | grep -q "^text/html; charset=utf-8$" &&
    grep -q "<script type=\"module\" src=\"app.js\"></script>" body &&
    csp=$(lb_header Content-Security-Policy) &&
    echo "$csp" | grep -q "^default-src '"'"'self'"'"';" &&
    echo "$csp" | grep -q "script-src '"'"'self'"'"';" &&
    echo "$csp" | grep -q "frame-ancestors '"'"'none'"'"'" &&
    ! echo "$csp" | grep -q "unsafe" &&
    test "$(lb_header X-Content-Type-Options)" = nosniff &&
    test "$(lb_header X-Frame-Options)" = DENY &&
    test "$(lb_header Cache-Control)" = no-cache &&
    test -n "$(lb_header ETag)"
'

test_expect_success 'each file has its Content-Type and ETag; If-None-Match gives 304' '
    test "$(lb_req GET /ui/app.js)" = 200 &&
    test "$(lb_header Content-Type)" = "text/javascript; charset=utf-8" &&
    test "$(lb_req GET /ui/chart.js)" = 200 &&
    test "$(lb_header Content-Type)" = "text/javascript; charset=utf-8" &&
    test "$(lb_req GET /ui/app.css)" = 200 &&
    test "$(lb_header Content-Type)" = "text/css; charset=utf-8" &&
    test "$(lb_req GET /ui/index.html)" = 200 &&
    etag=$(lb_header ETag) &&
    rm -f body &&
    test "$(lb_req GET /ui/ -H "If-None-Match: $etag")" = 304 &&
    test ! -s body &&
    test "$(lb_req GET /ui/ -H "If-None-Match: \"0000\"")" = 200 &&
    test "$(lb_req HEAD /ui/app.js -I)" = 200
'

test_expect_success 'unknown files are 404 with a JSON error; other methods 405' '
    test "$(lb_req GET /ui/nope.js)" = 404 &&
    grep -q "no such file of the console" body &&
    test "$(lb_req GET /ui/sub/app.js)" = 404 &&
    test "$(lb_req GET /ui/..%2fetc%2fpasswd)" = 404 &&
    test "$(lb_req GET /uix)" = 404 &&
    test "$(lb_req POST /ui/ --data-binary x)" = 405
'

test_expect_success 'the page uses no innerHTML, eval or inline handlers' '
    for f in app.js chart.js index.html; do
        lb_req GET /ui/$f >/dev/null &&
        ! grep -n -E "innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|setTimeout\(\"|[^a-z]on[a-z]+=\"" body || return 1
    done
'

# --- the page, in chromium ---

# Debian's chromium (and node, npm) are installed once per machine, as root,
# by apt-get when missing; puppeteer-core from npm into a folder outside the
# tree (LB_NPM_CACHE_DIR), without its own browser download.
pptr_dir=${LB_NPM_CACHE_DIR:-${TMPDIR:-/tmp}}/logbucket-npm-puppeteer
CHROMIUM=${LB_CHROMIUM:-/usr/bin/chromium}
need=""
test -x "$CHROMIUM" || need="$need chromium"
command -v node >/dev/null || need="$need nodejs"
command -v npm >/dev/null || need="$need npm"
if [ -n "$need" ] && test "$(id -u)" = 0 && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive
    export DEBIAN_FRONTEND
    apt_install() {
        timeout 600 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 \
            $need >>apt.log 2>&1
    }
    apt_install || { timeout 300 apt-get update -qq >>apt.log 2>&1 && apt_install; } || true
fi
if ! test -x "$CHROMIUM"; then
    skip_all_browser="chromium is not installed ($CHROMIUM)"
elif ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip_all_browser="node and npm are not installed"
else
    if ! test -d "$pptr_dir/node_modules/puppeteer-core"; then
        mkdir -p "$pptr_dir" &&
        (cd "$pptr_dir" && PUPPETEER_SKIP_DOWNLOAD=1 timeout 300 npm install --no-audit --no-fund \
            --silent puppeteer-core >npm.log 2>&1) || true
    fi
    test -d "$pptr_dir/node_modules/puppeteer-core" ||
        skip_all_browser="npm could not install puppeteer-core into $pptr_dir"
fi
if [ -z "$skip_all_browser" ]; then
    test_set_prereq BROWSER
else
    say "# browser tests skipped: $skip_all_browser"
fi

test_expect_success BROWSER 'chromium drives the console (90-console.js main)' '
    NODE_PATH="$pptr_dir/node_modules" timeout 400 node "$LB_TOP/tests/e2e/90-console.js" \
        main "$LB_URL" "$out" >browser.out 2>browser.err;
    cat browser.out &&
    grep -q "^ok the page loads" browser.out
'

# ok NAME in the browser's report
browser_ok() {
    grep -q "^ok $1" browser.out || { grep "$1" browser.out >&7; cat browser.err >&7; false; }
}

test_expect_success BROWSER 'page: loads, picks the database, newest rows first' '
    browser_ok "the page loads and lists the databases" &&
    browser_ok "picking the database shows its newest rows first"
'
test_expect_success BROWSER 'page: a word search shows exactly the matching rows' '
    browser_ok "a word search shows exactly the matching rows"
'
test_expect_success BROWSER 'page: the histogram bars match the GROUP BY answer' '
    browser_ok "the histogram has one bar per row of the GROUP BY answer"
'
test_expect_success BROWSER 'page: EXPLAIN ANALYZE plan and timing' '
    browser_ok "the plan and timing of the search are shown"
'
test_expect_success BROWSER 'page: a row opens; show context' '
    browser_ok "a row opens to show its tags and fields" &&
    browser_ok "show context lists the host"
'
test_expect_success BROWSER 'page: a <script> log line is shown as text and runs nothing' '
    browser_ok "a <script> log line shows as text and runs nothing"
'
test_expect_success BROWSER 'page: older pages by keyset, equal timestamps once each' '
    browser_ok "paging to older rows by keyset"
'
test_expect_success BROWSER 'page: drag on the histogram zooms; a shared link restores the state' '
    browser_ok "dragging across the histogram zooms" &&
    browser_ok "a shared link (the URL hash) restores the search"
'
test_expect_success BROWSER 'page: a bad SQL condition shows the daemon'"'"'s error' '
    browser_ok "a bad SQL condition shows the daemon"
'
test_expect_success BROWSER 'page: the metric chart of a host' '
    browser_ok "the metric chart draws"
'
test_expect_success BROWSER 'page: no script errors, CSP violations or dialogs' '
    browser_ok "no script errors, CSP violations or dialogs"
'

# The tail endpoint comes from another branch: until it is there, the
# browser reports the check as SKIP and so does this test.
if grep -q "^not ok live tail shows .*: SKIP" browser.out 2>/dev/null; then
    say "# live tail skipped: $(sed -n "s/^not ok live tail shows .*: SKIP //p" browser.out)"
else
    test_set_prereq TAIL
fi
test_expect_success BROWSER,TAIL 'page: live tail shows a newly written row within 2 s, and one written before it started' '
    browser_ok "live tail shows a newly written row within 2 s"
'
test_expect_success BROWSER,TAIL 'page: a page that reads too slowly shows the dropped marker; rows + dropped = written' '
    browser_ok "a page that reads the tail too slowly shows the dropped marker"
'
test_expect_success BROWSER,TAIL 'page: live tail follows only the matching rows' '
    browser_ok "live tail follows only the rows matching the search"
'

test_expect_success 'stop' '
    lb_stop 10
'

test_expect_success 'start with tokens; write three rows' '
    cat >auth.conf <<-\EOF &&
	token = c0ns0le-reader read logs
	token = c0ns0le-writer write logs
	EOF
    LB_DATA=$SHARNESS_TRASH_DIRECTORY/data-tokens &&
    lb_start -c auth.conf &&
    now=$(date +%s) &&
    printf "{\"ts\":%s,\"host\":\"a\",\"event\":\"e\",\"msg\":\"one\"}\n{\"ts\":%s,\"host\":\"a\",\"event\":\"e\",\"msg\":\"two\"}\n{\"ts\":%s,\"host\":\"b\",\"event\":\"e\",\"msg\":\"three\"}\n" \
        "$((now - 60))000000000" "$((now - 50))000000000" "$((now - 40))000000000" >three.jsonl &&
    test "$(lb_req POST "/api/v1/ingest?db=logs&format=jsonl" -H "Authorization: Token c0ns0le-writer" --data-binary @three.jsonl)" = 204 &&
    test "$(lb_req GET /ui/)" = 200 &&
    test "$(lb_req POST /api/v1/sql --data-binary "SHOW DATABASES")" = 401
'

test_expect_success BROWSER 'the page asks for the token, then works; the token stays out of URLs and logs' '
    NODE_PATH="$pptr_dir/node_modules" timeout 120 node "$LB_TOP/tests/e2e/90-console.js" \
        token "$LB_URL" "$out" c0ns0le-reader c0ns0le-writer >browser.out 2>browser.err;
    cat browser.out &&
    browser_ok "with tokens the page asks for one, then works" &&
    browser_ok "the token stays in sessionStorage and out of the URL" &&
    browser_ok "no script errors" &&
    ! grep -q c0ns0le-reader "$LB_LOG.new"
'

test_expect_success BROWSER,TAIL 'the live tail works with tokens (the token in a header)' '
    browser_ok "with tokens the live tail sends the token in a header"
'

test_expect_success 'stop' '
    lb_stop 10
'

test_done
