#!/usr/bin/env bash
# Issue 30's proof: the peers' own test suites. requests' and httpx's test suites, taken from
# their sdists at the versions installed here, run twice each inside a network namespace whose
# only interface is loopback: natively, then with httpcontent underneath (every requests.Session
# mounts RequestsAdapter; httpx.Client/AsyncClient build HTTPXTransport/AsyncHTTPXTransport where
# they would build their own). The two runs are compared per test id: "kept K of N native
# passes" per suite, and the misses listed. Exits non-zero when a suite keeps less than
# PEER_THRESHOLD percent (default 97) of its native passes.
#
#   bash scripts/peer-suites.sh [--suite requests|httpx] [-- extra pytest arguments]
#
# About 4-5 minutes for both (requests' suite ~80 s a run, httpx's ~20 s; CI runs them whole).
# Needs root (ip netns) and PyPI (pip, outside
# the namespace: the sdists and the suites' test dependencies go into a venv under
# $PEER_SUITES_DIR, default build/peer-suites). The library: $HTTPCONTENT_LIBRARY, else
# build/libhttpcontent.so.0 (built with CMake when missing). Nothing run inside the namespace
# can reach anything but loopback; the tests that aim at a non-loopback address on purpose
# (requests' TestTimeout connect tests, httpx's `network`-marked tests) are deselected anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
THRESHOLD=${PEER_THRESHOLD:-97}
WORK=${PEER_SUITES_DIR:-$ROOT/build/peer-suites}
NETNS=${PEER_NETNS:-hcpeers}
PYTHON=${PYTHON:-python3}
suites="requests httpx"
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --suite) suites=$2; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "usage: $0 [--suite requests|httpx] [-- pytest args]" >&2; exit 2 ;;
    esac
done

# The suites' own test dependencies (requests: requirements-dev.txt; httpx: its tests' imports).
TEST_DEPS=(pytest "pytest-httpbin==2.1.0" "httpbin~=0.10.0" trustme pytest-mock pysocks
           uvicorn chardet zstandard socksio h2 brotli "rich<14" click pygments trio anyio
           pytest-timeout)

# Tests that would aim at a non-loopback address: never attempted.
REQUESTS_DESELECT=(--deselect tests/test_requests.py::TestTimeout::test_connect_timeout
                   --deselect tests/test_requests.py::TestTimeout::test_total_timeout_connect)
HTTPX_MARKS="not network"

mkdir -p "$WORK"
if [ -z "${HTTPCONTENT_LIBRARY:-}" ]; then   # the Release build scripts/test.sh makes (a no-op when current)
    { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build; } >"$WORK/build.log" 2>&1 \
        || { tail -n 30 "$WORK/build.log"; echo "peer-suites: library build failed" >&2; exit 1; }
    export HTTPCONTENT_LIBRARY=$ROOT/build/libhttpcontent.so.0
fi

# A venv seeing the installed requests and httpx (the versions under test), plus the suites' deps.
if [ ! -x "$WORK/venv/bin/python" ]; then
    "$PYTHON" -m venv --system-site-packages "$WORK/venv"
fi
VPY=$WORK/venv/bin/python
"$VPY" -m pip install -q --disable-pip-version-check "${TEST_DEPS[@]}"

version() { "$VPY" -c "import $1; print($1.__version__)"; }
fetch_suite() {   # $1 = package: its sdist at the installed version, unpacked; prints the folder
    local v dir
    v=$(version "$1")
    dir=$WORK/$1-$v
    if [ ! -d "$dir/tests" ]; then
        (cd "$WORK" && "$VPY" -m pip download -q --disable-pip-version-check --no-deps \
            --no-binary :all: "$1==$v" -d sdists >/dev/null && tar xzf "sdists/$1-$v.tar.gz")
    fi
    [ -d "$dir/tests" ] || { echo "peer-suites: $1 $v's sdist has no tests/" >&2; exit 1; }
    echo "$dir"
}

made_netns=0
if ! ip netns list | grep -qw "$NETNS"; then
    ip netns add "$NETNS"
    made_netns=1
fi
cleanup() { [ "$made_netns" -eq 0 ] || ip netns delete "$NETNS" 2>/dev/null || true; }
trap cleanup EXIT
ip netns exec "$NETNS" ip link set lo up
# The namespace must have loopback and nothing else.
others=$(ip netns exec "$NETNS" ip -o link show | awk -F': ' '{print $2}' | grep -vx lo || true)
[ -z "$others" ] || { echo "peer-suites: namespace $NETNS has interfaces besides lo: $others" >&2; exit 1; }

run() {   # $1 = suite folder, $2 = report path, rest: pytest arguments
    local dir=$1 report=$2; shift 2
    (cd "$dir" && env -u http_proxy -u https_proxy -u HTTP_PROXY -u HTTPS_PROXY -u all_proxy -u ALL_PROXY \
        PYTHONPATH="$ROOT/bindings/python:$ROOT/scripts/peer_suites" PYTHONDONTWRITEBYTECODE=1 \
        timeout 900 ip netns exec "$NETNS" "$VPY" -m pytest tests -q -p no:cacheprovider --timeout=60 \
        --junitxml="$report" "$@" >"$report.log" 2>&1) || true
    tail -n 1 "$report.log"
}

status=0
for suite in $suites; do
    dir=$(fetch_suite "$suite")
    case "$suite" in
        requests) args=("${REQUESTS_DESELECT[@]}"); plugin=hc_requests_plugin ;;
        httpx) args=(-m "$HTTPX_MARKS"); plugin=hc_httpx_plugin ;;
        *) echo "peer-suites: unknown suite $suite" >&2; exit 2 ;;
    esac
    args+=("${extra[@]}")
    echo "== $suite $(version "$suite") (from its sdist: $dir/tests)"
    echo -n "   native:       "; run "$dir" "$WORK/$suite-native.xml" "${args[@]}"
    echo -n "   httpcontent:  "; run "$dir" "$WORK/$suite-hc.xml" -p "$plugin" "${args[@]}"
    "$VPY" scripts/peer_suites/compare.py "$suite" "$WORK/$suite-native.xml" "$WORK/$suite-hc.xml" \
        "$THRESHOLD" || status=1
done
exit "$status"
