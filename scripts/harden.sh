#!/usr/bin/env bash
# Longer checks than scripts/test.sh, bounded in time (docs/hardening.md has the figures):
#   1. libFuzzer: every target in fuzz/ for FUZZ_SECONDS each (default 20), ASan + libFuzzer
#   2. valgrind memcheck on every C test binary: 0 errors, 0 bytes definitely lost
#   3. swift test under AddressSanitizer + LeakSanitizer (and, with --tsan, ThreadSanitizer on
#      the concurrency tests)
#   bash scripts/harden.sh            # ~5 min on 2 cores with warm builds
#   bash scripts/harden.sh --ci       # what .ci/run runs: fuzz 10 s per target + valgrind (~2-3 min)
#   bash scripts/harden.sh --tsan     # adds ThreadSanitizer
# FUZZ_SECONDS overrides the fuzz time. Installs valgrind if it is missing (apt).
# Ends with one line per check and exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
ci=0; tsan=0
for a in "$@"; do
  case $a in
    --ci) ci=1 ;;
    --tsan) tsan=1 ;;
    *) echo "usage: $0 [--ci] [--tsan]"; exit 2 ;;
  esac
done
seconds=${FUZZ_SECONDS:-$([ $ci -eq 1 ] && echo 10 || echo 20)}
# CI fuzzes with a fixed seed, so a red run can be replayed; local runs explore anew each time.
[ $ci -eq 0 ] || export FUZZ_SEED=${FUZZ_SEED:-1}
# CI: at most 20,000 inputs per target as well as the time limit, so the seeded smoke run is the
# same on every machine (the long, unbounded run is `bash scripts/harden.sh` or fuzz/run.sh).
[ $ci -eq 0 ] || export FUZZ_RUNS=${FUZZ_RUNS:-20000}

bash scripts/setup.sh || exit 1
if ! command -v valgrind >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "harden: installing valgrind"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq valgrind >/dev/null || exit 1
fi

results=()
status=0
step() { # name command...
  local name=$1; shift
  local start=$(date +%s)
  echo "== $name"
  "$@"
  local rc=$?
  local secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then results+=("$name: ok (${secs}s)"); else results+=("$name: FAILED (${secs}s)"); status=1; fi
}

step "fuzz ${seconds}s per target" bash fuzz/run.sh "$seconds"
step "valgrind C tests" bash scripts/valgrind.sh
if [ $ci -eq 0 ]; then
  step "swift test ASan" bash scripts/sanitize.sh asan
  [ $tsan -eq 0 ] || step "swift test TSan (concurrency)" bash scripts/sanitize.sh tsan
fi

echo "== harden summary"
printf '%s\n' "${results[@]}"
exit $status
