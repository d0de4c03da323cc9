# What the peer comparisons (41-lp-vs-influxd.py, 63-influxql-vs-influxd.py)
# share: one HTTP request, its status and body whatever the status.
import urllib.error
import urllib.request


def http(method, url, body=None, timeout=60):
    req = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
