"""Property-list decoding from Python (issue 16): `hc.Plist()` against `plistlib.loads`, on the
same ~10 MB document in the binary and the XML format, fetched from a local server.

    PYTHONPATH=bindings/python python3 bench/plist_bench.py [--rounds N] [--mb SIZE] [--output BENCHMARKS.md]

Contestants are declared as data below (name, format, how a document is fetched and decoded,
settings); the round-robin runner of `pyharness.py` times each once per round, interleaved, so
machine load hits them alike; the report is the median per contestant and the ratio plistlib /
hc per format from the same run (above 1: hc is faster). Both contestants fetch the same bytes through the same
library transport, so the ratio compares decoding: `hc.Plist()` (a binary plist read straight
from its bytes into a pickle, an XML one parsed by libplist then written as one; then one
pickle load) with `hc.Bytes()` followed by `plistlib.loads(body)`. Each result is checked equal to
plistlib's. The server is Python's ThreadingHTTPServer on 127.0.0.1 serving the two files.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import plistlib
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyharness  # noqa: E402
import report_common  # noqa: E402

import httpcontent as hc  # noqa: E402

SECTION = "## Property lists (issue 16)"


def document(mb: float) -> dict:
    """Records with every plist type, repeated to about `mb` MB in the binary format."""
    n = int(mb * 1e6 / 165)
    return {"items": [{"id": i, "name": f"item {i} ☺", "score": i * 1.25, "ok": i % 2 == 0,
                       "when": datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=i),
                       "blob": bytes([i % 256]) * 8, "tags": ["a", "b", "c"], "neg": -i}
                      for i in range(n)]}


def contestants(client: hc.Client, urls: dict[str, str]) -> list[dict]:
    plist_handler, bytes_handler = hc.Plist(max_size=1 << 30), hc.Bytes()

    def hc_plist(url: str):
        return client.get(url, handler=plist_handler).content

    def plistlib_loads(url: str):
        return plistlib.loads(client.get(url, handler=bytes_handler).content)

    out = []
    for fmt in ("binary", "xml"):
        out.append({"name": f"hc-{fmt}", "format": fmt, "run": functools.partial(hc_plist, urls[fmt]),
                    "settings": "client.get(url, handler=hc.Plist()).content"})
        out.append({"name": f"plistlib-{fmt}", "format": fmt, "run": functools.partial(plistlib_loads, urls[fmt]),
                    "settings": "plistlib.loads(client.get(url, handler=hc.Bytes()).content)"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--output", default=None, help="BENCHMARKS.md to write the section into")
    args = ap.parse_args()

    doc = document(args.mb)
    expected = plistlib.loads(plistlib.dumps(doc, fmt=plistlib.FMT_BINARY))
    sizes = {}
    types = {".bplist": "application/x-bplist", ".xml": "application/x-plist"}
    with pyharness.file_server("plist-bench-", types) as (folder, base):
        for fmt, name, pfmt in (("binary", "doc.bplist", plistlib.FMT_BINARY), ("xml", "doc.xml", plistlib.FMT_XML)):
            data = plistlib.dumps(doc, fmt=pfmt)
            sizes[fmt] = len(data)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        urls = {"binary": f"{base}/doc.bplist", "xml": f"{base}/doc.xml"}
        with hc.Client(timeout=300) as client:
            cs = contestants(client, urls)
            for c in cs:  # warm-up, and the check
                got = c["run"]()
                want = expected if c["format"] == "binary" else plistlib.loads(plistlib.dumps(doc))
                assert got == want, c["name"]
            times, _ = pyharness.run_rounds(cs, args.rounds)

    med = {n: statistics.median(v) for n, v in times.items()}
    lines = [SECTION, "",
             f"Measured by `bench/plist_bench.py` ({args.rounds} interleaved rounds, medians), "
             f"{datetime.date.today().isoformat()}, {report_common.cpu_model()}, load average (1/5/15 min) "
             "at the end %.2f %.2f %.2f: the ratios are the figure, not the seconds." % os.getloadavg(),
             f"Document: {len(doc['items'])} records of every plist type; binary {sizes['binary'] / 1e6:.1f} MB, "
             f"XML {sizes['xml'] / 1e6:.1f} MB, served by Python's http.server on 127.0.0.1.", "",
             "| Format | Contestant | Settings | Median s | Rounds (s) |", "|---|---|---|---|---|"]
    for c in cs:
        lines.append(f"| {c['format']} | `{c['name']}` | `{c['settings']}` | {med[c['name']]:.3f} | "
                     + ", ".join(f"{v:.3f}" for v in times[c["name"]]) + " |")
    lines += ["", "| Format | plistlib / hc (target ≥ 1.5) | per round |", "|---|---|---|"]
    for fmt in ("binary", "xml"):
        per = [p / h for p, h in zip(times[f"plistlib-{fmt}"], times[f"hc-{fmt}"])]
        lines.append(f"| {fmt} | **{med[f'plistlib-{fmt}'] / med[f'hc-{fmt}']:.2f}×** | "
                     + ", ".join(f"{x:.2f}" for x in per) + " |")
    return pyharness.finish(SECTION, lines, args.output)


if __name__ == "__main__":
    sys.exit(main())
