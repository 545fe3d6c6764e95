"""XML from Python (issue 16): path streaming and whole trees, against ElementTree and lxml.

    PYTHONPATH=bindings/python python3 bench/xml_bench.py [--rounds N] [--mb SIZE] [--tree-mb SIZE]

Two benchmarks on documents generated here (an Atom feed: default namespace and a prefixed one,
attributes, entities, CDATA, comments, non-ASCII text), served by Python's ThreadingHTTPServer on
127.0.0.1:

- **Path streaming** (`--mb`, default 100 MB): every `feed/entry` element, complete, one at a
  time, in flat memory. `hc` is `client.iter_xml(url, path="feed/entry")` (libcurl + libxml2's
  push parser, elements as `ET.Element`s in batches); the anchors read the same URL with
  `urllib.request.urlopen` and parse the stream with `ET.iterparse` (events start/end, the root
  cleared after each entry: the documented idiom) and lxml's `etree.iterparse(events=("end",),
  tag=...)` (each entry cleared and its finished siblings deleted: lxml's documented idiom).
  Target: hc >= 1x lxml iterparse.
- **Whole tree** (`--tree-mb`, default 20 MB): `client.get(url, handler=hc.XML()).content`
  against `ET.fromstring` and `lxml.etree.fromstring` of the same bytes fetched with
  `hc.Bytes()` (same transport: the ratio compares parsing).

Contestants are data (name, benchmark, callable, settings); the round-robin runner of
`pyharness.py` times each once per round, interleaved, so machine load hits them alike.
Reported: wall and CPU seconds per contestant (median), and per round the ratio anchor / hc
(above 1: hc is faster) with its median and min-max. Each contestant's element count is checked against the generator's.

lxml is taken from the bench's pip cache (BENCH_PYDEPS, default ~/.cache/httpcontent-bench/pydeps),
installed there with pip when missing; without it the lxml rows are left out, with the reason.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyharness  # noqa: E402
import report_common  # noqa: E402

import httpcontent as hc  # noqa: E402

SECTION = "## XML (issue 16)"
ATOM = "http://www.w3.org/2005/Atom"
MEDIA = "http://search.yahoo.com/mrss/"
ENTRY = "{%s}entry" % ATOM
PYDEPS = os.environ.get("BENCH_PYDEPS", os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                                                     "httpcontent-bench", "pydeps"))


def lxml_etree() -> tuple[Any, str]:
    """lxml.etree from the bench's pip cache (installed there if missing), or None and why."""
    if PYDEPS not in sys.path:
        sys.path.append(PYDEPS)
    try:
        import lxml.etree as etree
    except ImportError:
        print(f"lxml missing: pip install --target {PYDEPS} lxml", file=sys.stderr)
        rc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                             "--target", PYDEPS, "lxml"], capture_output=True, timeout=300).returncode
        if rc != 0:
            return None, "not measured (pip install lxml failed)"
        try:
            import lxml.etree as etree
        except ImportError:
            return None, "not measured (lxml does not import)"
    version = ".".join(map(str, etree.LXML_VERSION[:3]))
    return etree, f"lxml {version} (libxml2 {'.'.join(map(str, etree.LIBXML_VERSION))}) from {PYDEPS}"


def entry(i: int) -> bytes:
    return (f'<entry xml:lang="en"><id>urn:uuid:{i:08d}</id><title type="text">Entry {i} &lt;{i % 7}&gt;</title>'
            f'<updated>2024-01-{i % 28 + 1:02d}T00:00:00Z</updated>'
            f'<link rel="alternate" href="http://example.com/{i}"/><!-- c{i} -->'
            f'<summary>Caf\u00e9 {i} &#x2014; <![CDATA[raw <b>{i}</b>]]> text</summary>'
            f'<media:thumbnail url="http://example.com/{i}.png" width="{i % 100}"/></entry>\n').encode()


def write_feed(path: str, mb: float) -> int:
    """An Atom feed of about `mb` MB at `path`; returns its number of entries."""
    head = (f'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="{ATOM}" xmlns:media="{MEDIA}">'
            f'<title>Feed</title>\n').encode()
    target, n, size = int(mb * 1e6), 0, len(head)
    with open(path, "wb") as f:
        f.write(head)
        while size < target:
            block = b"".join(entry(i) for i in range(n, n + 1000))
            f.write(block)
            size += len(block)
            n += 1000
        f.write(b"</feed>\n")
    return n


