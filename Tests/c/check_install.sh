#!/usr/bin/env bash
# `cmake --install` gives a relocatable tree: a C program finds the header and library through
# pkg-config, links, loads the installed library, and gets a clear error (nothing listens on
# 127.0.0.1:1).
set -euo pipefail
build=$1 source=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc "$source/examples/c/fetch.c" $(pkg-config --cflags --libs httpcontent) -Wl,-rpath,"$prefix/lib" -o "$prefix/fetch"
ldd "$prefix/fetch" | grep "$prefix/lib/libhttpcontent.so.0" >/dev/null || { echo "did not link the installed library"; exit 1; }
if out=$("$prefix/fetch" http://127.0.0.1:1/ 2>&1); then echo "expected a failure, got: $out"; exit 1; fi
case "$out" in *"error (transport)"*) echo "installed library works: $out" ;; *) echo "unexpected: $out"; exit 1 ;; esac
