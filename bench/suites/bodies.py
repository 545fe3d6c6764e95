"""Request bodies (issue 5): form encoding (bench/form_bench.c and form_bench.py: httpcontent from
C and Python against curl_easy_escape and urllib's urlencode, outputs checked byte-identical) and
streamed uploads (bench/upload_bench.c and upload_bench.py against raw libcurl, to our own sink
server bench/upload_sink.c), with the peak RSS growth of each upload.

    bash bench/bodies.sh [--rounds 3] [--parts form upload] [--pairs N] [--upload-mb N] [--no-write]

Without RAW_TUNED_UPLOAD_BUFFER, a sweep before the rounds picks the anchor's
CURLOPT_UPLOAD_BUFFERSIZE (the least client CPU per byte, best of 2 uploads per size).
"""

from __future__ import annotations

import filecmp
import hashlib
import os
import subprocess
import sys

from harness import Contestant, Ratio, Session, log, machine, parse, parse_kv, servers, stats, writer

SECTION = "## Request bodies (issue 5)"

FORM = {
    "hc-c": "httpcontent from C: `hc_form_new`, `hc_form_add_bytes` × pairs, `hc_form_encode`, free",
    "curl-escape-c": "C: `curl_easy_escape` on every key and value, joined with `=` and `&`",
    "hc-py": "httpcontent from Python: `hc.form_encode(pairs)`",
    "urlencode-py": "Python: `urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)`",
}
UPLOAD = {
    "raw-c": "raw libcurl (C): POST, `POSTFIELDSIZE_LARGE`, `READFUNCTION` = `fread`; libcurl's default upload buffer (64 KiB)",
    "raw-tuned-c": "the anchor: the same with `CURLOPT_UPLOAD_BUFFERSIZE` tuned (see above)",
    "hc-c-file": "httpcontent from C: `hc_request_set_file_body(path)`",
    "hc-c-read": "httpcontent from C, streamed: `hc_request_set_read_body` with a callback that `fread`s the file (as raw's `READFUNCTION`), its size as length",
    "hc-py-file": "httpcontent from Python: `client.post(url, data=open(path, \"rb\"))`",
    "hc-py-iter-64k": "httpcontent from Python: `data=` a generator of 64 KiB `bytes` (chunked)",
    "hc-py-iter-1m": "httpcontent from Python: `data=` a generator of 1 MiB `bytes` (chunked)",
}
FORM_RATIOS = [
    Ratio("hc-c", "curl-escape-c", None),
    Ratio("hc-py", "urlencode-py", None),
    Ratio("hc-py", "curl-escape-c", None),
    Ratio("urlencode-py", "curl-escape-c", None),
]
UPLOAD_RATIOS = [
    Ratio("hc-c-file", "raw-tuned-c", "≥ 0.90"),
    Ratio("hc-c-read", "raw-tuned-c", "≥ 0.90"),
    Ratio("hc-py-file", "raw-tuned-c", "≥ 0.90"),
    Ratio("hc-c-file", "raw-c", None),
    Ratio("hc-py-file", "raw-c", None),
    Ratio("raw-c", "raw-tuned-c", None),
    Ratio("hc-py-iter-64k", "raw-tuned-c", None),
    Ratio("hc-py-iter-1m", "raw-tuned-c", None),
]
RSS_TARGET_KIB = 16 * 1024
RATIO_HEAD = ["Ratio", "Throughput ratio (of medians)", "Per-round: median (min–max)", "CPU ratio", "Target", ""]


def cpu_per_gb(m: dict) -> float:
    """CPU seconds per 10^9 bytes (of output for forms, of body for uploads)."""
    return m["cpu"] / (m.get("out_bytes", m.get("bytes", 0)) * m.get("iters", 1) / 1e9)


def parse_line(line: str) -> dict:
    """"FORM k=v ..." or "UPLOAD k=v ..."; adds cpu_s_per_gb."""
    if not line.startswith(("FORM ", "UPLOAD ")):
        raise ValueError(f"unexpected output: {line!r}")
    m = parse_kv(line)
    m["cpu_s_per_gb"] = cpu_per_gb(m)
    return m


