#!/usr/bin/env bash
# Installs what building and testing httpcontent needs, and only what is missing:
# libcurl and yajl headers, cmake, ninja, pkg-config, and nginx and openssl for the HTTP/2 test's
# server and certificate (Debian packages), pytest and wheel (PyPI).
# The Swift toolchain itself is expected on PATH.
set -euo pipefail

apt_packages=(libcurl4-openssl-dev libyajl-dev cmake ninja-build pkg-config nginx openssl)
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
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "setup: pip installing ${py_missing[*]}"
  python3 -m pip install -q "${py_missing[@]}" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi

command -v swift >/dev/null || { echo "setup: swift is not on PATH (install the Swift 6 toolchain)"; exit 1; }
