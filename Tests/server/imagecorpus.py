"""The decoded-image test corpus, generated at test time (nothing binary is committed), and
Pillow's decoding of it as the oracle.

    from imagecorpus import corpus, expected
    ctype, data = corpus()["png-rgba-16"]
    width, height, pixels = expected("png-rgba-16", "RGBA")

PNGs are written here byte by byte (every colour type and bit depth, Adam7 interlacing, tRNS),
since Pillow cannot write most of them; JPEG, GIF and WebP are written by Pillow.
"""

from __future__ import annotations

import array
import functools
import io
import struct
import warnings
import zlib

# Every PNG colour type with its allowed bit depths.
PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _pack_row(samples: list[int], depth: int) -> bytes:
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def png(width: int, height: int, ctype: int, depth: int, pixel, *, palette=None, trns=None,
        interlace: bool = False, claim=None) -> bytes:
    """A PNG whose pixel (x, y) has the samples pixel(x, y) (a tuple of channel values)."""
    rows = [[v for x in range(width) for v in pixel(x, y)] for y in range(height)]
    ch = PNG_CHANNELS[ctype]
    raw = bytearray()
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            xs = range(x0, width, dx)
            if not xs:
                continue
            for y in range(y0, height, dy):
                raw.append(0)
                raw += _pack_row([rows[y][x * ch + c] for x in xs for c in range(ch)], depth)
    else:
        for row in rows:
            raw.append(0)
            raw += _pack_row(row, depth)
    w, h = claim or (width, height)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, int(interlace)))
    if palette is not None:
        out += _chunk(b"PLTE", bytes(v for rgb in palette for v in rgb))
    if trns is not None:
        out += _chunk(b"tRNS", trns)
    return out + _chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + _chunk(b"IEND", b"")


def _sample(x: int, y: int, c: int, depth: int) -> int:
    """A deterministic pattern covering the sample range."""
    top = (1 << depth) - 1
    return (x * 37 + y * 101 + c * 59 + x * y * 13) % (top + 1) if depth <= 8 else \
        (x * 4099 + y * 12289 + c * 30011 + x * y * 977) % (top + 1)


def _png_corpus() -> dict[str, bytes]:
    out = {}
    w, h = 13, 11
    for ctype, depths in PNG_DEPTHS.items():
        for depth in depths:
            for interlace in (False, True):
                name = f"png-ct{ctype}-{depth}" + ("-adam7" if interlace else "")
                if ctype == 3:
                    n = 1 << depth
                    palette = [((i * 67) % 256, (i * 29 + 7) % 256, (i * 151 + 3) % 256) for i in range(n)]
                    out[name] = png(w, h, 3, depth, lambda x, y, d=depth: (_sample(x, y, 0, d),),
                                    palette=palette, interlace=interlace)
                else:
                    ch = PNG_CHANNELS[ctype]
                    out[name] = png(w, h, ctype, depth,
                                    lambda x, y, d=depth, ch=ch: tuple(_sample(x, y, c, d) for c in range(ch)),
                                    interlace=interlace)
    # Transparency by tRNS: gray key, RGB key, palette alphas (8-bit and 4-bit indices).
    out["png-gray-trns"] = png(w, h, 0, 8, lambda x, y: ((x * 20) % 256,), trns=struct.pack(">H", 40))
    out["png-rgb-trns"] = png(w, h, 2, 8, lambda x, y: ((x * 20) % 256, 7, 9), trns=struct.pack(">HHH", 40, 7, 9))
    pal = [(i * 16, 255 - i * 16, (i * 40) % 256) for i in range(16)]
    out["png-palette-trns"] = png(w, h, 3, 8, lambda x, y: ((x + y) % 16,), palette=pal,
                                  trns=bytes([0, 128, 255, 30]))
    out["png-palette4-trns-adam7"] = png(w, h, 3, 4, lambda x, y: ((x * y) % 16,), palette=pal,
                                         trns=bytes([0, 64]), interlace=True)
    return out


