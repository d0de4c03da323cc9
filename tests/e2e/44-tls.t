#!/bin/sh
# TLS: with tls_cert and tls_key the HTTP server speaks only HTTPS. curl and
# an InfluxDB client library (python3-influxdb, over requests) write and
# read over it with the certificate as their trust anchor; plain HTTP gets
# no service; a key that does not match, a missing file or only one of the
# two settings stop the start with a clear error; beyond loopback with
# tokens and without TLS the daemon warns.

test_description='HTTPS with tls_cert and tls_key'
. "$(dirname "$0")/lib.sh"

if ! command -v openssl >/dev/null 2>&1; then
    skip_all='openssl is not installed (Debian package openssl): no certificate to test with'
    test_done
fi

# cert NAME: a self-signed certificate for 127.0.0.1 in NAME.crt, its key in NAME.key
cert() {
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.crt" -days 2 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
}

test_expect_success 'certificates' '
    cert server && cert other &&
    test -s server.crt && test -s other.key
'

export CURL_CA_BUNDLE="$PWD/server.crt"

test_expect_success 'start with tls_cert and tls_key: the daemon says https' '
    lb_start --set tls_cert="$PWD/server.crt" --set tls_key="$PWD/server.key" &&
    case "$LB_URL" in https://*) ;; *) false ;; esac
'

test_expect_success 'curl writes and reads over HTTPS, trusting the certificate' '
    test "$(lb_req POST "/write?db=tls" --data-binary "cpu,host=a v=1.5 1000")" = 204 &&
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT * FROM tls WHERE host = '"'a'"'")" = 200 &&
    grep -q "\"v\":1.5" body
'

test_expect_success 'curl without the certificate refuses the server (it is not trusted)' '
    test_must_fail env -u CURL_CA_BUNDLE curl -sS -o /dev/null "$LB_URL/ping" 2>err &&
    grep -qi "certificate" err
'

test_expect_success 'plain HTTP on the HTTPS port gets no service' '
    code=$(curl -s -o /dev/null -w "%{http_code}" --max-time 5 "http://127.0.0.1:$LB_PORT/ping") ;
    test "$code" != 204
'

# Debian's python3 (not another on PATH): python3-influxdb is its package.
PY=/usr/bin/python3
if ! $PY -c "import influxdb" 2>/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-influxdb >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-influxdb >/dev/null 2>&1; }
fi
if $PY -c "import influxdb" 2>/dev/null; then
    test_set_prereq PYINFLUX
else
    echo "# python3-influxdb cannot be installed (Debian package python3-influxdb): its test is skipped"
fi

test_expect_success PYINFLUX 'python3-influxdb writes and reads back over HTTPS (ssl=True, verify_ssl=cert)' '
    $PY - "$LB_PORT" "$PWD/server.crt" <<-\PY >py.out &&
	import sys
	from influxdb import InfluxDBClient
	c = InfluxDBClient(host="127.0.0.1", port=int(sys.argv[1]), database="pytls",
	                   ssl=True, verify_ssl=sys.argv[2])
	c.create_database("pytls")
	ok = c.write_points([{"measurement": "mem", "tags": {"host": "py"},
	                      "time": 1700000000000000000, "fields": {"used": 42}}])
	print("written", ok)
	print(sorted(d["name"] for d in c.get_list_database()))
	PY
    cat py.out &&
    grep -q "written True" py.out &&
    grep -q "pytls" py.out &&
    test "$(lb_req POST /api/v1/sql --data-binary "SELECT * FROM pytls WHERE host = '"'py'"'")" = 200 &&
    grep -q "\"used\":42" body
'

test_expect_success 'stop' '
    lb_stop
'

test_expect_success 'a key that does not match the certificate: the start fails, saying so' '
    test_must_fail "$LOGBUCKETD" --listen 127.0.0.1:0 --data-dir "$PWD/d2" \
        --set tls_cert="$PWD/server.crt" --set tls_key="$PWD/other.key" 2>bad.log &&
    grep -q "certificate and key that do not match" bad.log
'

test_expect_success 'a missing key file: the start fails and names it' '
    test_must_fail "$LOGBUCKETD" --listen 127.0.0.1:0 --data-dir "$PWD/d2" \
        --set tls_cert="$PWD/server.crt" --set tls_key="$PWD/nope.key" 2>bad.log &&
    grep -q "cannot read tls_key .*nope.key" bad.log
'

test_expect_success 'tls_cert without tls_key is a configuration error' '
    test_must_fail "$LOGBUCKETD" --check-config --set tls_cert="$PWD/server.crt" 2>bad.log &&
    grep -q "tls_cert and tls_key go together" bad.log
'

test_expect_success 'beyond loopback with a token and without TLS: a warning' '
    "$LOGBUCKETD" --listen 0.0.0.0:0 --data-dir "$PWD/d3" --set token="s3cret admin *" \
        2>warn.log &
    pid=$! &&
    n=0 &&
    while ! grep -q "listening on" warn.log && test $n -lt 100; do sleep 0.05; n=$((n + 1)); done &&
    kill $pid && wait $pid ;
    grep -q "without TLS" warn.log
'

test_done
