#!/usr/bin/env bash
# The library exports exactly the hc_* functions the headers declare (the public one and the
# one for bindings), and nothing else (no Swift symbols), and needs no Swift runtime library.
#   check_exports.sh LIBRARY HEADER...
set -euo pipefail
lib=$1
shift
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^$' | sort -u)
declared=$(cat "$@" | grep -oE 'HC_EXTERN[^;(]*\bhc_[a-z0-9_]+\(' | grep -oE 'hc_[a-z0-9_]+\($' | tr -d '(' | sort -u)
status=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
[ -z "$extra" ] || { echo "exported but not declared:"; echo "$extra"; status=1; }
[ -z "$missing" ] || { echo "declared but not exported:"; echo "$missing"; status=1; }
if ldd "$lib" | grep -i swift; then echo "the library needs a Swift runtime library"; status=1; fi
soname=$(objdump -p "$lib" | awk '/SONAME/{print $2}')
[ "$soname" = "libhttpcontent.so.0" ] || { echo "SONAME is '$soname'"; status=1; }
n=$(echo "$declared" | wc -l)
[ $status -eq 0 ] && echo "exports match the header: $n hc_* functions, no Swift runtime needed"
exit $status
