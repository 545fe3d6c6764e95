"""HTTP cache (issue 32): a hit served from the SQLite cache through the JSON handler against a
loopback round trip to nginx for the same 100 KiB JSON body (target ≥ 5×; from C, the tree handler
of bench/cache_c.c, and from Python), and against hishel 2
(httpx + its SQLite storage, RFC 9111 mode) serving the same hits (target ≥ 2×); beside them, for
context, `marshal.loads` of the stored product alone (the Python objects, the floor of any hit).
Contestants are bench/cache_clients.py and bench/cache_c.c; rounds interleaved; ratios from the same rounds.

    bash bench/cache.sh [--rounds R] [--count N] [--only a,b] [--no-write]
"""

from __future__ import annotations

import json
import os

from harness import Contestant, Ratio, Session, parse, tables

SECTION = "## HTTP cache (issue 32)"


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, count=300)
    count = settings.count
    with Session("cache", "bash bench/cache.sh", settings, "nginx", "client") as s:
        os.makedirs(s.path("www"), exist_ok=True)
        doc = {"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"], "score": i * 0.5} for i in range(1400)]}
        body = json.dumps(doc).encode()
        while len(body) > 100 << 10:
            doc["items"].pop()
            body = json.dumps(doc).encode()
        with open(s.path("www", "data.json"), "wb") as f:
            f.write(body)
        ngx = s.nginx(http='types { application/json json; }\n    add_header Cache-Control "max-age=86400";')
        s.snapshot()
        url = f"http://127.0.0.1:{ngx['port']}/data.json"
        prog = os.path.join(settings.here, "cache_clients.py")
        py = settings.python
        cs = [Contestant("hc-sqlite-hit", "`hc.Client(cache=hc.Cache(path))`, `client.get(url, handler=hc.JSON())`: "
                         "each a hit: the JSON handler's stored product (marshal bytes) read from the SQLite file "
                         "(WAL), `marshal.loads`",
                         command=[py, prog, "hc-hit", s.path("hc-cache.sqlite"), url, "{count}"]),
              Contestant("hc-nginx", "`hc.Client()` (no cache), `client.get(url, handler=hc.JSON())`: a loopback "
                         "round trip to nginx each (kept-alive connection)",
                         command=[py, prog, "hc-origin", "-", url, "{count}"]),
              Contestant("hishel-sqlite-hit", "httpx.Client with hishel 2 `CacheTransport(rfc=CacheOptions(shared=False))` "
                         "over `SqliteStorage`, `r.json()`: each a hit",
                         command=[py, prog, "hishel-hit", s.path("hishel.sqlite"), url, "{count}"]),
              Contestant("loads-floor", "`marshal.loads` (collector paused, as the binding does) of the product "
                         "`hc.JSON()` stored for the document: no HTTP, no store",
                         command=[py, prog, "loads-floor", s.path("floor.sqlite"), url, "{count}"])]
        cprog = s.compile("cache_c.c")
        cs += [Contestant("hc-c-sqlite-hit", "C: `hc_client_set_cache(client, hc_cache_new(path, 0, 0))`, "
                          "`hc_handler_json_new(NULL)`, `hc_response_json`: each a hit: the tree handler's stored "
                          "product (its tape) read from the SQLite file (WAL), offsets checked",
                          command=[cprog, "hit", s.path("hc-c-cache.sqlite"), url, "{count}"]),
               Contestant("hc-c-nginx", "C: `hc_client_new()` (no cache), `hc_handler_json_new(NULL)`, "
                          "`hc_response_json`: a loopback round trip to nginx each (kept-alive connection)",
                          command=[cprog, "origin", "-", url, "{count}"])]
        res = s.run(cs)
        lines = [SECTION, "", s.measured_by() + f"; a {len(body)} byte JSON document, {count} GETs per measurement.", "",
                 s.rounds_note(res) + ".", ""]
        lines += tables.ratio_rows([Ratio("hc-c-sqlite-hit", "hc-c-nginx", "≥ 5",
                                          "C, the tree handler: a hit against a loopback round trip"),
                                    Ratio("hc-sqlite-hit", "hc-nginx", "≥ 5",
                                          "Python, `hc.JSON()`: a hit against a loopback round trip"),
                                    Ratio("hc-sqlite-hit", "hishel-sqlite-hit", "≥ 2", "the same hits, hishel 2"),
                                    Ratio("hc-sqlite-hit", "loads-floor", None,
                                          "a hit against its Python objects alone (1 = nothing but them)")], res)
        lines += [""] + tables.contestant_rows(cs, res)
        return s.publish(lines)
