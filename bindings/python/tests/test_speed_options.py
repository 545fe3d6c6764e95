"""The speed options of issue 15 from Python: libcurl's buffers and downloads without fsync."""

import os

import pytest

import httpcontent as hc


class LargestChunk(hc.Handler):
    def accept(self, head):
        self.largest = 0
        return True

    def consume(self, chunk):
        self.largest = max(self.largest, len(chunk))

    def finish(self):
        return self.largest


def test_the_receive_buffer_bounds_every_chunk(base_url):
    with hc.Client(timeout=20, buffer_size=4096) as c:
        assert 0 < c.get(f"{base_url}/bytes/1000000", handler=LargestChunk()).content <= 4096
    with pytest.raises(hc.InvalidArgument, match="receive buffer"):
        hc.Client(buffer_size=100)
    with pytest.raises(hc.InvalidArgument, match="upload buffer"):
        hc.Client(upload_buffer_size=3 << 20)


def test_a_download_without_fsync_is_complete(client, base_url, tmp_path):
    target = tmp_path / "out.bin"
    r = client.get(f"{base_url}/bytes/300000", handler=hc.File(target, fsync=False))
    assert r.content.size == 300000 and target.read_bytes() == bytes(i % 251 for i in range(300000))


# More than two of the library's 16 MiB write-behind windows (WriteBehind.swift): the early
# windows are written back and released while the body streams.
BIG = 40_000_000


@pytest.mark.parametrize("fsync", [True, False])
def test_a_download_of_several_write_behind_windows_is_whole(client, base_url, tmp_path, fsync):
    target = tmp_path / "out.bin"
    r = client.get(f"{base_url}/bytes/{BIG}", handler=hc.File(target, fsync=fsync))
    assert r.content.size == BIG
    assert target.read_bytes() == (bytes(range(251)) * (BIG // 251 + 1))[:BIG]


@pytest.mark.parametrize("fsync", [True, False])
def test_a_download_failing_after_several_windows_leaves_the_old_file_only(client, base_url, tmp_path, fsync):
    target = tmp_path / "out.bin"
    target.write_bytes(b"previous")
    seen = [0]

    def note(p):
        seen[0] = max(seen[0], p["received"])
        return False

    with pytest.raises(hc.TransportError):
        client.get(f"{base_url}/truncated?bytes={BIG}", handler=hc.File(target, fsync=fsync), progress=note)
    assert seen[0] > 2 * (16 << 20)  # failed after windows were written back and released
    assert target.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["out.bin"]
