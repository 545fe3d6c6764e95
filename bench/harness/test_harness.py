"""Checks of the harness's own logic (no servers, no library): `python3 -m pytest bench/harness`."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness import Contestant, Ratio, Runner, stats, tables, writer  # noqa: E402
from harness.rounds import Failed, parse_mbps  # noqa: E402


def test_rounds_interleave_with_the_first_rotating_and_keep_each_round():
    order: list[str] = []
    cs = [Contestant(n, call=lambda n=n: order.append(n)) for n in "abc"]
    res = Runner().rounds(cs, 3, 1)
    assert order == list("abcbcacab")
    assert sorted(res.of("seconds")["a"]) == [1, 2, 3]


def test_a_failed_measurement_ends_the_run_unless_told_to_keep_going():
    def boom() -> None:
        raise Failed("boom")
    cs = [Contestant("ok", call=lambda: None), Contestant("bad", call=boom)]
    try:
        Runner().rounds(cs, 1, 1)
        raise AssertionError("no Failed")
    except Failed:
        pass
    res = Runner(keep_going=True).rounds(cs, 2, 1)
    assert "bad" not in res.of("seconds") and len(res.of("seconds")["ok"]) == 2


def test_same_round_ratios_skip_rounds_either_side_lacks():
    assert stats.same_round({1: 4.0, 2: 6.0, 3: 1.0}, {1: 2.0, 3: 0.0, 4: 5.0}) == [2.0]
    assert stats.summary([1.0, 2.0, 4.0]) == "2.00 (1.00–4.00)"
    assert stats.verdict("≥ 1.5", [1.4, 1.6, 1.7]) == "met"
    assert stats.verdict("> 1", [1.0]) == "**missed**"


def test_mbps_line_gives_cpu_per_gigabyte():
    m = parse_mbps("MBPS 100.0 bytes=2000000000 seconds=20 cpu=3.0 rss=5")
    assert m["mbps"] == 100.0 and m["cpu_s_per_gb"] == 1.5 and m["rss"] == 5


def test_section_is_replaced_between_markers_then_by_heading_and_others_are_kept(tmp_path):
    path = tmp_path / "B.md"
    path.write_text("# Benchmarks\n\n## A\n\nold a\n\n## B\n\nold b\n")
    writer.replace_section(str(path), "a", "## A", "## A\n\nnew a\n")
    doc = path.read_text()
    assert "old a" not in doc and "new a" in doc and "old b" in doc and "<!-- bench:a -->" in doc
    writer.replace_section(str(path), "a", "## A", "## A\n\nnewer a\n")
    doc = path.read_text()
    assert doc.count("## A") == 1 and "newer a" in doc and doc.index("newer a") < doc.index("## B")


def test_ratio_table_uses_cpu_of_the_baseline_over_the_contestant():
    cs = [Contestant("hc", call=lambda: None), Contestant("raw", call=lambda: None)]
    res = Runner().rounds(cs, 1, 1)
    res.add("hc", 1, {"mbps": 200.0, "cpu_s_per_gb": 1.0})
    res.add("raw", 1, {"mbps": 100.0, "cpu_s_per_gb": 2.0})
    row = tables.ratio_rows([Ratio("hc", "raw", "≥ 1.5")], res)[2]
    assert row.startswith("| hc / raw |") and row.count("2.00 (2.00–2.00)") == 2 and row.endswith("met | met |")
