#!/usr/bin/env bash
# `cmake --install` gives a relocatable tree that C projects find both ways:
# - pkg-config (the installed httpcontent.pc, relative to itself), and the build tree's own
#   httpcontent.pc, which points at the build folder and the source headers;
# - CMake: find_package(httpcontent 0.1 CONFIG) from an outside project (Tests/c/external),
#   linking the imported target httpcontent::httpcontent; asking for 1.0 fails.
# Each program links, loads the library it was built against, and gets a clear error (nothing
# listens on 127.0.0.1:1).
set -euo pipefail
build=$1 source=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/usr" >/dev/null
install=$prefix/usr
# The tree is relocatable: move it after installing.
mv "$install" "$prefix/moved"
install=$prefix/moved

expect_transport_error() {  # program, expected library
  ldd "$1" | grep -F "$2" >/dev/null || { echo "$1 did not load $2:"; ldd "$1"; exit 1; }
  if out=$("$1" http://127.0.0.1:1/ 2>&1); then echo "expected a failure, got: $out"; exit 1; fi
  case "$out" in *"error (transport)"*) ;; *) echo "unexpected: $out"; exit 1 ;; esac
}

# 1. pkg-config, installed tree.
export PKG_CONFIG_PATH=$install/lib/pkgconfig
[ "$(pkg-config --modversion httpcontent)" = "$(head -n1 "$source/VERSION")" ]
cc "$source/examples/c/fetch.c" $(pkg-config --cflags --libs httpcontent) -Wl,-rpath,"$install/lib" -o "$prefix/fetch-pc"
expect_transport_error "$prefix/fetch-pc" "$install/lib/libhttpcontent.so.0"
echo "pkg-config (installed): ok"

# 2. pkg-config, build tree.
PKG_CONFIG_PATH=$build cc "$source/examples/c/fetch.c" $(PKG_CONFIG_PATH=$build pkg-config --cflags --libs httpcontent) \
  -Wl,-rpath,"$build" -o "$prefix/fetch-build"
expect_transport_error "$prefix/fetch-build" "$build/libhttpcontent.so.0"
echo "pkg-config (build tree): ok"

# 3. find_package from an outside project, with the imported target.
cmake -S "$source/Tests/c/external" -B "$prefix/ext" -G Ninja -DCMAKE_PREFIX_PATH="$install" >/dev/null
cmake --build "$prefix/ext" >/dev/null
expect_transport_error "$prefix/ext/fetch" "$install/lib/libhttpcontent.so.0"
grep -q "$build" "$install/lib/cmake/httpcontent/httpcontentConfig.cmake" && { echo "the installed config names the build folder"; exit 1; }
echo "find_package(httpcontent 0.1 CONFIG) + httpcontent::httpcontent: ok"

# 4. The version file refuses an incompatible version.
if cmake -S "$source/Tests/c/external" -B "$prefix/ext2" -G Ninja -DCMAKE_PREFIX_PATH="$install" \
     -DHC_WANT_VERSION=1.0 >"$prefix/ext2.log" 2>&1; then
  echo "find_package(httpcontent 1.0) should have failed"; exit 1
fi
grep -q "compatible with requested version \"1.0\"" "$prefix/ext2.log" || { cat "$prefix/ext2.log"; exit 1; }
echo "find_package(httpcontent 1.0 CONFIG) refused: ok"
