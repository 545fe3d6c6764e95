#!/usr/bin/env bash
# Runs the Swift tests under the sanitizers, each build in its own scratch folder:
#   AddressSanitizer (with LeakSanitizer) on the whole suite    -> .build-asan
#   ThreadSanitizer on the concurrency tests (--filter Concurrency) -> .build-tsan
#   bash scripts/sanitize.sh [asan|tsan]...    (default: both)
# A finding fails the run: ASan/TSan reports make the test process exit non-zero
# (TSan exits 66 after reporting; every report is also grepped). Logs go to .build-asan/test.log and .build-tsan/test.log.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null || exit 1
which=("$@")
[ ${#which[@]} -gt 0 ] || which=(asan tsan)
# Swift's crash handler would print its own backtrace over the sanitizer's report.
export SWIFT_BACKTRACE=enable=no
status=0

summary() { # log
  grep -E "^(✘|.*error:)|Test run with|Executed [0-9]+ tests|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: .*Sanitizer" "$1" | tail -12
}

for w in "${which[@]}"; do
  case $w in
    asan)
      echo "== swift test -sanitize=address (.build-asan)"
      mkdir -p .build-asan
      # The 1 GiB upload memory tests measure peak RSS, which ASan's shadow memory and
      # quarantine inflate: they run in the normal suite, not here.
      # --no-parallel: Swift Testing runs synchronous tests on the 2-thread cooperative pool of
      # this 2-core machine; with ASan's slowdown, blocking tests (timeouts, slow bodies) starve
      # the async ones, and a timing check (cancellation within 5 s) failed in 3 of 5 parallel
      # runs, never alone or serially. Races are TSan's job below.
      ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1} LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=1} \
        HC_SKIP_MEMORY_TESTS=1 \
        swift test --scratch-path .build-asan -Xswiftc -sanitize=address --no-parallel > .build-asan/test.log 2>&1
      rc=$?
      ;;
    tsan)
      echo "== swift test -sanitize=thread --filter Concurrency (.build-tsan)"
      mkdir -p .build-tsan
      TSAN_OPTIONS=${TSAN_OPTIONS:-second_deadlock_stack=1} \
        swift test --scratch-path .build-tsan -Xswiftc -sanitize=thread --filter Concurrency > .build-tsan/test.log 2>&1
      rc=$?
      ;;
    *) echo "unknown: $w (asan or tsan)"; exit 2 ;;
  esac
  summary ".build-$w/test.log"
  if grep -qE "ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: (Address|Leak|Thread)Sanitizer" ".build-$w/test.log"; then
    echo "$w: sanitizer findings, see .build-$w/test.log"; rc=1
  fi
  [ $rc -eq 0 ] && echo "$w: clean" || { echo "$w: FAILED (exit $rc)"; status=1; }
done
exit $status
