#!/usr/bin/env bash
# Runs every test suite: Swift (swift test), C (ctest, against the built libhttpcontent.so.0),
# Python (pytest, through ctypes against the same library) and the `hc` command line (pytest
# running the binary). Ends with one line of totals.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
logs=$(mktemp -d)
status=0

echo "== swift test"
swift test 2>&1 | tee "$logs/swift.log" | grep -E "^(✘|.*error:)|Test run with|Executed [0-9]+ tests" ; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== C library build and ctest"
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build; } > "$logs/build.log" 2>&1 \
  || { cat "$logs/build.log"; status=1; }
(cd build && ctest --output-on-failure 2>&1) | tee "$logs/ctest.log" | tail -4; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== pytest"
python3 -m pytest -q bindings/python/tests bench/harness 2>&1 | tee "$logs/pytest.log" | tail -4; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== hc command line (Tests/cli: runs the binary)"
swift build --product hc > "$logs/hc-build.log" 2>&1 || { tail -30 "$logs/hc-build.log"; status=1; }
HC_BIN="$PWD/.build/debug/hc" python3 -m pytest -q Tests/cli 2>&1 | tee "$logs/cli.log" | tail -4; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# Totals across the three fronts and the CLI, from each runner's own closing line.
swift_passed=$(grep -oE "Test run with [0-9]+ tests?" "$logs/swift.log" | grep -oE "[0-9]+" | tail -1)
swift_failed=$(grep -oE "with [0-9]+ issues?" "$logs/swift.log" | grep -oE "[0-9]+" | tail -1)
xctest=$(grep -oE "Executed [0-9]+ tests?, with [0-9]+ failures?" "$logs/swift.log" | tail -1)
xc_passed=$(echo "$xctest" | grep -oE "[0-9]+" | head -1)
xc_failed=$(echo "$xctest" | grep -oE "[0-9]+" | tail -1)
ctest_line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$logs/ctest.log" | tail -1)
ctest_failed=$(echo "$ctest_line" | grep -oE "[0-9]+ tests failed" | grep -oE "[0-9]+")
ctest_total=$(echo "$ctest_line" | grep -oE "out of [0-9]+" | grep -oE "[0-9]+")
py_passed=$(grep -oE "[0-9]+ passed" "$logs/pytest.log" | tail -1 | grep -oE "[0-9]+")
py_failed=$(grep -oE "[0-9]+ failed" "$logs/pytest.log" | tail -1 | grep -oE "[0-9]+")
py_skipped=$(grep -oE "[0-9]+ skipped" "$logs/pytest.log" | tail -1 | grep -oE "[0-9]+")
cli_passed=$(grep -oE "[0-9]+ passed" "$logs/cli.log" | tail -1 | grep -oE "[0-9]+")
cli_failed=$(grep -oE "[0-9]+ failed" "$logs/cli.log" | tail -1 | grep -oE "[0-9]+")
cli_skipped=$(grep -oE "[0-9]+ skipped" "$logs/cli.log" | tail -1 | grep -oE "[0-9]+")
passed=$(( ${swift_passed:-0} + ${xc_passed:-0} - ${xc_failed:-0} + ${ctest_total:-0} - ${ctest_failed:-0} + ${py_passed:-0} + ${cli_passed:-0} ))
failed=$(( ${swift_failed:-0} + ${xc_failed:-0} + ${ctest_failed:-0} + ${py_failed:-0} + ${cli_failed:-0} ))
py_skipped=$(( ${py_skipped:-0} + ${cli_skipped:-0} ))
[ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
rm -rf "$logs"
echo "total: $passed passed, $failed failed, ${py_skipped:-0} skipped"
exit $status
