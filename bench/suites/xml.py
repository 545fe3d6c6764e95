"""XML from Python (issue 16): path streaming and whole trees, against ElementTree and lxml.

    bash bench/xml.sh [--rounds N] [--mb SIZE] [--tree-mb SIZE] [--no-write]

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

Contestants are data (name, callable, settings, tags={"benchmark": ...}) timed in-process by the
harness's runner once per round, interleaved, so machine load hits them alike.
Reported: wall and CPU seconds per contestant (median), and per round the ratio anchor / hc
(above 1: hc is faster) with its median and min-max. Each contestant's element count is checked against the generator's.

lxml is taken from the bench's pip cache (BENCH_PYDEPS, default ~/.cache/httpcontent-bench/pydeps),
installed there with pip when missing; without it the lxml rows are left out, with the reason.
"""

from __future__ import annotations

import importlib
import os
import sys
import urllib.request
import xml.etree.ElementTree as ET
from typing import Any

from harness import Contestant, Ratio, Session, library, log, parse, servers, tables

SECTION = "## XML (issue 16)"
ATOM = "http://www.w3.org/2005/Atom"
MEDIA = "http://search.yahoo.com/mrss/"
ENTRY = "{%s}entry" % ATOM


def lxml_etree(pydeps: str) -> tuple[Any, str]:
    """lxml.etree from the bench's pip cache (installed there if missing), or None and why."""
    if pydeps not in sys.path:
        sys.path.append(pydeps)
    try:
        import lxml.etree as etree
    except ImportError:
        log(f"lxml missing: pip install --target {pydeps} lxml")
        if not library.pip_into_cache(pydeps, "lxml"):
            return None, "not measured (pip install lxml failed)"
        importlib.invalidate_caches()   # the folder may not have existed when it joined sys.path
        try:
            import lxml.etree as etree
        except ImportError:
            return None, "not measured (lxml does not import)"
    version = ".".join(map(str, etree.LXML_VERSION[:3]))
    return etree, f"lxml {version} (libxml2 {'.'.join(map(str, etree.LIBXML_VERSION))}) from {pydeps}"


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


def contestants(client: Any, etree: Any, feed: str, tree: str) -> list[Contestant]:
    import httpcontent as hc
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
        Contestant("hc-iter_xml", 'client.iter_xml(url, path="feed/entry")', call=hc_stream, tags={"benchmark": "stream"}),
        Contestant("ET-iterparse", "ET.iterparse(urlopen(url), events=(start, end)), root.clear() per entry",
                   call=et_iterparse, tags={"benchmark": "stream"}),
        Contestant("hc-XML", "client.get(url, handler=hc.XML()).content", call=hc_tree, tags={"benchmark": "tree"}),
        Contestant("ET-fromstring", "ET.fromstring(client.get(url, handler=hc.Bytes()).content)", call=et_tree,
                   tags={"benchmark": "tree"}),
    ]
    if etree is not None:
        out.insert(2, Contestant("lxml-iterparse", "etree.iterparse(urlopen(url), events=(end,), tag=entry), clear + del previous",
                                 call=lxml_iterparse, tags={"benchmark": "stream"}))
        out.append(Contestant("lxml-fromstring", "etree.fromstring(client.get(url, handler=hc.Bytes()).content)",
                              call=lxml_tree, tags={"benchmark": "tree"}))
    return out


RATIOS = [Ratio("hc-iter_xml", "ET-iterparse"), Ratio("hc-iter_xml", "lxml-iterparse", ">= 1"),
          Ratio("hc-XML", "ET-fromstring"), Ratio("hc-XML", "lxml-fromstring")]


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--mb",), {"type": float, "default": 100.0, "help": "size of the streamed feed"}),
        (("--tree-mb",), {"type": float, "default": 20.0, "help": "size of the whole-tree document"})])
    with Session("xml", "bash bench/xml.sh", settings) as s:
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        import httpcontent as hc
        etree, lxml_note = lxml_etree(settings.pydeps)
        folder = s.path("www")
        os.makedirs(folder)
        counts = {"stream": write_feed(os.path.join(folder, "feed.xml"), settings.extra.mb),
                  "tree": write_feed(os.path.join(folder, "tree.xml"), settings.extra.tree_mb)}
        sizes = {b: os.path.getsize(os.path.join(folder, f"{b if b == 'tree' else 'feed'}.xml")) for b in counts}

        def check(c: Contestant, n: int) -> None:
            assert n == counts[c.tags["benchmark"]], (c.name, n, counts[c.tags["benchmark"]])

        base = s.enter_context(servers.file_server(folder, {".xml": "application/atom+xml"}))
        client = s.enter_context(hc.Client(timeout=600))
        cs = contestants(client, etree, f"{base}/feed.xml", f"{base}/tree.xml")
        res = s.run(cs, s.runner(check=check), warm_up=False)
    lines = [SECTION, "",
             f"{s.measured_by()}. Streamed feed: {sizes['stream'] / 1e6:.0f} MB, {counts['stream']} entries; "
             f"tree document: {sizes['tree'] / 1e6:.0f} MB, {counts['tree']} entries; served by Python's "
             f"http.server on 127.0.0.1, client and server in one unpinned process. {s.rounds_note(res)}. "
             f"lxml: {lxml_note}.", ""]
    lines += tables.timed(RATIOS, res, "benchmark")
    return s.publish(lines)
