#!/bin/sh
# 59-tail.t again with a pool of HTTP threads (http_threads = 2): there the
# tail streams wait with their connections suspended (the hub resumes them)
# instead of blocking a thread.
TAIL_HTTP_THREADS=2
. "$(dirname "$0")/59-tail.t"
