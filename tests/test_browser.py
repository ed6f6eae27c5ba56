"""HTML that longfat writes, opened in a real browser (headless Chromium,
see tests/browser.py): a reproduction's report.html renders its tables and
figures with no errors (a fresh --quick one and the committed full-mode
ones); and the check itself fails on a broken page."""

import base64
import json
import struct
from pathlib import Path

import pytest

from browser import check_page, require_browser
from conftest import ROOT, run_cli


def _tables(doc: dict) -> list[int]:
    """The rows (with the header) of each table a report.html should show,
    from its results.json: a report that says it opens with the claims has
    their table first (claim rows: scope claim, not a negative control);
    then, where it states its coverage, a row per figure of the paper; then
    one table per section."""
    first = []
    if doc["meta"].get("layout") == "claims first":
        claims = [r for s in doc["sections"] for r in s["rows"]
                  if (r["check"].get("scope") or "claim") == "claim" and r["check"].get("role") != "control"]
        first = [len(claims) + 1]
    if "coverage" in doc["meta"]:
        first.append(len(doc["meta"]["coverage"]) + 1)
    return first + [len(s["rows"]) + 1 for s in doc["sections"]]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_reproduction_report_renders_in_a_browser(tmp_path):
    require_browser()  # before the runs: a skip costs nothing
    r = run_cli("reproduce", "ltcp", "--quick", "--jobs", "1", "--out", str(tmp_path / "rep"), "-q", timeout=600)
    assert r.returncode == 0, r.stderr
    d = tmp_path / "rep" / "ltcp"
    doc = json.loads((d / "results.json").read_text())
    page = check_page(d / "report.html", tmp_path / "report.png")
    assert page["problems"] == [], page["problems"]
    assert page["title"] == f"Reproduction: {doc['meta']['title']}"
    # The claims first, then one table per section, a header row and one row per compared quantity.
    assert doc["meta"]["layout"] == "claims first"
    assert [t["rows"] for t in page["tables"]] == _tables(doc)
    # Every figure is inlined (the page stands alone), decoded at the PNG's own size.
    figures = [f for s in doc["sections"] for f in s["figures"]]
    assert len(page["images"]) == len(figures) > 0
    for img, fig in zip(page["images"], figures):
        assert img["src"].startswith("data:image/png;base64,"), img["src"]
        assert (img["naturalWidth"], img["naturalHeight"]) == png_size((d / fig).read_bytes())
        assert img["width"] > 100 and img["height"] > 50, img
    shot = page["screenshot"]
    assert shot["width"] == 1280 and shot["height"] > 900 * len(doc["sections"]) // 2 and shot["colors"] > 50, shot


@pytest.mark.parametrize("paper", ["ltcp", "htcp", "ehstcp", "tcpgt", "plt"])
def test_committed_reports_render_in_a_browser(paper, tmp_path):
    """The full-mode reports committed under docs/reproductions/."""
    d = ROOT / "docs" / "reproductions" / paper
    doc = json.loads((d / "results.json").read_text())
    page = check_page(d / "report.html", tmp_path / "report.png")
    assert page["problems"] == [], page["problems"]
    assert [t["rows"] for t in page["tables"]] == _tables(doc)
    assert len(page["images"]) == sum(len(s["figures"]) for s in doc["sections"]) > 0
    assert page["screenshot"]["height"] > 2000 and page["screenshot"]["colors"] > 50, page["screenshot"]


def _page(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / name
    p.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{name}</title></head><body>{body}</body></html>")
    return p


def test_browser_check_catches_a_broken_page(tmp_path):
    import matplotlib.pyplot as plt
    import numpy as np

    require_browser()
    png = tmp_path / "ok.png"
    plt.imsave(png, np.random.default_rng(1).random((40, 60)))
    inline = "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")
    table = "<h1>Report</h1><table><tr><th>what</th><th>value</th></tr><tr><td>goodput</td><td>9.5</td></tr></table>"
    # The same page without the faults passes: a linked and an inlined image, a table.
    good = check_page(_page(tmp_path, "good.html", f"{table}<img src='ok.png'><img src='{inline}'>"), tmp_path / "good.png")
    assert good["problems"] == [], good["problems"]
    assert [t["rows"] for t in good["tables"]] == [2]
    assert [(i["naturalWidth"], i["naturalHeight"], i["decoded"]) for i in good["images"]] == [(60, 40, True)] * 2
    bad = check_page(
        _page(
            tmp_path,
            "bad.html",
            f"{table}<img src='ok.png'><img src='missing.png'><img src='data:image/png;base64,AAAAAAAA'>"
            "<img src='https://example.invalid/logo.png'>"
            "<script>console.error('figure failed');</script><script>undefinedFunction();</script>",
        ),
        tmp_path / "bad.png",
    )
    problems = "\n".join(bad["problems"])
    assert [i["decoded"] for i in bad["images"]] == [True, False, False, False], bad["images"]
    assert "figure failed" in bad["console_errors"]
    assert any("undefinedFunction" in e for e in bad["page_errors"]), bad["page_errors"]
    assert any(f.startswith((tmp_path / "missing.png").as_uri()) for f in bad["failed_requests"]), bad["failed_requests"]
    assert bad["outside_requests"] == ["https://example.invalid/logo.png"]
    for what in ("image 1 ('missing.png')", "image 2 ('data:image/png;base64,AAAAAAAA')", "image 3", "console error: figure failed", "script error:"):
        assert what in problems, problems
    # A page that renders nothing: a blank screenshot, an empty table.
    blank = check_page(_page(tmp_path, "blank.html", "<table></table>"), tmp_path / "blank.png")
    assert blank["screenshot"]["colors"] == 1
    assert [p.split(":")[0] for p in blank["problems"]] == ["table 0 is empty or not laid out", "screenshot is blank or tiny"], blank["problems"]


