"""form_bench.py — form-encoding throughput from Python, and the generator of the pairs that
form_bench.c encodes too.

    python3 form_bench.py gen PAIRS_FILE [COUNT] [SEED]
    python3 form_bench.py MODE PAIRS_FILE MIN_SECONDS [OUT_FILE]

gen writes COUNT (100000) pairs drawn with random.Random(SEED) (SEED 5): keys of 1-24 and values
of 0-64 characters mixing ASCII letters and digits, the unreserved marks (- . _ ~), spaces,
reserved and other ASCII punctuation (& = + % / ? # [ ] @ ! $ ' ( ) * , ; : " < > \\ ^ ` { | }),
Latin-1 letters (é ü ß), CJK (中文), and emoji (4-byte UTF-8). The file holds, per pair, a
little-endian uint32 length and the UTF-8 bytes of the key, then the same for the value.

MODE (the pairs are read as a list of (str, str) tuples, as a caller would hold them):
  hc      hc.form_encode(pairs)                                   (%20 for spaces, the default)
  urllib  urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)   (safe="", the default)

One untimed encode first (its output is written to OUT_FILE if given, for the identity check);
then encodes are repeated until MIN_SECONDS have passed. Prints one line:
  "FORM mbps=<output MB/s> out_bytes=<bytes per encode> iters=<n> seconds=<s> cpu=<user+sys s>"
(MB = 10^6 bytes).
"""

from __future__ import annotations

import random
import struct
import sys
import time

ALPHABET = (
    [chr(c) for c in range(ord("a"), ord("z") + 1)] * 3
    + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    + [str(d) for d in range(10)] * 2
    + list("-._~")
    + [" "] * 12
    + list("&=+%/?#[]@!$'()*,;:\"<>\\^`{|}")
    + list("éüßñøçÅ")
    + list("中文字日本語")
    + ["😀", "🚀", "𝄞"]
)


def generate(path: str, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "wb") as f:
        for _ in range(count):
            for lo, hi in ((1, 24), (0, 64)):
                raw = "".join(rng.choices(ALPHABET, k=rng.randint(lo, hi))).encode("utf-8")
                f.write(struct.pack("<I", len(raw)))
                f.write(raw)


def load(path: str) -> list[tuple[str, str]]:
    data = open(path, "rb").read()
    out, i, n = [], 0, len(data)
    while i < n:
        pair = []
        for _ in range(2):
            (size,) = struct.unpack_from("<I", data, i)
            i += 4
            pair.append(data[i:i + size].decode("utf-8"))
            i += size
        out.append((pair[0], pair[1]))
    return out


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "gen":
        generate(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100_000,
                 int(sys.argv[4]) if len(sys.argv) > 4 else 5)
        return 0
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in ("hc", "urllib"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, path, min_seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    pairs = load(path)
    if mode == "hc":
        import httpcontent as hc

        def encode() -> str:
            return hc.form_encode(pairs)
    else:
        import urllib.parse

        def encode() -> str:
            return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)

    first = encode()
    if len(sys.argv) == 5:
        with open(sys.argv[4], "wb") as f:
            f.write(first.encode("ascii"))
    size = len(first)
    del first
    iters = 0
    cpu0, t0 = time.process_time(), time.perf_counter()
    while True:
        out = encode()
        iters += 1
        if len(out) != size:
            print("output size changed between encodes", file=sys.stderr)
            return 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds:
            break
    cpu = time.process_time() - cpu0
    print(f"FORM mbps={size * iters / elapsed / 1e6:.2f} out_bytes={size} iters={iters} "
          f"seconds={elapsed:.4f} cpu={cpu:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
