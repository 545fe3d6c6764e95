#!/usr/bin/env bash
# Every public header compiles alone, first in its translation unit, as C11 and as C++11, with
# -Wall -Wextra -Werror -pedantic: a family header names what it needs itself, and the umbrella
# and the binding header add nothing a C or C++ compiler warns about.
#   check_headers.sh INCLUDE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cxx=$(command -v c++ || true)
n=0 status=0
for header in "$src"/httpcontent.h "$src"/httpcontent_binding.h "$src"/httpcontent/*.h; do
  name=${header#"$src"/}
  printf '#include "%s"\nint main(void) { return 0; }\n' "$name" > "$work/alone.c"
  cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$src" -fsyntax-only "$work/alone.c" \
    || { echo "$name does not compile alone as C"; status=1; }
  if [ -n "$cxx" ]; then
    cp "$work/alone.c" "$work/alone.cpp"
    "$cxx" -std=c++11 -Wall -Wextra -Werror -pedantic -I"$src" -fsyntax-only "$work/alone.cpp" \
      || { echo "$name does not compile alone as C++"; status=1; }
  fi
  n=$((n + 1))
done
# The umbrella holds every family (ctest's umbrella_header checks it is current); with each
# family's guard kept, including the umbrella and a family header, in either order, is fine.
printf '#include "httpcontent/json.h"\n#include "httpcontent.h"\n#include "httpcontent/cache.h"\nint main(void) { return 0; }\n' > "$work/both.c"
cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$src" -fsyntax-only "$work/both.c" \
  || { echo "httpcontent.h and family headers do not compile together"; status=1; }
[ $status -eq 0 ] && echo "$n headers compile alone as C11${cxx:+ and C++11}"
exit $status
