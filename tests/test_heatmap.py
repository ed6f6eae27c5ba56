"""longfat.heatmap: ranks and colours on small hand-made tables, the
directions the suite's criteria and compare's columns declare, and the
drawn figure's cells and headers."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from longfat import heatmap, suite  # noqa: E402
from longfat.compare import SUMMARY_METRICS, summary_panel  # noqa: E402
from longfat.heatmap import Column, Panel, rank_fractions  # noqa: E402


def test_rank_fractions_higher_lower_ties_and_na():
    vals = [0.9, None, 0.5, 0.9, float("nan"), 0.7]
    # higher is better: the two 0.9s tie for best, 0.5 is worst, 0.7 between; n/a stays n/a
    assert rank_fractions(vals, "higher") == [0.0, None, 1.0, 0.0, None, 0.5]
    # lower is better: the same column the other way round
    assert rank_fractions(vals, "lower") == [1.0, None, 0.0, 1.0, None, 0.5]
    # the remark after the direction is ignored ("higher (1 = equal)" is higher)
    assert rank_fractions(vals, "higher (1 = equal)") == rank_fractions(vals, "higher")
    # four distinct values evenly spaced, whatever their gaps
    assert rank_fractions([1.0, 2.0, 100.0, 3.0], "lower") == [0.0, 1 / 3, 1.0, 2 / 3]
    # a tie for worst: both get the worst rank
    assert rank_fractions([3.0, 1.0, 1.0], "higher") == [0.0, 1.0, 1.0]
    # nothing to rank: all equal (or one value) is neither best nor worst; all n/a stays n/a
    assert rank_fractions([2.0, 2.0], "higher") == [0.5, 0.5]
    assert rank_fractions([None, 4.0], "lower") == [None, 0.5]
    assert rank_fractions([None, None], "lower") == [None, None]


def test_rank_fractions_closer_to_one():
    # |x - 1|: 0.5 and 1.5 are equally far; 1.1 is best, 0.0 (Reno starved) worst
    assert rank_fractions([0.5, 1.1, 1.5, 0.0], "closer to 1 (below 1: Reno loses)") == [0.5, 0.0, 0.5, 1.0]
    # a ratio: 1/2 and 2 are equally far (max(x, 1/x)); 0.9 beats 1.2; 0 is infinitely far
    assert rank_fractions([0.5, 2.0, 0.9, 1.2, 0.0], "closer to 1", "ratio") == [2 / 3, 2 / 3, 0.0, 1 / 3, 1.0]
    # measured as a difference, 0.5 is closer than 2
    assert rank_fractions([0.5, 2.0, 0.9, 1.2], "closer to 1") == [2 / 3, 1.0, 0.0, 1 / 3]


@pytest.mark.parametrize("better", ["best", "more", "", "high", "lowest", "closer to 2"])
def test_direction_refuses_text_it_cannot_read(better):
    with pytest.raises(ValueError, match="does not begin with one of 'higher', 'lower', 'closer to 1'"):
        heatmap.direction(better)
    with pytest.raises(ValueError, match="closeness: 'log' is not one of difference, ratio"):
        rank_fractions([1.0], "higher", "log")


# The better direction of every criterion of the suite, stated here by hand
# from docs/suite-method.md: what the card's headers must show.
SUITE_ARROWS = {
    "utilization": "↑", "loss_rate": "↓", "queue_delay_ms": "↓", "aqm_utilization": "↑", "aqm_queue_delay_ms": "↓",
    "jain": "↑", "conv80": "↓", "conv95": "↓", "rtt_ratio": "→1", "reno_share": "→1",
    "step_util": "↑", "reclaim80": "↓", "reclaim95": "↓",
}


def _card(criteria=None) -> suite.Card:
    """A card over two algorithms and one path with every summary column, no runs."""
    crits = criteria or suite._criteria()
    subcases = {c.key: (["0.01", "0.1", "0.2", "1"] if c.subcase == "buffer_bdp" else ["2", "4"] if c.subcase == "rtt_ratio" else ["-"]) for c in crits}
    return suite.Card(["reno", "cubic"], ["100Mbps-40ms"], crits, {}, subcases, 0, [1, 2, 3], False, {})


def test_suite_headers_carry_each_criterions_declared_direction():
    cols = suite.heatmap_columns(_card())
    assert {c.key for c, _, _ in cols} == set(SUITE_ARROWS)  # every criterion has a column
    for c, sub, col in cols:
        assert col.header.endswith(" " + SUITE_ARROWS[c.key]), (c.key, col.header)
        assert col.better == c.better  # declared once, on the criterion
    # the RTT-unfairness ratio is ranked as a ratio (1/2 as far from even as 2), Reno's share as a difference
    assert {c.key: col.closeness for c, _, col in cols if c.better.startswith("closer")} == {"rtt_ratio": "ratio", "reno_share": "difference"}


def test_compare_headers_carry_each_metrics_direction():
    want = {"utilization": "↑", "goodput_bps": "↑", "loss_rate": "↓", "mean_queue_pkts": "↓", "retransmits": "↓", "timeouts": "↓", "jain_fairness": "↑"}
    assert {m.key: heatmap.arrow(m.better) for m in SUMMARY_METRICS} == want


def _cells(fig):
    """Each axes' coloured cells: (row, column) -> facecolor, and (row, column) of the hatched ones."""
    out = []
    for ax in fig.axes:
        faces, hatched = {}, set()
        for p in ax.patches:
            if isinstance(p, Rectangle):
                at = (int(p.get_y()), int(p.get_x()))
                if p.get_hatch():
                    hatched.add(at)
                else:
                    faces[at] = p.get_facecolor()
        out.append((faces, hatched))
    return out


