#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/Package.swift) and runs each for SECONDS (default 60).
#   bash fuzz/run.sh [SECONDS] [TARGET...]
# Seeds: fuzz/corpus/<target>/ (committed, read only here). New inputs libFuzzer finds go to
# fuzz/.work/corpus/<target>/ (ignored by git; kept between runs). A crash, leak, hang or failed
# check writes the input to fuzz/crashes/<target>-crash-<sha1> (ignored by git): reproduce it
# with `fuzz/.build/release/<target> fuzz/crashes/<file>`, fix the library, and add the input to
# Tests/HTTPContentTests/FuzzRegressionTests.swift.
# Prints one line per target with libFuzzer's final figures (runs, exec/s, cov, ft, corpus) and
# writes them to fuzz/.work/summary.txt. Exit status: 0 when no target failed.
# FUZZ_SEED=N makes libFuzzer's choices repeatable (CI sets it); default: a random seed.
# FUZZ_RUNS=N also stops each target after N inputs (CI sets it), so a seeded run tries the same
# inputs on a fast machine as on a slow one: CI's verdict does not depend on the machine's speed.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz-text fuzz-mediatype fuzz-image fuzz-form fuzz-json fuzz-records fuzz-plist fuzz-pixels fuzz-xml fuzz-cache-entry)

# ASan + libFuzzer; fall back to libFuzzer alone if the sanitizer runtime cannot be linked.
sanitizers=fuzzer,address
build() { swift build --package-path fuzz -c release -Xswiftc -sanitize="$1" -Xswiftc -parse-as-library 2>&1; }
if ! out=$(build $sanitizers); then
  echo "$out" | tail -20
  echo "fuzz: building with -sanitize=$sanitizers failed; trying -sanitize=fuzzer alone" >&2
  sanitizers=fuzzer
  out=$(build $sanitizers) || { echo "$out" | tail -40; exit 2; }
fi
bin=fuzz/.build/release

# Swift's crash handler would otherwise catch the signal before libFuzzer saves the input.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
mkdir -p fuzz/crashes fuzz/.work
: > fuzz/.work/summary.txt
status=0
for t in "${targets[@]}"; do
  work=fuzz/.work/corpus/$t
  mkdir -p "$work" "fuzz/corpus/$t"
  log=fuzz/.work/$t.log
  "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="fuzz/crashes/$t-" ${FUZZ_SEED:+-seed=$FUZZ_SEED} ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} > "$log" 2>&1
  rc=$?
  done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1)
  runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$")
  eps=$(grep -oE "stat::average_exec_per_sec: *[0-9]+" "$log" | grep -oE "[0-9]+$")
  cov=$(echo "$done_line" | grep -oE "cov: [0-9]+" | grep -oE "[0-9]+")
  ft=$(echo "$done_line" | grep -oE "ft: [0-9]+" | grep -oE "[0-9]+")
  corp=$(echo "$done_line" | grep -oE "corp: [0-9]+/[0-9]+[a-zA-Z]*" | cut -d' ' -f2)
  if [ $rc -eq 0 ]; then result=ok; else result="FAILED (exit $rc, see $log)"; status=1; fi
  line=$(printf "%-15s %4ss  runs %-10s exec/s %-7s cov %-5s ft %-6s corpus %-10s %s" \
         "$t" "$seconds" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result")
  echo "$line" | tee -a fuzz/.work/summary.txt
  if [ $rc -ne 0 ]; then
    grep -E "FUZZ CHECK FAILED|ERROR:|SUMMARY:|Test unit written" "$log" | head -8
  fi
done
echo "sanitizers: $sanitizers" >> fuzz/.work/summary.txt
exit $status
