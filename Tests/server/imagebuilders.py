"""Small valid images of every format the Image handler sniffs (PNG, JPEG, GIF, WebP, BMP), and
a PNG whose header claims more pixels than it has, built from the standard library alone, for
the test server's /image/... endpoints (testserver.py)."""

import struct
import zlib


def _png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png(width=3, height=2, claim=None):
    cw, ch = claim or (width, height)
    ihdr = struct.pack(">IIBBBBB", cw, ch, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\x00" + b"".join(bytes((x * 80, y * 120, 200)) for x in range(width))
                    for y in range(height))  # filter byte 0 + RGB pixels per row
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr)
            + _png_chunk(b"IDAT", zlib.compress(rows)) + _png_chunk(b"IEND", b""))


def make_jpeg(width=3, height=2):
    """Baseline grayscale JPEG: one 8x8 block, DC diff 0, immediate EOB (mid grey)."""
    def seg(marker, payload):
        return bytes((0xFF, marker)) + struct.pack(">H", len(payload) + 2) + payload
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dqt = b"\x00" + bytes([1] * 64)
    sof0 = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    counts_one_len1 = b"\x01" + b"\x00" * 15       # a single code of length 1 ("0")
    dht_dc = b"\x00" + counts_one_len1 + b"\x00"   # DC table 0: symbol 0 (diff 0)
    dht_ac = b"\x10" + counts_one_len1 + b"\x00"   # AC table 0: symbol 0x00 (EOB)
    sos = b"\x01\x01\x00\x00\x3f\x00"
    scan = b"\x3f"                                  # bits "00" + padding ones
    return (b"\xff\xd8" + seg(0xE0, app0) + seg(0xDB, dqt) + seg(0xC0, sof0)
            + seg(0xC4, dht_dc) + seg(0xC4, dht_ac) + seg(0xDA, sos) + scan + b"\xff\xd9")


def make_gif(width=3, height=2):
    # LZW, min code size 2: clear(4) before every 2 literals keeps codes at 3 bits.
    codes = []
    pixels = [(x + y) % 2 for y in range(height) for x in range(width)]
    for i in range(0, len(pixels), 2):
        codes.append(4)
        codes.extend(pixels[i:i + 2])
    codes.append(5)
    acc = nbits = 0
    out = bytearray()
    for code in codes:
        acc |= code << nbits
        nbits += 3
        while nbits >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    if nbits:
        out.append(acc & 0xFF)
    return (b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0)
            + b"\xff\x00\x00\x00\x00\xff"                      # 2-colour palette
            + b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
            + b"\x02" + bytes((len(out),)) + bytes(out) + b"\x00" + b"\x3b")


def make_webp(width=3, height=2):
    """Lossless VP8L: no transforms, five single-symbol prefix codes (0 bits/pixel)."""
    fields = [(0x2F, 8), (width - 1, 14), (height - 1, 14), (0, 1), (0, 3),
              (0, 1), (0, 1), (0, 1)]          # no transform, no colour cache, no meta codes
    for symbol in (0x80, 0x40, 0xC0, 0xFF):     # green, red, blue, alpha
        fields += [(1, 1), (0, 1), (1, 1), (symbol, 8)]
    fields += [(1, 1), (0, 1), (0, 1), (0, 1)]  # distance: symbol 0
    acc = nbits = 0
    for value, bits in fields:
        acc |= value << nbits
        nbits += bits
    data = acc.to_bytes((nbits + 7) // 8, "little")
    chunk = b"VP8L" + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) % 2 else b"")
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def make_bmp(width=3, height=2):
    stride = (width * 3 + 3) & ~3
    pixels = b"".join((b"".join(bytes((200, y * 120, x * 80)) for x in range(width))
                       ).ljust(stride, b"\x00") for y in range(height))
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    header = b"BM" + struct.pack("<IHHI", 14 + len(info) + len(pixels), 0, 0, 14 + len(info))
    return header + info + pixels


IMAGES = {
    "png": ("image/png", make_png()),
    "jpeg": ("image/jpeg", make_jpeg()),
    "jpg": ("image/jpeg", make_jpeg()),
    "gif": ("image/gif", make_gif()),
    "webp": ("image/webp", make_webp()),
    "bmp": ("image/bmp", make_bmp()),
    "lying-png": ("image/png", make_png(claim=(100000, 100000))),
}