def test_drawn_cells_best_blue_worst_red_ties_equal_na_hatched():
    cols = [Column("goodput (Mbit/s)", "higher"), Column("delay (ms)", "lower"), Column("share", "closer to 1")]
    rows = ["a", "b", "c", "d"]
    values = [[10.0, 5.0, 1.0], [20.0, 5.0, 0.5], [15.0, 40.0, None], [20.0, 1.0, 3.0]]
    texts = [["10", "5", "1"], ["20", "5", "0.5"], ["15", "40", "n/a"], ["20", "1", "3"]]
    fig = heatmap.draw(cols, [Panel("path", rows, values, texts)])
    try:
        (faces, hatched), = _cells(fig)
        best, worst = heatmap.cell_colour(0.0, plt.get_cmap(heatmap.CMAP)), heatmap.cell_colour(1.0, plt.get_cmap(heatmap.CMAP))
        assert best[2] > 0.5 > best[0] and worst[0] > 0.5 > worst[2]  # blue best, red worst
        # goodput, higher better: b and d tie for best (20), a is worst (10)
        assert faces[(1, 0)] == faces[(3, 0)] == best and faces[(0, 0)] == worst
        # delay, lower better: d is best (1), c worst (40), a and b tie (5) on one colour between
        assert faces[(3, 1)] == best and faces[(2, 1)] == worst and faces[(0, 1)] == faces[(1, 1)] not in (best, worst)
        # share, closer to 1: a (1.0) best, d (3.0) worst, c n/a: hatched, not coloured
        assert faces[(0, 2)] == best and faces[(3, 2)] == worst and (2, 2) in hatched and (2, 2) not in faces
        assert len(faces) + len(hatched) == 12
        # the headers, with the arrows, and the values printed in the cells
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["goodput (Mbit/s) ↑", "delay (ms) ↓", "share →1"]
        printed = {t.get_text() for t in ax.texts}
        assert {"10", "20", "15", "5", "40", "1", "0.5", "3", "n/a"} <= printed
    finally:
        plt.close(fig)


def test_draw_refuses_ragged_tables():
    with pytest.raises(ValueError, match="panel 'p': values and texts must be 1 rows of 2 columns"):
        heatmap.draw([Column("x", "higher"), Column("y", "lower")], [Panel("p", ["a"], [[1.0]], [["1"]])])


def test_compare_summary_ranks_the_rows_it_is_given():
    rows = [
        {"algorithm": "a", "utilization": 0.95, "goodput_bps": 9.0e6, "loss_rate": 0.01, "mean_queue_pkts": 30.0, "retransmits": 12, "timeouts": 0, "jain_fairness": None},
        {"algorithm": "b", "utilization": 0.99, "goodput_bps": 9.5e6, "loss_rate": 0.0, "mean_queue_pkts": 5.0, "retransmits": 0, "timeouts": 1, "jain_fairness": None},
    ]
    cols, panel = summary_panel(rows)
    # the Jain index is n/a for every row (one flow each): no column
    assert [c.header for c in cols] == ["utilization\n(%) ↑", "goodput\n(Mbit/s) ↑", "loss rate\n(%) ↓", "mean queue\n(pkts) ↓", "retransmits ↓", "RTOs ↓"]
    assert panel.texts == [["95", "9", "1", "30", "12", "0"], ["99", "9.5", "0", "5", "0", "1"]]
    # b is better in everything but timeouts
    assert panel.fractions(cols) == [[1.0, 1.0, 1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]
