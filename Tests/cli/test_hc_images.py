"""`hc get URL --as image`: the body decoded to pixels (issue 17), its facts and a CRC-32 of the
RGBA pixels printed, and `-o FILE` saving a decoded copy as PNG, checked with Pillow."""

from __future__ import annotations

import io
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "server"))
import imagecorpus  # noqa: E402

Image = pytest.importorskip("PIL.Image", reason="Pillow is the oracle")


def run(hc, *args):
    return subprocess.run([hc, *args], capture_output=True, timeout=60)


@pytest.mark.parametrize("name", ["png-ct6-16-adam7", "jpeg-progressive", "gif-transparent", "webp-lossless-alpha"])
def test_as_image_prints_format_size_and_pixel_checksum(hc, base_url, name):
    out = run(hc, "get", "--as", "image", f"{base_url}/pixels/{name}")
    assert out.returncode == 0, out.stderr.decode()
    width, height, pixels = imagecorpus.expected(name, "RGBA")
    line = out.stdout.decode()
    assert line.startswith(f"{name.split('-')[0]} image, {width}x{height} pixels, RGBA")
    if imagecorpus.exact(name):
        assert f"pixels crc32 {zlib.crc32(pixels):08x}" in line


def test_as_image_with_o_saves_a_decoded_png_copy(hc, base_url, tmp_path):
    target = tmp_path / "copy.png"
    out = run(hc, "get", "--as", "image", "-o", str(target), f"{base_url}/pixels/gif-transparent")
    assert out.returncode == 0, out.stderr.decode()
    saved = Image.open(io.BytesIO(target.read_bytes()))
    assert saved.format == "PNG" and saved.mode == "RGBA"
    assert saved.tobytes() == imagecorpus.expected("gif-transparent", "RGBA")[2]
    assert [p.name for p in tmp_path.iterdir()] == ["copy.png"]   # no temporary left


def test_as_image_fails_with_decode_exit_code_and_leaves_no_file(hc, base_url, tmp_path):
    target = tmp_path / "copy.png"
    out = run(hc, "get", "--as", "image", "-o", str(target), f"{base_url}/pixels/jpeg-baseline?truncate=500")
    assert out.returncode == 7 and b"truncated" in out.stderr
    assert not list(tmp_path.iterdir())
    out = run(hc, "get", "--as", "image", f"{base_url}/pixels/bomb")
    assert out.returncode == 8 and b"50000x50000" in out.stderr
