#!/usr/bin/env bash
# Every public header compiles alone, first in its translation unit, as C11 and as C++11, with
# -Wall -Wextra -Werror -pedantic: a family header names what it needs itself, and the umbrella
# and the binding header add nothing a C or C++ compiler warns about.
#   check_headers.sh SOURCE_INCLUDE_DIR GENERATED_INCLUDE_DIR
set -euo pipefail
src=$1 gen=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cxx=$(command -v c++ || true)
n=0 status=0
for header in "$src"/httpcontent.h "$src"/httpcontent_binding.h "$src"/httpcontent/*.h "$gen"/httpcontent/*.h; do
  name=${header#"$src"/}; name=${name#"$gen"/}
  printf '#include "%s"\nint main(void) { return 0; }\n' "$name" > "$work/alone.c"
  cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$src" -I"$gen" -fsyntax-only "$work/alone.c" \
    || { echo "$name does not compile alone as C"; status=1; }
  if [ -n "$cxx" ]; then
    cp "$work/alone.c" "$work/alone.cpp"
    "$cxx" -std=c++11 -Wall -Wextra -Werror -pedantic -I"$src" -I"$gen" -fsyntax-only "$work/alone.cpp" \
      || { echo "$name does not compile alone as C++"; status=1; }
  fi
  n=$((n + 1))
done
# Every family header is in the umbrella (version.h and common.h come through the others).
for header in "$src"/httpcontent/*.h; do
  name=httpcontent/$(basename "$header")
  case "$name" in httpcontent/common.h|httpcontent/error.h) continue ;; esac
  grep -q "#include \"$name\"" "$src/httpcontent.h" || { echo "httpcontent.h does not include $name"; status=1; }
done
[ $status -eq 0 ] && echo "$n headers compile alone as C11${cxx:+ and C++11}"
exit $status
