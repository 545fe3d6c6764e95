"""JSON Schema validation (issue 18), on json.sh's rich document (json_doc.py) and a realistic
schema (bench/schema.json: types, required, bounds, a pattern, additionalProperties,
prefixItems, nested objects):

- Python validation rate: `hc.Schema(schema).validate(doc)` against jsonschema's
  `Draft202012Validator(schema).validate(doc)` on a document already loaded as Python objects
  (bench/schema_bench.py). Target ≥ 10×.
- Validation cost from C (bench/json_bench.c with the schema file as last argument): parse +
  validate time over parse time alone, in memory, streaming the tree, path streaming. Target ≤ 1.3×.

    bash bench/schema.sh [--rounds N] [--mb 100] [--py-mb 10] [--only a,b] [--no-write]
"""

from __future__ import annotations

import os
import subprocess

from harness import Contestant, Ratio, Session, library, parse, stats, writer

SECTION = "## JSON Schema validation (issue 18)"

# (label, fast, slow, target): the time ratio slow/fast is the rate ratio fast/slow.
PAIRS = [
    Ratio("parse", "parse-schema", "<= 1.3", "in memory: (parse + validate) / parse"),
    Ratio("tree", "tree-schema", "<= 1.3", "streaming tree: (parse + validate) / parse"),
    Ratio("items", "items-schema", "<= 1.3", "path streaming: (parse + validate) / parse"),
    Ratio("py-hc", "py-jsonschema", ">= 10", "Python: hc.Schema / jsonschema validation rate"),
]


def write_doc(s: Session, path: str, mb: int) -> tuple[int, int]:
    out = subprocess.run([s.settings.python, os.path.join(s.settings.here, "json_doc.py"), path, str(mb), "rich"],
                         check=True, capture_output=True, text=True).stdout.split()
    os.chmod(path, 0o644)
    return int(out[0]), int(out[1])


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--mb",), {"type": int, "default": int(os.environ.get("BENCH_SCHEMA_MB") or 100)}),
        (("--py-mb",), {"type": int, "default": int(os.environ.get("BENCH_SCHEMA_PY_MB") or 10)})])
    with Session("schema", "bash bench/schema.sh", settings, "nginx", "client") as s:
        os.makedirs(s.path("www"))
        data, pydoc = s.path("www", "data.json"), s.path("py.json")
        size, items = write_doc(s, data, settings.extra.mb)
        py_size, py_items = write_doc(s, pydoc, settings.extra.py_mb)
        ngx = s.nginx(http="types { application/json json; }")
        s.snapshot()
        prog = s.compile("json_bench.c", "-lcurl", "-lyajl")
        schema = os.path.join(settings.here, "schema.json")
        url = f"http://127.0.0.1:{ngx['port']}/data.json"
        tail = ["{count}", str(size), str(items)]
        cs = []
        for name, mode, src in (("parse", "hc-parse", data), ("tree", "hc-c-tree", url), ("items", "hc-c-items", url)):
            cs.append(Contestant(name, f"`json_bench {mode}`", command=[prog, mode, src, *tail]))
            cs.append(Contestant(f"{name}-schema", f"`json_bench {mode}` + schema", command=[prog, mode, src, *tail, schema]))
        py = os.path.join(settings.here, "schema_bench.py")
        cs += [Contestant("py-hc", "`hc.Schema(schema).validate(doc)`", command=[settings.python, py, "hc", pydoc, schema, "{count}"]),
               Contestant("py-jsonschema", "`jsonschema.Draft202012Validator(schema).validate(doc)`",
                          command=[settings.python, py, "jsonschema", pydoc, schema, "{count}"])]
        res = s.run(cs)
        note = library.pylibs(["jsonschema"], s.pythonpath)
    mbps, cpu = res.of("mbps"), res.of("cpu_s_per_gb")
    rows = []
    for p in PAIRS:
        x = stats.same_round(mbps.get(p.num, {}), mbps.get(p.den, {}))
        rows.append((p.what, ", ".join(f"{v:.2f}" for v in x) or "not measured", f"{stats.median(x):.2f}" if x else "",
                     stats.spread(x).replace("–", "-") if x else "", p.target))
    lines = [SECTION, "", f"{s.measured_by()}.", "",
             f"C document: {size} bytes, {items} items; Python document: {py_size} bytes, {py_items} items. "
             f"{note}. {s.pinning.sentence}. {settings.count} pass(es) a measurement; {s.rounds_note(res)}.", ""]
    lines += writer.table(["Measure", "Per round", "Median", "Min-max", "Target"], rows) + [""]
    lines += writer.table(["Contestant", "Settings", "Median MB/s", "Median CPU s/GB"],
                          [(c.name, c.settings, f"{stats.median(mbps[c.name].values()):.1f}",
                            f"{stats.median(cpu[c.name].values()):.2f}") for c in cs if c.name in mbps], "llrr")
    return s.publish(lines)