def contestants(client: hc.Client, etree: Any, feed: str, tree: str) -> list[dict[str, Any]]:
    bytes_handler = hc.Bytes()

    def hc_stream() -> int:
        return sum(1 for _ in client.iter_xml(feed, path="feed/entry"))

    def et_iterparse() -> int:
        n, root = 0, None
        with urllib.request.urlopen(feed) as resp:
            for event, el in ET.iterparse(resp, events=("start", "end")):
                if root is None:
                    root = el
                elif event == "end" and el.tag == ENTRY:
                    n += 1
                    root.clear()
        return n

    def lxml_iterparse() -> int:
        n = 0
        with urllib.request.urlopen(feed) as resp:
            for _, el in etree.iterparse(resp, events=("end",), tag=ENTRY):
                n += 1
                el.clear()
                while el.getprevious() is not None:
                    del el.getparent()[0]
        return n

    def count(root: Any) -> int:
        return sum(1 for e in root if e.tag == ENTRY)

    def hc_tree() -> int:
        return count(client.get(tree, handler=hc.XML()).content)

    def et_tree() -> int:
        return count(ET.fromstring(client.get(tree, handler=bytes_handler).content))

    def lxml_tree() -> int:
        return count(etree.fromstring(client.get(tree, handler=bytes_handler).content))

    out = [
        {"name": "hc-iter_xml", "bench": "stream", "run": hc_stream,
         "settings": 'client.iter_xml(url, path="feed/entry")'},
        {"name": "ET-iterparse", "bench": "stream", "run": et_iterparse,
         "settings": "ET.iterparse(urlopen(url), events=(start, end)), root.clear() per entry"},
        {"name": "hc-XML", "bench": "tree", "run": hc_tree, "settings": "client.get(url, handler=hc.XML()).content"},
        {"name": "ET-fromstring", "bench": "tree", "run": et_tree,
         "settings": "ET.fromstring(client.get(url, handler=hc.Bytes()).content)"},
    ]
    if etree is not None:
        out.insert(2, {"name": "lxml-iterparse", "bench": "stream", "run": lxml_iterparse,
                       "settings": "etree.iterparse(urlopen(url), events=(end,), tag=entry), clear + del previous"})
        out.append({"name": "lxml-fromstring", "bench": "tree", "run": lxml_tree,
                    "settings": "etree.fromstring(client.get(url, handler=hc.Bytes()).content)"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mb", type=float, default=100.0, help="size of the streamed feed")
    ap.add_argument("--tree-mb", type=float, default=20.0, help="size of the whole-tree document")
    ap.add_argument("--output", default=None, help="BENCHMARKS.md to write the section into")
    args = ap.parse_args()

    etree, lxml_note = lxml_etree()
    with pyharness.file_server("xml-bench-", {".xml": "application/atom+xml"}) as (folder, base):
        counts = {"stream": write_feed(os.path.join(folder, "feed.xml"), args.mb),
                  "tree": write_feed(os.path.join(folder, "tree.xml"), args.tree_mb)}
        sizes = {b: os.path.getsize(os.path.join(folder, f"{b if b == 'tree' else 'feed'}.xml")) for b in counts}

        def check(c: dict[str, Any], n: int) -> None:
            assert n == counts[c["bench"]], (c["name"], n, counts[c["bench"]])

        with hc.Client(timeout=600) as client:
            cs = contestants(client, etree, f"{base}/feed.xml", f"{base}/tree.xml")
            wall, cpu = pyharness.run_rounds(cs, args.rounds, check)

    med = {k: statistics.median(v) for k, v in wall.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    lines = [SECTION, "",
             f"Measured by `bench/xml_bench.py` ({args.rounds} interleaved rounds), "
             f"{time.strftime('%Y-%m-%d')}, {report_common.cpu_model()}. Streamed feed: "
             f"{sizes['stream'] / 1e6:.0f} MB, {counts['stream']} entries; tree document: "
             f"{sizes['tree'] / 1e6:.0f} MB, {counts['tree']} entries; served by Python's http.server "
             f"on 127.0.0.1. lxml: {lxml_note}.", "",
             "| Benchmark | Contestant | Settings | Median s (wall) | Median s (CPU) |", "|---|---|---|---|---|"]
    for c in cs:
        lines.append(f"| {c['bench']} | `{c['name']}` | `{c['settings']}` | {med[c['name']]:.3f} | {cmed[c['name']]:.3f} |")
    lines += ["", "| Benchmark | Ratio (anchor / hc, wall) | Median | Min-max | Per round |", "|---|---|---|---|---|"]
    for bench, mine in (("stream", "hc-iter_xml"), ("tree", "hc-XML")):
        for c in cs:
            if c["bench"] != bench or c["name"] == mine:
                continue
            per = [a / b for a, b in zip(wall[c["name"]], wall[mine])]
            target = " (target >= 1)" if c["name"] == "lxml-iterparse" else ""
            lines.append(f"| {bench} | {c['name']} / {mine}{target} | **{statistics.median(per):.2f}x** | "
                         f"{min(per):.2f}-{max(per):.2f} | " + ", ".join(f"{x:.2f}" for x in per) + " |")
    return pyharness.finish(SECTION, lines, args.output)


if __name__ == "__main__":
    sys.exit(main())
