"""Instructions per request, from callgrind: runs a bench/requests.c mode twice under
`valgrind --tool=callgrind` with two request counts, and reports the difference divided by the
difference in requests (so start-up, library loading and teardown cancel out), in total, per
shared object and per function (self instructions).

    python3 requests_profile.py REQUESTS_BINARY URL [--small 200] [--large 1200]
                                [--out PROFILE.tsv] [--top 6] [--keep DIR] MODE[@CONCURRENCY] ...

MODE is a mode of requests.c, py:MODE for a mode of request_rates.py run by this Python
(PYTHONPATH and HTTPCONTENT_LIBRARY are passed on), or aio:MODE for one of async_modes.py
(hc-arequest, hc-amap, aiohttp). Prints a readable breakdown for every mode; with --out, writes one TSV row per mode (program,
concurrency, ir_per_request, by_object, top) for suites/_requests_report.py. Callgrind counts user-space
instructions only: time in system calls is not in these figures.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*?)(?:\s+\[(.*)\])?\s*$")


def annotate(path: str) -> tuple[int, dict[tuple[str, str], int]]:
    """(total Ir, {(function, object): self Ir})."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", path],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    funcs: dict[tuple[str, str], int] = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        name = m.group(2)
        if name.startswith("PROGRAM TOTALS"):
            total = n
            continue
        fn = name.split(":", 1)[1] if ":" in name else name
        obj = os.path.basename(m.group(3) or "?")
        funcs[(fn, obj)] = funcs.get((fn, obj), 0) + n
    return total, funcs


def demangle(names: list[str]) -> dict[str, str]:
    tool = shutil.which("swift-demangle") or ("/opt/swift/usr/bin/swift-demangle"
                                              if os.path.exists("/opt/swift/usr/bin/swift-demangle") else None)
    swift = [n for n in names if n.startswith("$s")]
    if not tool or not swift:
        return {}
    out = subprocess.run([tool, "--simplified"], input="\n".join(swift), capture_output=True,
                         text=True).stdout.splitlines()
    return dict(zip(swift, out)) if len(out) == len(swift) else {}


def short_obj(obj: str) -> str:
    if obj.startswith("python") or obj.startswith("libpython"):
        return "python"
    if obj.startswith("_ctypes") or obj.startswith("libffi"):
        return "ctypes/ffi"
    if obj.startswith("pycurl"):
        return "pycurl"
    for prefix, label in (("libcurl", "libcurl"), ("libhttpcontent", "httpcontent"),
                          ("libc.so", "libc"), ("ld-linux", "ld.so"), ("libz", "zlib"),
                          ("libnghttp2", "nghttp2"), ("libssl", "ssl"), ("libcrypto", "crypto")):
        if obj.startswith(prefix):
            return label
    return obj


def profile(binary: str, url: str, mode: str, conc: int, small: int, large: int,
            tmp: str) -> tuple[float, dict[str, float], list[tuple[str, str, float]]]:
    runs = []
    for n in (small, large):
        out = os.path.join(tmp, f"cg.{mode.replace(':', '-')}.{conc}.{n}.out")
        if mode.startswith("py:"):  # a mode of request_rates.py, in this Python
            argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "request_rates.py"), mode[3:]]
        elif mode.startswith("aio:"):  # a native-asyncio mode of async_modes.py
            argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "async_modes.py"), mode[4:]]
        else:
            argv = [binary, mode]
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               *argv, url, str(n), str(conc), "1024"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{mode}@{conc} x{n} failed: {proc.stderr[-500:]}")
        runs.append(annotate(out))
    (t1, f1), (t2, f2) = runs
    per = (t2 - t1) / (large - small)
    delta: dict[tuple[str, str], float] = {}
    for key in set(f1) | set(f2):
        d = (f2.get(key, 0) - f1.get(key, 0)) / (large - small)
        if abs(d) >= 1:
            delta[key] = d
    by_obj: dict[str, float] = defaultdict(float)
    for (fn, obj), d in delta.items():
        by_obj[short_obj(obj)] += d
    names = demangle([fn for fn, _ in delta])
    top = sorted(((names.get(fn, fn), short_obj(obj), d) for (fn, obj), d in delta.items()),
                 key=lambda x: -x[2])
    return per, dict(by_obj), top


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("url")
    ap.add_argument("modes", nargs="+")
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=1200)
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--out")
    ap.add_argument("--keep", help="keep the callgrind files in this folder")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        print("valgrind not installed", file=sys.stderr)
        return 3
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = a.keep or scratch
        os.makedirs(tmp, exist_ok=True)
        for spec in a.modes:
            mode, _, conc = spec.partition("@")
            conc_n = int(conc or 1)
            per, by_obj, top = profile(a.binary, a.url, mode, conc_n, a.small, a.large, tmp)
            print(f"== {mode} @ {conc_n}: {per:,.0f} instructions per request")
            for obj, d in sorted(by_obj.items(), key=lambda x: -x[1]):
                if abs(d) >= 50:
                    print(f"   {obj:14s} {d:10,.0f}")
            for fn, obj, d in top[:25]:
                print(f"   {d:9,.0f}  {obj:12s} {fn[:110]}")
            objs = ", ".join(f"{o} {d:,.0f}" for o, d in sorted(by_obj.items(), key=lambda x: -x[1])
                             if d >= 500)
            # What the wrapper adds is what matters: leave libcurl, libc and the loader out.
            own = [(fn, o, d) for fn, o, d in top if o not in ("libcurl", "libc", "ld.so", "?", "???")]
            tops = "; ".join(f"`{fn[:60]}` ({o}) {d:,.0f}" for fn, o, d in own[:a.top])
            rows.append((mode, conc_n, per, objs, tops))
            sys.stdout.flush()
            if a.out:  # after every mode, so that a run cut short keeps what it measured
                with open(a.out + ".tmp", "w") as f:
                    f.write("program\tconcurrency\tir_per_request\tby_object\ttop\n")
                    for row in rows:
                        f.write("%s\t%d\t%.0f\t%s\t%s\n" % row)
                os.replace(a.out + ".tmp", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
