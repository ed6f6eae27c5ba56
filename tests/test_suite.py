"""longfat.suite: the cells, the measurements and the report card.

The quick suite (2 algorithms, 2 small paths, 2 seeds) runs once per module
through longfat.run, sequentially (a few seconds)."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest

import longfat
from longfat import suite
from longfat.suite import Obs, aggregate, convergence_time, time_to_hold

ALGOS = ["reno", "cubic", "bbr"]


@pytest.fixture(scope="module")
def quick_card(tmp_path_factory):
    cells = suite.cells(ALGOS, quick=True)
    results = [(c.labels, longfat.run(c.scenario)) for c in cells]
    card = suite.analyse(reversed(results))  # any order
    out = tmp_path_factory.mktemp("card")
    suite.write_card(card, out, {"command": "pytest", "workers": 1})
    return cells, card, out


# ---- the cells ----------------------------------------------------------------------


def test_cells_cover_the_design_and_are_json_scalars():
    cells = suite.cells(["reno", "plt"], seeds=2)
    # 2 algorithms x 2 paths x 2 seeds x (4 buffers + fairness + 2 RTT ratios + friendliness + responsiveness),
    # and Reno's run behind FQ-CoDel per path and seed (PLT has none: an AQM link has no priority classes)
    assert len(cells) == 2 * 2 * 2 * (4 + 1 + 2 + 1 + 1) + 2 * 2
    keys = set()
    for c in cells:
        for v in c.labels.values():
            assert isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v))
        assert c.scenario["run"]["seed"] == c.labels["seed"]
        assert c.cost > 0
        # PLT's cells on a priority link (its low-priority module needs a class), the AQM cells behind
        # FQ-CoDel, the others on a FIFO
        want = "fq_codel" if c.labels["experiment"] == "aqm" else "priority" if c.labels["cc"] == "plt" else "droptail"
        assert c.scenario["network"]["bottleneck"].get("discipline", "droptail") == want
        k = json.dumps(c.labels, sort_keys=True)
        assert k not in keys, f"two cells with labels {k}"
        keys.add(k)
    # the 1 Gbit/s runs cost more than the 100 Mbit/s ones of the same experiment
    eff = {c.labels["bdp"]: c.cost for c in cells if c.labels["experiment"] == "efficiency"}
    assert eff["1Gbps-160ms"] > eff["100Mbps-40ms"]
    # every cell is accepted by the simulator (built, not run)
    for c in cells:
        if c.labels["seed"] == 1 and c.labels["cc"] == "plt":
            longfat.runner.prepare(c.scenario)


def test_aqm_cells_are_the_full_buffer_efficiency_runs_behind_fq_codel():
    """The FQ-CoDel column compares with the 100 % BDP drop-tail column only
    if the two runs differ in the discipline alone."""
    cells = suite.cells(["cubic", "bbr", "plt"], seeds=2)
    aqm = [c for c in cells if c.labels["experiment"] == "aqm"]
    assert sorted({c.labels["cc"] for c in aqm}) == ["bbr", "cubic"]
    assert len(aqm) == 2 * 2 * 2  # per algorithm, path and seed
    eff = {(c.labels["cc"], c.labels["bdp"], c.labels["seed"]): c for c in cells
           if c.labels["experiment"] == "efficiency" and c.labels["buffer_bdp"] == suite.AQM_BUFFER}
    for c in aqm:
        assert c.labels["discipline"] == "fq_codel" and c.labels["buffer_bdp"] == 1.0
        twin = eff[(c.labels["cc"], c.labels["bdp"], c.labels["seed"])]
        a, b = json.loads(json.dumps(c.scenario)), json.loads(json.dumps(twin.scenario))
        assert a["network"]["bottleneck"].pop("discipline") == "fq_codel"
        assert "discipline" not in b["network"]["bottleneck"]
        assert a.pop("name") != b.pop("name")
        assert a == b
        assert c.cost == twin.cost
        longfat.runner.prepare(c.scenario)  # accepted by the simulator


def test_cells_refuse_bad_arguments():
    with pytest.raises(ValueError):
        suite.cells([])
    with pytest.raises(ValueError):
        suite.cells(["reno", "reno"])
    with pytest.raises(ValueError):
        suite.cells(["reno"], seeds=0)


def test_rtt_ratio_cells_have_the_stated_rtts():
    c = [c for c in suite.cells(["reno"], seeds=1) if c.labels["experiment"] == "rtt_unfairness" and c.labels["rtt_ratio"] == 4][0]
    spec = c.scenario
    d_b = float(spec["network"]["bottleneck"]["delay"].removesuffix("ms"))
    rtts = {f["name"]: 2 * (float(f["access_delay"].removesuffix("ms")) + d_b) for f in spec["flows"]}
    path_rtt = float(spec["network"]["bdp_rtt"].removesuffix("ms"))
    assert rtts["long"] == pytest.approx(path_rtt)
    assert rtts["short"] == pytest.approx(path_rtt / 4)


# ---- measurement functions on hand-made series ------------------------------------


def _ramp():
    t = np.arange(0, 101, dtype=float)
    old = np.full_like(t, 10.0)
    new = np.clip(t - 10, 0, 10)  # 0 until 10 s, then +1 per second, 10 from 20 s
    return t, new, old


def test_convergence_time_hand_derived():
    t, new, old = _ramp()
    # no smoothing (1 sample): new >= 0.8 (new + 10) / 2  <=>  new >= 20/3 -> t = 17
    assert convergence_time(t, new, old, 10.0, 0.8, smooth_s=1.0, hold_s=5.0) == Obs(7.0, False)
    # 95 %: new >= 0.95 (new + 10) / 2  <=>  new >= 9.0476 -> t = 20
    assert convergence_time(t, new, old, 10.0, 0.95, smooth_s=1.0, hold_s=5.0) == Obs(10.0, False)
    # 3-sample trailing mean of the ramp is t - 11 (12 <= t <= 20): >= 20/3 at t = 18
    assert convergence_time(t, new, old, 10.0, 0.8, smooth_s=3.0, hold_s=5.0) == Obs(8.0, False)


def test_convergence_needs_the_level_held():
    t = np.arange(0, 101, dtype=float)
    old = np.full_like(t, 10.0)
    new = np.where(t >= 10, 10.0, 0.0)
    new[13] = 0.0  # a dip 3 s after the start breaks the first stretch
    assert convergence_time(t, new, old, 10.0, 0.8, smooth_s=1.0, hold_s=5.0) == Obs(4.0, False)
    # with a hold of 2 s the first stretch (10..12 s) is long enough
    assert convergence_time(t, new, old, 10.0, 0.8, smooth_s=1.0, hold_s=2.0) == Obs(0.0, False)


def test_convergence_never_reached_is_censored():
    t = np.arange(0, 101, dtype=float)
    old = np.full_like(t, 10.0)
    new = np.where(t >= 10, 5.0, 0.0)  # holds 2 x 5 / 15 = 67 % of its fair share for ever
    o = convergence_time(t, new, old, 10.0, 0.8, smooth_s=1.0, hold_s=5.0)
    assert o.censored and o.value == 90.0  # observed for 90 s after the start, not reached
    s = aggregate([o, Obs(30.0)])
    assert s.censored == 1 and s.lo is None and s.hi is None
    assert s.mean == 60.0  # a lower bound: (90 + 30) / 2
    assert s.text().startswith("> 60") and "1/2 not reached" in s.text()


def test_time_to_hold_cut_off_by_the_end_is_censored():
    t = np.arange(0, 21, dtype=float)
    ok = t >= 18  # holds for the last 2 s only
    assert time_to_hold(t, ok, 0.0, hold_s=5.0) == Obs(20.0, True)
    assert time_to_hold(t, ok, 0.0, hold_s=2.0) == Obs(18.0, False)


def test_confidence_interval_hand_derived():
    # mean 2, sd 1, n 3: half-width t(0.975, 2) x 1 / sqrt(3) = 4.303 / 1.7321 = 2.4843
    s = aggregate([Obs(1.0), Obs(2.0), Obs(3.0)])
    assert s.mean == pytest.approx(2.0)
    assert s.lo == pytest.approx(2.0 - 2.4843, abs=1e-3)
    assert s.hi == pytest.approx(2.0 + 2.4843, abs=1e-3)
    assert s.n == 3 and s.censored == 0
    # clipped to the metric's range
    c = aggregate([Obs(1.0), Obs(2.0), Obs(3.0)], bounds=(0.0, 4.0))
    assert c.lo == 0.0 and c.hi == 4.0
    # a NaN gives no number
    assert aggregate([Obs(1.0), Obs(float("nan"))]).mean is None
    assert aggregate([]).text() == "n/a"


# ---- the quick suite, end to end ------------------------------------------------------


class _Tables(HTMLParser):
    """Collects the summary table's rows and header cells, and the images."""

    def __init__(self):
        super().__init__()
        self.in_summary = False
        self.rows: list[dict] = []
        self.criteria: list[str] = []
        self.images: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "summary":
            self.in_summary = True
        if tag == "img":
            self.images.append(a.get("src", ""))
        if not self.in_summary:
            return
        if tag == "th" and "data-criterion" in a:
            self.criteria.append(a["data-criterion"])
        if tag == "tr" and "data-algorithm" in a:
            self.rows.append({"algorithm": a["data-algorithm"], "cells": []})
        if tag == "td" and self.rows:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_summary = False
        if tag == "td" and self._cell is not None:
            self.rows[-1]["cells"].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


