#!/bin/sh
# Installs the Debian packages logbucket needs to build and test, if any are
# missing. As root it runs apt-get; otherwise it prints the command and fails.
set -eu

PKGS="gcc make pkg-config libjemalloc-dev liblz4-dev libzstd-dev libmicrohttpd-dev zlib1g-dev
libinih-dev libcmocka-dev libjansson-dev libpcre2-dev sharness curl perl clang-format
openssl libsnappy-dev"

missing=""
for p in $PKGS; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done

[ -z "$missing" ] && exit 0

echo "deps: missing Debian packages:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: run as root: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing
