"""The decoded-image benchmark's measurements and report (run by bench/images.sh, which serves
the files with nginx and pins this process to its own CPU).

Contestants are data: (id, file, how the pixels are obtained, its settings). Rounds run every
contestant once each, in an order rotated per round; the figures are medians over rounds, and the
ratios are Pillow's time over httpcontent's from the same rounds (>= 1.0: httpcontent at least as
fast). The "after the last byte" figures come from the same images served at a limited rate: a
decode's time minus a plain download's time (bytes arrive slower than they decode, so a push
decoder has little left to do when the last byte comes; a buffer-then-decode one has it all).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time

import requests
from PIL import Image

import httpcontent as hc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_common as rc  # noqa: E402

SECTION = "## Decoded images (issue 17)"


def hc_decode(client, url, mode):
    img = client.get(url, handler=hc.DecodedImage(mode=mode)).content
    return img.width * img.height


def hc_download(client, url, _mode):
    client.get(url, handler=hc.Discard())
    return 0


def pillow_decode(session, url, mode):
    im = Image.open(io.BytesIO(session.get(url).content))
    im.load()
    if mode and im.mode != mode:
        im = im.convert(mode)
    return im.width * im.height


def requests_download(session, url, _mode):
    session.get(url).content
    return 0


# (id, file, function, mode, settings, whose session)
CONTESTANTS = [
    ("hc-jpeg-rgb", "photo.jpg", hc_decode, "RGB", "hc.DecodedImage(mode=\"RGB\"), one hc.Client", "hc"),
    ("pillow-jpeg-rgb", "photo.jpg", pillow_decode, None,
     "requests.Session().get + Image.open(BytesIO).load() (its native RGB)", "requests"),
    ("hc-jpeg-rgba", "photo.jpg", hc_decode, "RGBA", "hc.DecodedImage() (RGBA, the default)", "hc"),
    ("pillow-jpeg-rgba", "photo.jpg", pillow_decode, "RGBA", "as pillow-jpeg-rgb, then .convert(\"RGBA\")", "requests"),
    ("hc-png-rgb", "big.png", hc_decode, "RGB", "hc.DecodedImage(mode=\"RGB\")", "hc"),
    ("pillow-png-rgb", "big.png", pillow_decode, None, "requests + Pillow load (native RGB)", "requests"),
]
PAIRS = [("hc-jpeg-rgb", "pillow-jpeg-rgb"), ("hc-jpeg-rgba", "pillow-jpeg-rgba"), ("hc-png-rgb", "pillow-png-rgb")]
# At the limited rate: (id, file, function, mode, whose session).
SLOW = [
    ("hc-jpeg", "photo.jpg", hc_decode, "RGB", "hc"), ("hc-jpeg-download", "photo.jpg", hc_download, None, "hc"),
    ("pillow-jpeg", "photo.jpg", pillow_decode, None, "requests"),
    ("requests-jpeg-download", "photo.jpg", requests_download, None, "requests"),
    ("hc-png", "big.png", hc_decode, "RGB", "hc"), ("hc-png-download", "big.png", hc_download, None, "hc"),
    ("pillow-png", "big.png", pillow_decode, None, "requests"),
    ("requests-png-download", "big.png", requests_download, None, "requests"),
]


def timed(fn, session, url, mode):
    wall, cpu = time.perf_counter(), time.process_time()
    pixels = fn(session, url, mode)
    return time.perf_counter() - wall, time.process_time() - cpu, pixels


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--www", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    sessions = {"hc": hc.Client(timeout=300), "requests": requests.Session()}

    # Correctness first: the PNG's pixels are Pillow's, byte for byte.
    png = sessions["hc"].get(f"{args.base}/big.png", handler=hc.DecodedImage(mode="RGB")).content
    with Image.open(os.path.join(args.www, "big.png")) as im:
        assert png.data == im.convert("RGB").tobytes(), "PNG pixels differ from Pillow's"
    sizes = {f: os.path.getsize(os.path.join(args.www, f)) for f in ("photo.jpg", "big.png")}
    megapixels = {f: Image.open(os.path.join(args.www, f)).size for f in sizes}

    wall: dict[str, dict[int, float]] = {c[0]: {} for c in CONTESTANTS}
    cpu: dict[str, dict[int, float]] = {c[0]: {} for c in CONTESTANTS}
    slow: dict[str, list[float]] = {s[0]: [] for s in SLOW}
    for r in range(1, args.rounds + 1):
        k = (r - 1) % len(CONTESTANTS)
        for cid, f, fn, mode, _settings, who in CONTESTANTS[k:] + CONTESTANTS[:k]:
            w, c, _ = timed(fn, sessions[who], f"{args.base}/{f}", mode)
            wall[cid][r], cpu[cid][r] = w, c
        k = (r - 1) % len(SLOW)
        for sid, f, fn, mode, who in SLOW[k:] + SLOW[:k]:
            slow[sid].append(timed(fn, sessions[who], f"{args.base}/slow/{f}", mode)[0])
        print(f"round {r}: " + ", ".join(f"{c}={wall[c][r]:.3f}s" for c in wall), file=sys.stderr)

    rounds = range(1, args.rounds + 1)
    med = {c: statistics.median(v.values()) for c, v in wall.items()}
    cmed = {c: statistics.median(v.values()) for c, v in cpu.items()}
    smed = {s: statistics.median(v) for s, v in slow.items()}

    def text() -> str:
        mp = {f: w * h / 1e6 for f, (w, h) in megapixels.items()}
        lines = [SECTION, "",
                 rc.measured_by("images.sh") + f"; nginx {rc.meta('NGINX')}; {rc.meta('PINNING')}; "
                 f"load average {rc.meta('LOAD')}.", "",
                 "**Provisional**: the machine is shared with other engineers' builds and tests right now; "
                 "the ratios (same rounds, interleaved) are the figure, absolute times are noise.", "",
                 f"Images generated by the script with Pillow: `photo.jpg` {megapixels['photo.jpg'][0]}x"
                 f"{megapixels['photo.jpg'][1]} ({mp['photo.jpg']:.1f} MP, quality 90, {sizes['photo.jpg'] / 1e6:.1f} MB), "
                 f"`big.png` {megapixels['big.png'][0]}x{megapixels['big.png'][1]} ({mp['big.png']:.1f} MP, RGB, "
                 f"compress_level 6, {sizes['big.png'] / 1e6:.1f} MB). Each measurement is one GET over loopback and "
                 f"the decode to pixels, from Python 3 (one process, this script); {args.rounds} rounds, order "
                 "rotated each round. The PNG's pixels were checked equal to Pillow's before timing.", "",
                 "| contestant | settings | median s | MP/s | CPU s (median) | " + rc.round_headers(rounds) + " |",
                 "|---|---|---|---|---|" + "---|" * args.rounds]
        for cid, f, _fn, _mode, settings, _who in CONTESTANTS:
            lines.append(f"| `{cid}` | {settings} | {med[cid]:.3f} | {mp[f] / med[cid]:.1f} | {cmed[cid]:.3f} | "
                         + rc.round_cells(wall[cid], rounds, ".3f") + " |")
        lines += ["", "Ratios (Pillow's time / httpcontent's; ≥ 1.0 means httpcontent is at least as fast; "
                  "target ≥ 1.0):", "",
                  "| pair | ratio of medians | per-round min–max | CPU ratio |", "|---|---|---|---|"]
        for a, b in PAIRS:
            per = rc.round_ratios(wall[b], wall[a], rounds)
            lines.append(f"| `{b}` / `{a}` | **{med[b] / med[a]:.2f}×** | {rc.spread(per, '.2f')} | "
                         f"{cmed[b] / cmed[a]:.2f}× |")
        lines += ["", f"Time to the last pixel after the last byte: the same files served at nginx `limit_rate "
                  f"{rc.meta('RATE')}` (meant to be slower than the decoders, so decoding can keep up), the median decode "
                  f"time minus the median plain download time (same client, {args.rounds} rounds):", "",
                  "| file | httpcontent (push decoding) | requests + Pillow (decode after download) |", "|---|---|---|"]
        for f, h, hd, p, pd in [("photo.jpg", "hc-jpeg", "hc-jpeg-download", "pillow-jpeg", "requests-jpeg-download"),
                                ("big.png", "hc-png", "hc-png-download", "pillow-png", "requests-png-download")]:
            lines.append(f"| `{f}` | {max(0.0, smed[h] - smed[hd]) * 1000:.0f} ms (decode {smed[h]:.2f} s, "
                         f"download {smed[hd]:.2f} s) | {max(0.0, smed[p] - smed[pd]) * 1000:.0f} ms (decode "
                         f"{smed[p]:.2f} s, download {smed[pd]:.2f} s) |")
        lines += ["", "A progressive JPEG would keep its rows until the last scan (libjpeg decodes the scans as "
                  "they come, the rows at the end); this baseline JPEG and the PNG give rows as they arrive."]
        return "\n".join(lines)

    return rc.publish(SECTION, args.output, True, text)


if __name__ == "__main__":
    sys.exit(main())
