"""Compares two junit-xml reports of one suite, per test id: of the tests that pass natively,
how many still pass with httpcontent underneath. Prints "kept K of N native passes", the misses
(with the first line of each failure), and the tests that pass only with httpcontent; exits 1
when K/N is below the threshold (percent)."""

import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    out = {}
    for case in ET.parse(path).iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, detail = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, detail = child.tag, (child.get("message") or "").splitlines()[:1]
                detail = detail[0] if detail else ""
                break
            if child.tag == "skipped":
                outcome = "skipped"
        out[test_id] = (outcome, detail)
    return out


def main(name, native_xml, hc_xml, threshold):
    native, hc = outcomes(native_xml), outcomes(hc_xml)
    passes = sorted(t for t, (o, _) in native.items() if o == "passed")
    kept = [t for t in passes if hc.get(t, ("missing", ""))[0] == "passed"]
    misses = [t for t in passes if t not in set(kept)]
    gained = sorted(t for t, (o, _) in hc.items() if o == "passed" and native.get(t, ("",))[0] != "passed")
    share = 100.0 * len(kept) / len(passes) if passes else 0.0
    print(f"{name}: kept {len(kept)} of {len(passes)} native passes ({share:.1f} %, threshold {threshold} %)")
    for t in misses:
        outcome, detail = hc.get(t, ("not run", ""))
        print(f"  miss  {t}  [{outcome}] {detail[:160]}")
    for t in gained:
        print(f"  gain  {t}  (fails or skips natively)")
    return 0 if passes and share >= float(threshold) else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
