"""Decoded images (issue 17): PNG, JPEG, GIF and WebP decoded to pixels while the body arrives,
checked against Pillow on a corpus generated at test time (Tests/server/imagecorpus.py)."""

import ctypes
import io
import sys
from pathlib import Path

import pytest

import httpcontent as hc

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "server"))
import imagecorpus  # noqa: E402

PIL = pytest.importorskip("PIL.Image", reason="Pillow is the oracle (scripts/setup.sh installs it)")
NAMES = sorted(imagecorpus.corpus())


def _check_against_pillow(img, name, mode, orient=False):
    width, height, expected = imagecorpus.expected(name, mode, orient)
    assert (img.width, img.height, img.mode) == (width, height, mode)
    assert img.channels == len(mode) and img.stride == width * len(mode)
    assert len(img.data) == width * height * len(mode)
    if imagecorpus.exact(name):
        assert img.data == expected, f"{name} {mode}: pixels differ from Pillow's"
    else:
        worst = max(abs(a - b) for a, b in zip(img.data, expected))
        assert worst <= imagecorpus.TOLERANCE, f"{name} {mode}: a channel differs by {worst}"


@pytest.mark.parametrize("mode", ["RGBA", "RGB", "L"])
@pytest.mark.parametrize("name", NAMES)
def test_decoded_pixels_match_pillow(client, base_url, name, mode):
    r = client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage(mode=mode))
    assert r.content.format == name.split("-")[0]
    _check_against_pillow(r.content, name, mode)


@pytest.mark.parametrize("name", NAMES)
def test_pixels_are_the_same_when_the_body_arrives_in_7_byte_chunks(client, base_url, name):
    whole = client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage()).content
    chunked = client.get(f"{base_url}/pixels/{name}?chunk=7", handler=hc.DecodedImage()).content
    assert chunked.data == whole.data


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_reported_and_applied_by_option(client, base_url, orientation):
    name = f"jpeg-exif-{orientation}"
    stored = client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage()).content
    assert stored.orientation == orientation
    assert (stored.width, stored.height) == (24, 16)
    _check_against_pillow(stored, name, "RGBA")
    upright = client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage(apply_orientation=True)).content
    assert upright.orientation == orientation
    assert (upright.width, upright.height) == ((16, 24) if orientation >= 5 else (24, 16))
    _check_against_pillow(upright, name, "RGBA", orient=True)


def test_attributes_report_alpha_frames_and_orientation(client, base_url):
    def get(name):
        return client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage()).content
    assert get("png-ct6-8").has_alpha and get("png-palette-trns").has_alpha and get("png-gray-trns").has_alpha
    assert not get("png-ct2-8").has_alpha and not get("jpeg-baseline").has_alpha
    assert get("gif-transparent").has_alpha and not get("gif-opaque").has_alpha
    assert get("webp-lossless-alpha").has_alpha and not get("webp-lossy").has_alpha
    assert get("gif-animated").frame_count == 3 and get("gif-opaque").frame_count == 1
    assert get("png-ct2-8").orientation == 1 and get("png-ct2-8").frame_count == 1
    animated = get("gif-animated")
    _check_against_pillow(animated, "gif-animated", "RGBA")   # the first frame


def test_decompression_bomb_is_refused_from_its_header(client, base_url):
    # 2.5 gigapixels claimed by a 70-byte PNG: refused at the header, no pixel memory taken.
    with pytest.raises(hc.TooLarge, match="50000x50000"):
        client.get(f"{base_url}/pixels/bomb", handler=hc.DecodedImage())


def test_pixel_cap_is_settable(client, base_url):
    # png-ct2-8 is 13x11 = 143 pixels.
    with pytest.raises(hc.TooLarge, match="beyond the limit of 142"):
        client.get(f"{base_url}/pixels/png-ct2-8", handler=hc.DecodedImage(max_pixels=142))
    assert client.get(f"{base_url}/pixels/png-ct2-8", handler=hc.DecodedImage(max_pixels=143)).content.width == 13


@pytest.mark.parametrize("name", ["png-ct6-8", "png-ct2-16-adam7", "png-palette4-trns-adam7", "jpeg-baseline", "jpeg-progressive",
                                  "gif-transparent", "webp-lossy", "webp-lossless-alpha"])