def _photo(width: int, height: int, mode: str = "RGB"):
    from PIL import Image
    im = Image.new("RGB", (width, height))
    im.putdata([((x * 255) // width, (y * 255) // height, ((x + y) * 7) % 256)
                for y in range(height) for x in range(width)])
    return im.convert(mode)


def _save(im, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _exif(orientation: int) -> bytes:
    from PIL import Image
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def _others() -> dict[str, bytes]:
    from PIL import Image
    out = {}
    photo = _photo(48, 32)
    out["jpeg-baseline"] = _save(photo, "JPEG", quality=90)
    out["jpeg-progressive"] = _save(photo, "JPEG", quality=90, progressive=True)
    out["jpeg-gray"] = _save(photo.convert("L"), "JPEG", quality=90)
    out["jpeg-cmyk"] = _save(photo.convert("CMYK"), "JPEG", quality=90)
    out["jpeg-420"] = _save(_photo(37, 23), "JPEG", quality=75, subsampling=2)
    for o in range(1, 9):
        out[f"jpeg-exif-{o}"] = _save(_photo(24, 16), "JPEG", quality=90, exif=_exif(o))
    pal = Image.new("P", (20, 18))
    pal.putpalette([v for i in range(256) for v in ((i * 5) % 256, (i * 11) % 256, (i * 17) % 256)])
    pal.putdata([(x * 3 + y * 5) % 32 for y in range(18) for x in range(20)])
    out["gif-transparent"] = _save(pal, "GIF", transparency=3)
    out["gif-opaque"] = _save(pal, "GIF", interlace=False)
    out["gif-interlaced"] = _save(pal, "GIF", interlace=True, transparency=5)
    frames = [pal.point(lambda v, k=k: (v + k) % 32) for k in range(3)]
    out["gif-animated"] = _save(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)
    rgba = _photo(30, 20, "RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize((30, 20)))
    out["webp-lossy"] = _save(photo, "WEBP", quality=80)
    out["webp-lossless"] = _save(photo, "WEBP", lossless=True)
    out["webp-lossless-alpha"] = _save(rgba, "WEBP", lossless=True, exact=True)
    out["webp-lossy-alpha"] = _save(rgba, "WEBP", quality=80)
    return out


# Images whose pixels must equal Pillow's byte for byte; the others (JPEG, lossy WebP) within
# TOLERANCE per channel, since IDCT and upsampling implementations differ.
TOLERANCE = 2


def exact(name: str) -> bool:
    return name.startswith(("png", "gif", "webp-lossless"))


@functools.lru_cache(maxsize=None)
def corpus() -> dict[str, tuple[str, bytes]]:
    """name -> (content type, bytes)."""
    out = {name: ("image/png", data) for name, data in _png_corpus().items()}
    for name, data in _others().items():
        out[name] = ("image/" + name.split("-")[0], data)
    return out


def bomb() -> bytes:
    """A tiny PNG whose header claims 50000 x 50000 pixels (2.5 gigapixels)."""
    return png(2, 2, 2, 8, lambda x, y: (1, 2, 3), claim=(50000, 50000))


@functools.lru_cache(maxsize=None)
def expected(name: str, mode: str = "RGBA", orient: bool = False) -> tuple[int, int, bytes]:
    """Pillow's decoding of corpus()[name] as (width, height, pixels in `mode`). 16-bit gray
    (Pillow's I;16) keeps the high byte, as the decoder does (Pillow would clip to 255)."""
    from PIL import Image, ImageOps
    im = Image.open(io.BytesIO(corpus()[name][1]))
    im.load()
    if orient:
        im = ImageOps.exif_transpose(im)
    if im.mode in ("I;16", "I;16B", "I"):
        samples = array.array("H", im.tobytes("raw", "I;16"))   # little-endian, as this machine
        high = bytes(v >> 8 for v in samples)
        im = Image.frombytes("L", im.size, high)
    with warnings.catch_warnings():   # Pillow's advice on palette transparency, not a problem
        warnings.simplefilter("ignore")
        return im.width, im.height, im.convert(mode).tobytes()
