#!/usr/bin/env bash
# valgrind memcheck on the C test suite: each Tests/c test binary, linked against the real
# libhttpcontent.so.0 (built in build/ exactly as scripts/test.sh builds it), runs under
#   valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99
# Requirement: 0 errors and 0 bytes definitely lost for every binary, with no suppression. The
# python3 test servers the tests start are not traced (--trace-children=no). "Possibly lost"
# bytes are reported, not errors: the Swift runtime's generic-metadata cache (a process-lifetime
# map whose index is reached only through a tagged pointer) shows as 160 bytes in 3 blocks.
#   bash scripts/valgrind.sh [TEST...]     (default: every build/test_* binary)
# Logs: build/valgrind/<test>.log. Exit status 0 only when every binary is clean.
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
bash scripts/setup.sh >/dev/null || exit 1
if ! command -v valgrind >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq valgrind >/dev/null || exit 1
fi

{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build; } > /tmp/hc-valgrind-build.log 2>&1 \
  || { tail -40 /tmp/hc-valgrind-build.log; exit 1; }

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for t in build/test_*; do [ -x "$t" ] && tests+=("$(basename "$t")"); done
fi
mkdir -p build/valgrind
# The Swift runtime's crash handler and backtracer are not wanted under valgrind.
export SWIFT_BACKTRACE=enable=no
status=0
for t in "${tests[@]}"; do
  log=build/valgrind/$t.log
  start=$(date +%s)
  # HC_UNDER_VALGRIND: tests shrink what only measures speed (valgrind runs ~30x slower).
  HC_UNDER_VALGRIND=1 valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,possible \
           --errors-for-leak-kinds=definite --error-exitcode=99 --trace-children=no \
           --track-origins=yes --num-callers=30 \
           --log-file="$log" "build/$t" > "build/valgrind/$t.out" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  errors=$(grep -oE "ERROR SUMMARY: [0-9,]+ errors" "$log" | tail -1 | grep -oE "[0-9,]+" | tr -d ,)
  definite=$(grep -oE "definitely lost: [0-9,]+ bytes" "$log" | tail -1 | grep -oE "[0-9,]+" | tr -d ,)
  possible=$(grep -oE "possibly lost: [0-9,]+ bytes" "$log" | tail -1 | grep -oE "[0-9,]+" | tr -d ,)
  suppressed=$(grep -oE "suppressed: [0-9,]+ bytes in [0-9,]+ blocks" "$log" | tail -1)
  checks=$(tail -1 "build/valgrind/$t.out")
  printf "%-16s exit %-3s errors %-3s definitely lost %-6s possibly lost %-6s (%s) %4ss  [%s]\n" \
         "$t" "$rc" "${errors:-?}" "${definite:-0}" "${possible:-0}" "${suppressed:-no leaks suppressed}" "$secs" "$checks"
  if [ $rc -ne 0 ] || [ "${errors:-1}" != 0 ] || [ "${definite:-0}" != 0 ]; then
    status=1
    grep -E "^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|[0-9,]+ bytes in .* definitely)" "$log" | head -10
    echo "   see $log"
  fi
done
exit $status