class _Balance(HTMLParser):
    """Checks that every element is closed, in order (no auto-closing)."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()


def test_card_html_is_well_formed(quick_card):
    b = _Balance()
    b.feed((quick_card[2] / "card.html").read_text())
    assert b.errors == [] and b.stack == []


def test_card_files_and_summary_table(quick_card):
    _, card, out = quick_card
    for name in ("card.html", "card.md", "card.json"):
        assert (out / name).stat().st_size > 0
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert len(pngs) >= 5
    md = (out / "card.md").read_text()
    for png in pngs:
        assert f"]({png})" in md  # the Markdown links every figure
    text = (out / "card.html").read_text()
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert "src='http" not in text and 'src="http' not in text and "<script" not in text
    p = _Tables()
    p.feed(text)
    assert [r["algorithm"] for r in p.rows] == [a for a in ALGOS for _ in card.paths]
    assert p.criteria == [c.key for c in card.criteria]  # a column (group) per criterion
    assert len(p.images) == len(pngs) and all(src.startswith("data:image/png;base64,") for src in p.images)
    ncols = 1 + sum(len(suite._headline_subs(card, c)) for c in card.criteria)  # path + criteria columns
    for i, r in enumerate(p.rows):
        assert len(r["cells"]) == ncols + (1 if i % len(card.paths) == 0 else 0)
        assert not any(c == "n/a" for c in r["cells"]), r
    assert len(text.encode()) < 3_000_000


def test_heatmap_leads_the_summary_and_shows_the_tables_values(quick_card):
    """The heat map comes right before the summary table, in card.md and in
    card.html, once; its cells print the table's means (ranked on them)."""
    import struct

    _, card, out = quick_card
    doc = json.loads((out / "card.json").read_text())
    assert doc["figures"][0]["file"] == suite.HEATMAP_FILE
    png = (out / suite.HEATMAP_FILE).read_bytes()
    w, h = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and 800 <= w <= 1400 and 300 <= h <= 1400, (w, h)
    md = (out / "card.md").read_text()
    link = f"]({suite.HEATMAP_FILE})"
    summary, table, figures = md.index("## Summary"), md.index("| algorithm | path |"), md.index("## Figures")
    assert md.count(link) == 1 and summary < md.index(link) < table, "the heat map leads the summary table"
    assert figures > table
    text = (out / "card.html").read_text()
    assert text.count("<figure id='heatmap'>") == 1
    assert text.index("<h2>Summary</h2>") < text.index("<figure id='heatmap'>") < text.index("<table id='summary'>")
    # every cell of the map prints what the table's cell begins with: the mean ('> ' before a lower bound)
    rows = [r for r in md[table:].splitlines() if r.startswith("| ")][1:1 + len(card.algorithms) * len(card.paths)]
    cells = {tuple(r.split(" | ")[:2]): [c.strip() for c in r.strip("| ").split(" | ")[2:]] for r in rows}
    panels = suite.heatmap_panels(card)
    assert [p.title for p in panels] == card.paths
    for p in panels:
        assert p.rows == card.algorithms
        for cc, texts, values in zip(p.rows, p.texts, p.values):
            table_cells = cells[("| " + cc, p.title)]
            assert len(texts) == len(table_cells) == len(suite.heatmap_columns(card))
            for t, v, c in zip(texts, values, table_cells):
                assert c == t if t == "n/a" else c.startswith(t + " "), (cc, p.title, t, c)
                assert v == float(t.removeprefix("> "))


