"""Decoded images (issue 17): a large JPEG and PNG served by nginx, decoded to pixels from
Python by `hc.DecodedImage` (push decoding while bytes arrive) and by requests + Pillow (decode
after the download); plus the time to the last pixel after the last byte, from the same files
served at a limited rate (decode time minus plain download time).

    bash bench/images.sh [--rounds N] [--jpeg-mp 24] [--png-mp 12] [--rate 4m] [--no-write]

Contestants are timed in this process, pinned to the client CPU; nginx runs on the server CPU.
Ratios are Pillow's time over httpcontent's from the same rounds (≥ 1.0: httpcontent at least
as fast). The PNG's pixels are checked equal to Pillow's before timing.
"""

from __future__ import annotations

import functools
import io
import os
import sys
from typing import Any

from harness import Contestant, Ratio, Session, parse, stats, writer

SECTION = "## Decoded images (issue 17)"
PAIRS = [Ratio("hc-jpeg-rgb", "pillow-jpeg-rgb", "≥ 1.0"), Ratio("hc-jpeg-rgba", "pillow-jpeg-rgba", "≥ 1.0"),
         Ratio("hc-png-rgb", "pillow-png-rgb", "≥ 1.0")]
# (file, hc decode, hc download, Pillow decode, requests download) at the limited rate.
SLOW_ROWS = [("photo.jpg", "hc-jpeg", "hc-jpeg-download", "pillow-jpeg", "requests-jpeg-download"),
             ("big.png", "hc-png", "hc-png-download", "pillow-png", "requests-png-download")]