def test_truncated_images_raise_decode_error(client, base_url, name):
    size = len(imagecorpus.corpus()[name][1])
    # Every cut that loses pixel data fails. What may go once every row is out: a PNG's last 21
    # bytes (the deflate end and Adler-32, IDAT's CRC, IEND), a JPEG's EOI
    # (as libjpeg tolerates), a WebP's RIFF padding byte.
    spare = {"png": 21, "jpeg": 2, "gif": 0, "webp": 2}[name.split("-")[0]]
    for cut in sorted(set(range(0, size - spare, max(1, size // 40))) | {size - spare - 1}):
        with pytest.raises(hc.DecodeError):
            client.get(f"{base_url}/pixels/{name}?truncate={cut}", handler=hc.DecodedImage())


def test_png_with_fewer_rows_than_its_header_is_an_error(client, base_url):
    good = imagecorpus.png(5, 4, 2, 8, lambda x, y: (x, y, 0))
    short = imagecorpus.png(5, 3, 2, 8, lambda x, y: (x, y, 0), claim=(5, 4))
    r = client.post(f"{base_url}/echo/raw", data=good, handler=hc.DecodedImage(accept_types=["*/*"]))
    assert r.content.height == 4
    with pytest.raises(hc.DecodeError, match="3 of 4 rows"):
        client.post(f"{base_url}/echo/raw", data=short, handler=hc.DecodedImage(accept_types=["*/*"]))


def test_corrupt_png_fails_its_crc_with_decode_error(client, base_url):
    data = bytearray(imagecorpus.corpus()["png-ct6-8"][1])
    data[60] ^= 0xFF   # inside IDAT
    with pytest.raises(hc.DecodeError, match="CRC"):
        client.post(f"{base_url}/echo/raw", data=bytes(data), handler=hc.DecodedImage(accept_types=["*/*"]))


def test_bytes_that_are_no_image_or_not_the_declared_type_raise_decode_error(client, base_url):
    with pytest.raises(hc.DecodeError, match="declared image/jpeg but the bytes are image/png"):
        client.get(f"{base_url}/pixels/png-ct2-8?ctype=image/jpeg", handler=hc.DecodedImage())
    with pytest.raises(hc.DecodeError, match="not a PNG, JPEG, GIF or WebP"):
        client.get(f"{base_url}/bytes/100?ctype=image/png", handler=hc.DecodedImage())
    with pytest.raises(hc.DecodeError, match="BMP images are not decoded"):
        client.get(f"{base_url}/image/bmp", handler=hc.DecodedImage())


def test_rows_are_reported_in_order_while_the_body_arrives(client, base_url):
    calls = []
    r = client.get(f"{base_url}/pixels/png-ct6-8?chunk=7", handler=hc.DecodedImage(on_rows=lambda f, n: calls.append((f, n))))
    assert len(calls) > 3   # not all at the end
    covered = [row for first, count in calls for row in range(first, first + count)]
    assert covered == list(range(r.content.height))


def test_an_exception_in_on_rows_stops_the_transfer_and_is_raised(client, base_url):
    def on_rows(first, count):
        raise ValueError("enough rows")
    with pytest.raises(ValueError, match="enough rows"):
        client.get(f"{base_url}/pixels/jpeg-baseline?chunk=64", handler=hc.DecodedImage(on_rows=on_rows))


def test_numpy_and_pillow_read_the_pixels_without_copying(client, base_url):
    np = pytest.importorskip("numpy")
    img = client.get(f"{base_url}/pixels/png-ct6-8", handler=hc.DecodedImage()).content
    array = np.asarray(img)
    assert array.shape == (11, 13, 4) and array.dtype == np.uint8
    address = ctypes.cast(img.data, ctypes.c_void_p).value
    assert array.__array_interface__["data"][0] == address   # a view of `data`, no copy
    assert bytes(array[2, 3]) == img.data[(2 * 13 + 3) * 4:(2 * 13 + 4) * 4]
    gray = client.get(f"{base_url}/pixels/png-ct6-8", handler=hc.DecodedImage(mode="L")).content
    assert np.asarray(gray).shape == (11, 13)
    pil = img.to_pillow()
    assert pil.mode == "RGBA" and pil.size == (13, 11) and pil.tobytes() == img.data


def test_to_png_round_trips_through_pillow(client, base_url):
    for mode in ("RGBA", "RGB", "L"):
        img = client.get(f"{base_url}/pixels/jpeg-baseline", handler=hc.DecodedImage(mode=mode)).content
        decoded = PIL.open(io.BytesIO(img.to_png()))
        assert decoded.mode == mode and decoded.tobytes() == img.data


def test_encoded_body_is_kept_only_when_asked(client, base_url):
    name = "webp-lossy"
    assert client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage()).content.encoded is None
    kept = client.get(f"{base_url}/pixels/{name}", handler=hc.DecodedImage(keep_encoded=True)).content
    assert kept.encoded == imagecorpus.corpus()[name][1]


def test_head_response_has_no_image_and_max_size_limits_the_body(client, base_url):
    assert client.request("HEAD", f"{base_url}/pixels/png-ct2-8", handler=hc.DecodedImage()).content is None
    with pytest.raises(hc.TooLarge):
        client.get(f"{base_url}/pixels/jpeg-baseline", handler=hc.DecodedImage(max_size=100))


def test_options_are_checked():
    with pytest.raises(ValueError):
        hc.DecodedImage(mode="CMYK")
    with pytest.raises(ValueError):
        hc.DecodedImage(max_pixels=0)