def _scores(card, key):
    for cc, per in card.scores[key].items():
        for path, subs in per.items():
            for sub, s in subs.items():
                yield cc, path, sub, s


def test_card_values_plausible(quick_card):
    _, card, out = quick_card
    def no_nan(x):
        raise AssertionError(f"card.json holds {x}, which is not JSON")

    doc = json.loads((out / "card.json").read_text(), parse_constant=no_nan)
    assert doc["algorithms"] == ALGOS and doc["quick"] is True and doc["runs"] == len(quick_card[0])
    for c in card.criteria:
        for cc, path, sub, s in _scores(card, c.key):
            assert s.n == len(card.seeds), (c.key, cc, path, sub)
            assert s.mean is not None and math.isfinite(s.mean)
            if not s.censored:
                assert s.lo <= s.mean <= s.hi, (c.key, cc, path, sub, s)
            assert c.bounds[0] <= s.mean <= c.bounds[1]
    # one Reno flow with a full BDP of buffer keeps the link busy
    for path in card.paths:
        u = card.scores["utilization"]["reno"][path]["1"]
        assert 0.9 <= u.mean <= 1.0
        # and less buffer never helps a single Reno flow
        assert card.scores["utilization"]["reno"][path]["0.05"].mean < u.mean
        for cc in ALGOS:
            assert 0.5 <= card.scores["jain"][cc][path]["-"].mean <= 1.0
            # a full-BDP buffer holds more queue than a 20 % one
            q = card.scores["queue_delay_ms"][cc][path]
            assert q["1"].mean > q["0.2"].mean
            # utilization right after the step and reclaim times cannot exceed what the run allows
            assert 0 < card.scores["step_util"][cc][path]["-"].mean <= 1.0
    # Reno's short-RTT flow gets more than its long-RTT competitor at an RTT ratio of 4
    for path in card.paths:
        assert card.scores["rtt_ratio"]["reno"][path]["4"].mean > 1.0
    # Reno against Reno: neither starved
    for path in card.paths:
        assert 0.3 <= card.scores["reno_share"]["reno"][path]["-"].mean <= 1.7