def photo(mp: float) -> Any:
    """A smooth scene with texture: gradients plus upscaled noise (compresses like a photo)."""
    from PIL import Image
    w = int((mp * 1e6 * 3 / 2) ** 0.5) // 16 * 16
    h = int(mp * 1e6 / w) // 16 * 16
    noise = Image.effect_noise((w // 8, h // 8), 64).resize((w, h), Image.BILINEAR)
    grad = Image.linear_gradient("L").resize((w, h))
    return Image.merge("RGB", (grad, noise, grad.transpose(Image.FLIP_LEFT_RIGHT)))


def contestants(hc: Any, client: Any, session: Any, base: str) -> list[Contestant]:
    from PIL import Image

    def hc_decode(url: str, mode: str) -> int:
        img = client.get(url, handler=hc.DecodedImage(mode=mode)).content
        return img.width * img.height

    def hc_download(url: str) -> int:
        client.get(url, handler=hc.Discard())
        return 0

    def pillow_decode(url: str, mode: str | None) -> int:
        im = Image.open(io.BytesIO(session.get(url).content))
        im.load()
        if mode and im.mode != mode:
            im = im.convert(mode)
        return im.width * im.height

    def requests_download(url: str) -> int:
        session.get(url).content
        return 0

    def c(name: str, settings: str, fn: Any, *args: Any, file: str = "", slow: bool = False) -> Contestant:
        url = f"{base}/{'slow/' if slow else ''}{file}"
        return Contestant(name, settings, call=functools.partial(fn, url, *args),
                          tags={"file": file, "set": "slow" if slow else "fast"})
    jpg, png = "photo.jpg", "big.png"
    return [
        c("hc-jpeg-rgb", "hc.DecodedImage(mode=\"RGB\"), one hc.Client", hc_decode, "RGB", file=jpg),
        c("pillow-jpeg-rgb", "requests.Session().get + Image.open(BytesIO).load() (its native RGB)",
          pillow_decode, None, file=jpg),
        c("hc-jpeg-rgba", "hc.DecodedImage() (RGBA, the default)", hc_decode, "RGBA", file=jpg),
        c("pillow-jpeg-rgba", "as pillow-jpeg-rgb, then .convert(\"RGBA\")", pillow_decode, "RGBA", file=jpg),
        c("hc-png-rgb", "hc.DecodedImage(mode=\"RGB\")", hc_decode, "RGB", file=png),
        c("pillow-png-rgb", "requests + Pillow load (native RGB)", pillow_decode, None, file=png),
        c("hc-jpeg", "", hc_decode, "RGB", file=jpg, slow=True),
        c("hc-jpeg-download", "", hc_download, file=jpg, slow=True),
        c("pillow-jpeg", "", pillow_decode, None, file=jpg, slow=True),
        c("requests-jpeg-download", "", requests_download, file=jpg, slow=True),
        c("hc-png", "", hc_decode, "RGB", file=png, slow=True),
        c("hc-png-download", "", hc_download, file=png, slow=True),
        c("pillow-png", "", pillow_decode, None, file=png, slow=True),
        c("requests-png-download", "", requests_download, file=png, slow=True),
    ]


def main(argv: list[str]) -> int:
    settings = parse(argv, rounds=5, options=[
        (("--jpeg-mp",), {"type": float, "default": float(os.environ.get("BENCH_IMAGE_MP") or 24)}),
        (("--png-mp",), {"type": float, "default": float(os.environ.get("BENCH_PNG_MP") or 12)}),
        (("--rate",), {"default": os.environ.get("BENCH_RATE") or "4m"})])
    try:
        import requests
        from PIL import Image
    except ImportError:
        raise SystemExit("Pillow and requests are needed (scripts/setup.sh installs them)")
    with Session("images", "bash bench/images.sh", settings, "nginx", "client") as s:
        www = s.path("www")
        os.makedirs(www)
        photo(settings.extra.jpeg_mp).save(os.path.join(www, "photo.jpg"), quality=90)
        photo(settings.extra.png_mp).save(os.path.join(www, "big.png"), compress_level=6)
        for f in os.listdir(www):
            os.chmod(os.path.join(www, f), 0o644)
        ngx = s.nginx(http="types { image/jpeg jpg; image/png png; }",
                      server=f"location /slow/ {{ alias {www}/; limit_rate {settings.extra.rate}; }}")
        s.snapshot()
        sys.path.insert(0, s.snap["py"])
        import httpcontent as hc
        s.pinning.pin_self()
        base = f"http://127.0.0.1:{ngx['port']}"
        client = s.enter_context(hc.Client(timeout=300))
        png = client.get(f"{base}/big.png", handler=hc.DecodedImage(mode="RGB")).content
        with Image.open(os.path.join(www, "big.png")) as im:
            assert png.data == im.convert("RGB").tobytes(), "PNG pixels differ from Pillow's"
        sizes = {f: os.path.getsize(os.path.join(www, f)) for f in ("photo.jpg", "big.png")}
        dims = {f: Image.open(os.path.join(www, f)).size for f in sizes}
        cs = contestants(hc, client, requests.Session(), base)
        res = s.run(cs, warm_up=False)
    return s.publish(report(s, res, cs, sizes, dims, ngx["version"]))


def report(s: Session, res: Any, cs: list[Contestant], sizes: dict, dims: dict, nginx: str) -> list[str]:
    wall, cpu = res.of("seconds"), res.of("cpu")
    med = {c: stats.median(v.values()) for c, v in wall.items()}
    cmed = {c: stats.median(v.values()) for c, v in cpu.items()}
    mp = {f: w * h / 1e6 for f, (w, h) in dims.items()}
    rounds = list(range(1, res.rounds + 1))
    lines = [SECTION, "",
             f"{s.measured_by()}; nginx {nginx}; {s.pinning.sentence}; load average {res.load}.", "",
             "**Provisional**: the machine is shared with other engineers' builds and tests right now; "
             "the ratios (same rounds, interleaved) are the figure, absolute times are noise.", "",
             f"Images generated by the benchmark with Pillow: `photo.jpg` {dims['photo.jpg'][0]}x"
             f"{dims['photo.jpg'][1]} ({mp['photo.jpg']:.1f} MP, quality 90, {sizes['photo.jpg'] / 1e6:.1f} MB), "
             f"`big.png` {dims['big.png'][0]}x{dims['big.png'][1]} ({mp['big.png']:.1f} MP, RGB, "
             f"compress_level 6, {sizes['big.png'] / 1e6:.1f} MB). Each measurement is one GET over loopback and "
             f"the decode to pixels, from Python 3 (one process); {s.rounds_note(res)}. "
             "The PNG's pixels were checked equal to Pillow's before timing.", ""]
    fast = [c for c in cs if c.tags["set"] == "fast"]
    lines += writer.table(["contestant", "settings", "median s", "MP/s", "CPU s (median)", *(f"R{r}" for r in rounds)],
                          [(f"`{c.name}`", c.settings, f"{med[c.name]:.3f}", f"{mp[c.tags['file']] / med[c.name]:.1f}",
                            f"{cmed[c.name]:.3f}", *writer.round_cells(wall[c.name], rounds, ".3f")) for c in fast])
    lines += ["", "Ratios (Pillow's time / httpcontent's; ≥ 1.0 means httpcontent is at least as fast; "
              "target ≥ 1.0):", ""]
    lines += writer.table(["pair", "ratio of medians", "per-round min–max", "CPU ratio"],
                          [(f"`{p.den}` / `{p.num}`", f"**{med[p.den] / med[p.num]:.2f}×**",
                            stats.spread(stats.same_round(wall[p.den], wall[p.num])),
                            f"{cmed[p.den] / cmed[p.num]:.2f}×") for p in PAIRS])
    lines += ["", f"Time to the last pixel after the last byte: the same files served at nginx `limit_rate "
              f"{s.settings.extra.rate}` (meant to be slower than the decoders, so decoding can keep up), the median "
              f"decode time minus the median plain download time (same client, {res.rounds} rounds):", ""]
    lines += writer.table(["file", "httpcontent (push decoding)", "requests + Pillow (decode after download)"],
                          [(f"`{f}`", f"{max(0.0, med[h] - med[hd]) * 1000:.0f} ms (decode {med[h]:.2f} s, download "
                            f"{med[hd]:.2f} s)", f"{max(0.0, med[p] - med[pd]) * 1000:.0f} ms (decode {med[p]:.2f} s, "
                            f"download {med[pd]:.2f} s)") for f, h, hd, p, pd in SLOW_ROWS])
    lines += ["", "A progressive JPEG would keep its rows until the last scan (libjpeg decodes the scans as "
              "they come, the rows at the end); this baseline JPEG and the PNG give rows as they arrive."]
    return lines