def check_heatmap_leads_the_summary(page: dict, card_dir: Path) -> None:
    """The suite card's heat map: the first image, in figure#heatmap, loaded
    at the PNG's own size and shown at that size in a 1280 px window (so
    its 7-point text stays legible: not scaled down), and laid out above
    the summary table."""
    from longfat.suite import HEATMAP_FILE

    img = page["images"][0]
    assert [i["figure"] for i in page["images"]].count("heatmap") == 1 and img["figure"] == "heatmap", page["images"]
    w, h = png_size((card_dir / HEATMAP_FILE).read_bytes())
    assert (img["naturalWidth"], img["naturalHeight"]) == (w, h) and 800 <= w <= 1400 and 300 <= h <= 1400, (img, w, h)
    assert abs(img["width"] - w) < 1 and abs(img["height"] - h) < 1, img
    summary = [t for t in page["tables"] if t["id"] == "summary"]
    assert len(summary) == 1 and img["top"] + img["height"] <= summary[0]["top"], (img, summary)


def test_suite_card_renders_in_a_browser(tmp_path):
    """`longfat suite --quick` end to end on the executor (2 local Dask
    workers) into a study; its card.html, loaded from disk in Chromium,
    renders every table and figure without errors; a second invocation
    reuses every stored run."""
    require_browser()
    out, study = tmp_path / "card", tmp_path / "study"
    args = ["suite", "--cc", "reno,cubic", "--quick", "--workers", "2", "--out", str(out), "--study", str(study), "-q"]
    r = run_cli(*args, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "card.json").read_text())
    n = doc["runs"]
    assert f"{n} runs, {n} made now, 0 from {study}" in " ".join(r.stdout.split())
    page = check_page(out / "card.html", tmp_path / "card.png")
    assert page["problems"] == [], page["problems"]
    # The summary table: a header row, then one row per algorithm and path.
    summary = page["tables"][0]
    assert summary["rows"] >= 1 + len(doc["algorithms"]) * len(doc["paths"]) and summary["width"] > 300
    assert all(t["rows"] >= 2 and t["height"] > 0 for t in page["tables"])
    assert len(page["images"]) == len(doc["figures"]) > 0
    for img, fig in zip(page["images"], doc["figures"]):
        assert img["src"].startswith("data:image/png;base64,")
        assert (img["naturalWidth"], img["naturalHeight"]) == png_size((out / fig["file"]).read_bytes())
    check_heatmap_leads_the_summary(page, out)
    assert page["screenshot"]["colors"] > 50
    # Again, into a new card: every run comes from the study.
    r = run_cli(*[a if a != str(out) else str(tmp_path / "card2") for a in args], timeout=600)
    assert r.returncode == 0, r.stderr
    assert f"{n} runs, 0 made now, {n} from {study}" in " ".join(r.stdout.split())
    assert json.loads((tmp_path / "card2" / "card.json").read_text())["scores"] == doc["scores"]


def test_committed_suite_card_renders_in_a_browser(tmp_path):
    require_browser()
    card = ROOT / "docs" / "suite"
    doc = json.loads((card / "card.json").read_text())
    assert doc["quick"] is False and len(doc["algorithms"]) == 14 and "bbr" in doc["algorithms"]
    # The FQ-CoDel column: PLT has no cell (it needs priority classes); a
    # loss-based flow that fills the 1-BDP FIFO (CUBIC, on both paths) waits
    # less than CoDel's 5 ms target behind FQ-CoDel, and less than behind
    # the FIFO. Not Reno at 1 Gbit/s: it never fills that buffer in the run.
    aqm_delay, fifo_delay = doc["scores"]["aqm_queue_delay_ms"], doc["scores"]["queue_delay_ms"]
    assert all(c["n"] == 0 for p in aqm_delay["plt"].values() for c in p.values())
    for path in doc["paths"]:
        cubic = aqm_delay["cubic"][path]["-"]
        assert cubic["n"] == 3 and 0.0 < cubic["mean"] < 5.0 < fifo_delay["cubic"][path]["1"]["mean"], (path, cubic)
    page = check_page(card / "card.html", tmp_path / "card.png")
    assert page["problems"] == [], page["problems"]
    assert page["tables"][0]["rows"] >= 1 + len(doc["algorithms"]) * len(doc["paths"])
    assert len(page["images"]) == len(doc["figures"]) > 0
    check_heatmap_leads_the_summary(page, card)
    md = (card / "card.md").read_text()
    assert md.index("## Summary") < md.index("](summary_heatmap.png)") < md.index("| algorithm | path |")