def test_aqm_column_values_units_and_the_droptail_comparison(quick_card):
    """The FQ-CoDel column: a number for every algorithm and path, its units
    on the card, and what FQ-CoDel does to one loss-based flow against the
    same path's full-BDP drop-tail FIFO."""
    _, card, out = quick_card
    crit = {c.key: c for c in card.criteria}
    assert crit["aqm_utilization"].unit == "fraction of the link" and crit["aqm_queue_delay_ms"].unit == "ms"
    for key in ("aqm_utilization", "aqm_queue_delay_ms"):
        assert card.subcases[key] == ["-"]
        for cc in ALGOS:
            for path in card.paths:
                s = card.scores[key][cc][path]["-"]
                assert s.n == len(card.seeds) and s.mean is not None and math.isfinite(s.mean), (key, cc, path, s)
    md = (out / "card.md").read_text()
    assert "Behind FQ-CoDel: efficiency (fraction of the link)" in md and "Behind FQ-CoDel: queueing delay (ms)" in md
    html_text = (out / "card.html").read_text()
    assert "data-criterion='aqm_utilization'" in html_text and "data-criterion='aqm_queue_delay_ms'" in html_text
    doc = json.loads((out / "card.json").read_text())
    assert doc["scores"]["aqm_queue_delay_ms"]["cubic"][card.paths[0]]["-"]["mean"] == card.scores["aqm_queue_delay_ms"]["cubic"][card.paths[0]]["-"].mean
    for cc in ("reno", "cubic"):  # loss-based: they grow until a packet is lost
        for path in card.paths:
            fq = card.scores["aqm_queue_delay_ms"][cc][path]["-"].mean
            fifo = card.scores["queue_delay_ms"][cc][path]["1"].mean
            # Behind a 1-BDP FIFO the flow fills the buffer before its first
            # loss, so the queue cycles between about half a BDP and a full
            # one (tens of ms here); CoDel drops once the sojourn has stayed
            # above its 5 ms target for 100 ms, so the mean queue stays
            # below the target.
            assert 0 < fq < 5.0 < fifo, (cc, path, fq, fifo)
            # The price: CoDel's standing queue (5 ms: 4 to 8 packets on
            # these paths) is a few % of the BDP, so one loss-based flow uses
            # the link about as it does with a small FIFO: more than with a
            # 5 % BDP buffer, less than with a full BDP.
            u = card.scores["aqm_utilization"][cc][path]["-"].mean
            u_small, u_full = (card.scores["utilization"][cc][path][b].mean for b in ("0.05", "1"))
            assert u_small < u < u_full, (cc, path, u_small, u, u_full)


# ---- the suite's study ----------------------------------------------------------------


def test_the_suite_redoes_runs_whose_files_are_damaged(tmp_path):
    """Issue 27 item 5: a zero-byte flows file and a missing links file in
    the suite's study are runs not done: the next suite runs them again
    (saying so in one line) and writes its card, instead of crashing."""
    from conftest import run_cli

    study = tmp_path / "st"
    common = ["suite", "--quick", "--cc", "reno", "--seeds", "1", "--study", str(study), "--workers", "1", "-q"]
    r = run_cli(*common, "--out", str(tmp_path / "card1"))
    assert r.returncode == 0, r.stderr
    rids = sorted(p.stem for p in (study / "runs").iterdir())
    (study / "flows" / f"{rids[0]}.parquet").write_bytes(b"")
    (study / "links" / f"{rids[1]}.parquet").unlink()
    r = run_cli(*common, "--out", str(tmp_path / "card2"))
    assert r.returncode == 0, r.stderr
    assert f"{len(rids)} runs, 2 made now, {len(rids) - 2} from" in r.stdout
    assert r.stderr.startswith("warning: 2 missing or unreadable run file(s), so their runs were run again") and len(r.stderr.strip().splitlines()) == 1
    assert (tmp_path / "card2" / "card.html").is_file()