def sweep(s: Session, runner: object, make: object, sizes: list[int]) -> tuple[int, str]:
    """The upload buffer for the anchor: per size two raw uploads, the lower CPU per byte; the
    size with the least. Returns (size, the report's note)."""
    log("upload buffer sweep (raw libcurl, 2 uploads per size: CPU seconds per GB, the lower of the two)")
    best, note = None, []
    for size in sizes:
        tries = [runner.measure(make(size), 1) for _ in range(2)]
        top = min(tries, key=lambda m: m["cpu_s_per_gb"])
        cost = round(top["cpu_s_per_gb"], 4)
        log(f"  {size:>8} bytes: {cost} CPU s/GB, {top['mbps']} MB/s")
        note.append(f"{size // 1024} KiB {cost} ({top['mbps']:g} MB/s)")
        if best is None or cost < best[1]:
            best = (size, cost)
    return best[0], ("picked by a sweep before the rounds, the least client CPU per byte (CPU s/GB, best of 2; "
                     "MB/s): " + "; ".join(note))


def identity(s: Session, form: list[Contestant], pairs: str) -> tuple[str, str]:
    """Encodes the pairs once with each encoder; all outputs must be byte-identical (%20 mode);
    then hc's + mode against urlencode's quote_plus."""
    log("identity check: encoding the pairs once with each encoder")
    outs = {}
    for c in form:
        outs[c.name] = s.path("out", c.name + ".txt")
        encoder = list(c.command)[:-2]    # the command without its pairs and seconds
        subprocess.run([*s.pinning.client, *encoder, pairs, "0", outs[c.name]], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": s.pythonpath}, timeout=s.settings.timeout)
    ref = outs["urlencode-py"]
    for name, path in outs.items():
        if not filecmp.cmp(ref, path, shallow=False):
            raise SystemExit(f"{name}'s output differs from urlencode's")
    with open(ref, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    same = f"all four outputs byte-identical ({os.path.getsize(ref)} bytes, sha256 {digest}…)"
    code = ("import sys, urllib.parse\nsys.path.insert(0, sys.argv[2])\nimport form_bench, httpcontent as hc\n"
            "pairs = form_bench.load(sys.argv[1])\n"
            "same = hc.form_encode(pairs, space='+') == urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote_plus)\n"
            "print('identical' if same else 'DIFFERENT')")
    plus = subprocess.run([s.settings.python, "-c", code, pairs, s.settings.here], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": s.pythonpath}, check=True).stdout.strip()
    log(f"  {same}; + mode: {plus}")
    return same, plus


def contestants(s: Session, x: object, url: str, pairs: str) -> tuple[list[Contestant], list[Contestant], object]:
    py, here = s.settings.python, s.settings.here
    up, form = s.compile("upload_bench.c", "-lcurl"), s.compile("form_bench.c", "-lcurl")
    files = [url, s.path("upload.bin"), s.path("warmup.bin")]
    forms = [Contestant(n, FORM[n], command=[*cmd, pairs, str(x.form_seconds)], tags={"kind": "form"}) for n, cmd in (
        ("hc-c", [form, "hc"]), ("curl-escape-c", [form, "curl"]),
        ("hc-py", [py, os.path.join(here, "form_bench.py"), "hc"]),
        ("urlencode-py", [py, os.path.join(here, "form_bench.py"), "urllib"]))]

    def tuned(size: int) -> Contestant:
        return Contestant("raw-tuned-c", UPLOAD["raw-tuned-c"], tags={"kind": "upload"},
                          command=["env", f"RAW_UPLOAD_BUFFERSIZE={size}", up, "raw", *files])
    upy = [py, os.path.join(here, "upload_bench.py")]
    uploads = [Contestant(n, UPLOAD[n], command=[*cmd, *files], tags={"kind": "upload"}) for n, cmd in (
        ("raw-c", [up, "raw"]), ("hc-c-file", [up, "hc"]), ("hc-c-read", [up, "hc-read"]), ("hc-py-file", [*upy, "hc-file"]),
        *((("hc-py-iter-64k", [*upy, "hc-iter-64k"]), ("hc-py-iter-1m", [*upy, "hc-iter-1m"])) if x.iterables else ()))]
    return forms, uploads, tuned


def main(argv: list[str]) -> int:
    env = os.environ.get
    settings = parse(argv, rounds=3, options=[
        (("--parts",), {"nargs": "+", "default": (env("BENCH_PARTS") or "form upload").split()}),
        (("--pairs",), {"type": int, "default": int(env("BENCH_PAIRS") or 100000)}),
        (("--upload-mb",), {"type": int, "default": int(env("BENCH_UPLOAD_MB") or 1024)}),
        (("--form-seconds",), {"type": float, "default": float(env("BENCH_FORM_SECONDS") or 1.0)}),
        (("--iterables",), {"type": int, "default": int(env("BENCH_ITERABLES") or 1)}),
        (("--sweep",), {"type": int, "nargs": "+", "default": [int(v) for v in (env("BENCH_UPLOAD_SWEEP") or "65536 262144 1048576 2097152").split()]})])
    x = settings.extra
    if not os.environ.get("BENCH_TIMEOUT"):
        settings.timeout = 120
    with Session("bodies", "bash bench/bodies.sh", settings, "sink server", "clients") as s:
        s.snapshot()
        os.makedirs(s.path("out"))
        pairs = s.path("pairs.bin")
        if "form" in x.parts:
            log(f"generating {x.pairs} form pairs")
            subprocess.run([settings.python, os.path.join(settings.here, "form_bench.py"), "gen", pairs, str(x.pairs)], check=True)
        log(f"making a sparse {x.upload_mb} MiB file and reading it once (page cache)")
        with open(s.path("upload.bin"), "wb") as f:
            f.truncate(x.upload_mb * 1048576)
        with open(s.path("upload.bin"), "rb") as f:
            while f.read(1 << 20):
                pass
        with open(s.path("warmup.bin"), "wb") as f:
            f.write(os.urandom(1048576))
        sink = subprocess.Popen([*s.pinning.server, s.compile("upload_sink.c"), "0"], stdout=subprocess.PIPE, text=True)
        s.callback(servers.stop, sink)
        url = f"http://127.0.0.1:{sink.stdout.readline().split()[1]}/upload"
        forms, uploads, tuned = contestants(s, x, url, pairs)
        runner = s.runner(parse=parse_line)
        facts = {"identity": "not run", "plus": "not run", "tuned": 0, "sweep": "set by RAW_TUNED_UPLOAD_BUFFER"}
        if "upload" in x.parts:
            if env("RAW_TUNED_UPLOAD_BUFFER"):
                facts["tuned"] = int(env("RAW_TUNED_UPLOAD_BUFFER"))
            else:
                facts["tuned"], facts["sweep"] = sweep(s, runner, tuned, x.sweep)
            uploads.insert(1, tuned(facts["tuned"]))
        if "form" in x.parts:
            facts["identity"], facts["plus"] = identity(s, forms, pairs)
        cs = (forms if "form" in x.parts else []) + (uploads if "upload" in x.parts else [])
        res = s.run(cs, runner, warm_up=False)
    return s.publish(report(s, res, cs, facts))


def ratio_rows(ratios: list[Ratio], mbps: dict, cpu: dict) -> list[tuple]:
    med = {c: stats.median(v.values()) for c, v in mbps.items()}
    cmed = {c: stats.median(v.values()) for c, v in cpu.items()}
    rows = []
    for r in ratios:
        if r.num not in med or r.den not in med:
            continue
        ratio, cpu_ratio = med[r.num] / med[r.den], cmed[r.den] / cmed[r.num]
        verdict = "context"
        if r.target:
            verdict = "met" if stats.met(r.target, ratio) else "**missed**"
            if not stats.met(r.target, ratio) and stats.met(r.target, cpu_ratio):
                verdict += " (CPU ratio met)"
        rows.append((f"{r.num} / {r.den}", f"{ratio:.3f}", stats.summary(stats.same_round(mbps[r.num], mbps[r.den]), ".3f"),
                     f"{cpu_ratio:.3f}", r.target or "–", verdict))
    return rows


def report(s: Session, res: object, cs: list[Contestant], facts: dict) -> list[str]:
    x = s.settings.extra
    rounds = list(range(1, res.rounds + 1))
    mbps, cpu = res.of("mbps"), res.of("cpu_s_per_gb")
    med = {c: stats.median(v.values()) for c, v in mbps.items()}
    cmed = {c: stats.median(v.values()) for c, v in cpu.items()}
    lines = [SECTION, "",
             f"{s.measured_by()}, Python {machine.python_version()}. {s.pinning.sentence}. {s.rounds_note(res)}; "
             "in each round every contestant runs once; medians of the rounds. MB = 10^6 bytes. CPU = the client "
             "process's user + system seconds per 10^9 bytes; CPU ratio = the baseline's CPU per byte over the "
             "contestant's (≥ 1: no more CPU per byte), steadier than MB/s when other work shares the machine.", "",
             "**Ratios are the figure; absolute rates on this shared 2-core machine are noise.**", ""]
    form = [c for c in cs if c.tags["kind"] == "form" and c.name in mbps]
    if form:
        out_bytes = int(next(iter(res.of("out_bytes")[form[0].name].values())))
        lines += ["### Form encoding", ""]
        lines.append(f"{x.pairs} (key, value) pairs generated with a fixed seed "
                     f"by `form_bench.py gen`: keys of 1–24 and values of 0–64 characters mixing "
                     f"ASCII letters and digits, `-._~`, spaces, reserved and other punctuation, "
                     f"Latin-1 letters, CJK and 4-byte UTF-8 (emoji); {out_bytes:,} bytes of output. "
                     f"Each measurement repeats the whole encode (building the form included, for "
                     f"the library) for at least {x.form_seconds} s after one "
                     f"untimed encode. MB/s = output bytes per second. Identity (%20 mode): "
                     f"{facts['identity']}; in + mode, `hc.form_encode(pairs, "
                     f"space=\"+\")` and `urlencode(pairs)` (quote_plus) are "
                     f"{facts['plus']}.")
        lines += [""] + writer.table(RATIO_HEAD, ratio_rows(FORM_RATIOS, mbps, cpu), "lrrrrl") + [""]
        lines += writer.table(["Contestant", "", "Median MB/s", *(f"R{r}" for r in rounds), "CPU s/GB", "Encodes per second"],
                              [(c.name, c.settings, f"{med[c.name]:.1f}", *writer.round_cells(mbps[c.name], rounds, ".1f"),
                                f"{cmed[c.name]:.2f}", f"{med[c.name] * 1e6 / out_bytes:.1f}") for c in form],
                              "llr" + "r" * len(rounds) + "rr")
        if "hc-c" in mbps:
            share = stats.median(res.of("encode_share")["hc-c"].values())
            lines += ["", f"Of hc-c's time, {share:.0%} is `hc_form_encode` itself and {1 - share:.0%} building the "
                      "form (`hc_form_new`, `hc_form_add_bytes` copying every key and value, `hc_form_free`); median "
                      "of the rounds."]
        lines.append("")
    upload = [c for c in cs if c.tags["kind"] == "upload" and c.name in mbps]
    if upload:
        lines += ["### Streamed upload", ""]
        lines.append(f"One POST of a {x.upload_mb} MiB file (sparse, read "
                     f"once beforehand so it is in the page cache) per measurement, to a sink "
                     f"server of our own (`upload_sink.c`, 127.0.0.1, HTTP/1.1 keep-alive) that "
                     f"reads the body into one 256 KiB buffer, discards it, and answers with the "
                     f"number of bytes received: each client checks that number equals the file "
                     f"size, so every byte went through. Each process first uploads a 1 MiB file "
                     f"(untimed) on the same handle/client; then the peak-RSS mark is reset "
                     f"(`/proc/self/clear_refs` ← 5) and **peak RSS growth** = VmHWM after the "
                     f"upload − VmRSS before it. The raw program sets what httpcontent sets that "
                     f"could matter: no `Expect: 100-continue`, no Content-Type, "
                     f"`ACCEPT_ENCODING \"\"`, `NOSIGNAL`.")
        lines.append("")
        lines.append(f"The anchor `raw-tuned-c` sets `CURLOPT_UPLOAD_BUFFERSIZE` {facts['tuned']:,} "
                     f"bytes, {facts['sweep']}. httpcontent sets its own upload buffer "
                     f"(`CURLOPT_UPLOAD_BUFFERSIZE`, 256 KiB for a request sent alone).")
        lines += [""] + writer.table(RATIO_HEAD, ratio_rows(UPLOAD_RATIOS, mbps, cpu), "lrrrrl") + [""]
        rows = []
        for c in upload:
            growth = max(res.of("hwm_growth_kib")[c.name].values())
            exact = all(v == 1 for v in res.of("hwm_reset").get(c.name, {0: 0}).values())
            verdict = ("met" if growth <= RSS_TARGET_KIB else "**missed**") + ("" if exact else " (upper bound)")
            rows.append((c.name, c.settings, f"{med[c.name]:.0f}", *writer.round_cells(mbps[c.name], rounds, ".0f"),
                         f"{cmed[c.name]:.3f}", f"{stats.median(res.of('rss_base_kib')[c.name].values()) / 1024:.1f}",
                         f"{growth:.0f}", verdict))
        lines += writer.table(["Contestant", "", "Median MB/s", *(f"R{r}" for r in rounds), "CPU s/GB", "RSS before (MiB)",
                               "Peak RSS growth, max of rounds (KiB)", "≤ 16 MiB"], rows, "llr" + "r" * len(rounds) + "rrrl")
    return lines
