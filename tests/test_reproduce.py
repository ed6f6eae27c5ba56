"""`longfat reproduce`: every paper's --quick run end to end, verdicts
recomputed from the measured values, and the verdict arithmetic itself."""

import json
import math
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from longfat.reproduce.core import AGREES, DIFFERS, NO_NUMBER, NOT_SEPARABLE, Row, between, evaluate, factor, rel, separate, within
from longfat.reproduce.measure import ci95, diff_ci95


def test_verdict_arithmetic_hand_cases():
    assert evaluate(rel(100, 0.05), 95.0) == AGREES
    assert evaluate(rel(100, 0.05), 94.9) == DIFFERS
    assert evaluate(factor(1e-4, 3), 3e-4) == AGREES
    assert evaluate(factor(1e-4, 3), 3.1e-4) == DIFFERS
    assert evaluate(factor(1e-4, 3), 0.34e-4) == AGREES
    assert evaluate(between(lo=0.95), 0.949) == DIFFERS
    assert evaluate(between(hi=1), 1) == AGREES
    assert evaluate(between(lo=0, hi=1), float("nan")) == DIFFERS
    assert evaluate({"kind": "none"}, 3.0) == NO_NUMBER
    assert Row("x", "p", "m", None, rel(1, 0.1)).verdict == DIFFERS


def test_confidence_interval_verdicts_hand_cases():
    # ci: the interval inside the band agrees, wholly outside differs, across a bound is not separable.
    assert evaluate(within((0.96, 0.99), 0.95, 1.05), 0.975) == AGREES
    assert evaluate(within((0.80, 0.90), 0.95, 1.05), 0.85) == DIFFERS
    assert evaluate(within((1.06, 1.10), 0.95, 1.05), 1.08) == DIFFERS
    assert evaluate(within((0.90, 1.00), 0.95, 1.05), 0.95) == NOT_SEPARABLE
    # NaN or infinity anywhere never passes.
    assert evaluate(within((float("nan"), 1.0), 0.95, 1.05), 0.99) == DIFFERS
    assert evaluate(within((0.96, float("inf")), 0.95, 1.05), 0.99) == DIFFERS
    assert evaluate(within((0.96, 0.99), 0.95, 1.05), float("inf")) == DIFFERS
    # separate: Welch's interval of A - B wholly on the claimed side agrees, wholly on the other side
    # differs, across 0 is not separable; NaN never passes.
    assert evaluate(separate((80, 110), ">"), 95.0) == AGREES
    assert evaluate(separate((80, 110), "<"), 95.0) == DIFFERS
    assert evaluate(separate((-40, 10), ">"), -15.0) == NOT_SEPARABLE
    assert evaluate(separate((-40, 10), "<="), -15.0) == NOT_SEPARABLE
    assert evaluate(separate((-40, float("nan")), ">"), -15.0) == DIFFERS
    # An exact tie (0 drops against 0 drops) contradicts a strict claim and meets a non-strict one.
    assert evaluate(separate((0.0, 0.0), ">"), 0.0) == DIFFERS
    assert evaluate(separate((0.0, 0.0), "<"), 0.0) == DIFFERS
    assert evaluate(separate((0.0, 0.0), ">="), 0.0) == AGREES
    assert evaluate(separate((0.0, 0.0), "<="), 0.0) == AGREES
    assert evaluate(separate((-3.0, -1.0), ">="), -2.0) == DIFFERS
    with pytest.raises(ValueError):
        separate((1, 2), "!=")
    # The intervals: t with n - 1 degrees of freedom; one value is a point; NaN spreads.
    m, lo, hi, n = ci95([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3) and abs(hi - m - 4.303 / math.sqrt(3)) < 1e-9 and abs(m - lo - (hi - m)) < 1e-12
    assert ci95([5.0])[:3] == (5.0, 5.0, 5.0)
    assert all(math.isnan(v) for v in ci95([1.0, float("nan")])[:3])
    d, lo, hi = diff_ci95([10.0, 12.0], [1.0, 1.0])
    assert d == 10.0 and abs(hi - d - 12.706 * 1.0) < 1e-9


def _t_cdf(q: float, df: int) -> float:
    """P(T <= q) for Student's t with ``df`` degrees of freedom, by
    integrating its density (numpy; independent of the tables)."""
    import numpy as np

    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    # Substituting x = tan(u) keeps the heavy tails (df = 1) finite: the integral over [0, atan(q)].
    u = np.linspace(0.0, math.atan(q), 400_001)
    x = np.tan(u)
    f = c * (1 + x * x / df) ** (-(df + 1) / 2) / np.cos(u) ** 2
    return 0.5 + float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(u)))


def test_the_t_quantiles_are_the_t_distributions():
    """Every tabulated quantile (stats.T_QUANTILES, T_TAILS) has the t CDF
    at its level, to the table's rounding: at q - 0.0005 the CDF is below
    the level and at q + 0.0005 above (the tail buckets' values are their
    first df's). df = 1 is also checked against the Cauchy CDF's closed form."""
    from longfat.reproduce.stats import T_QUANTILES, T_TAILS, t_quantile

    for level, table in T_QUANTILES.items():
        pairs = [(d, q) for d, q in enumerate(table, start=1)] + list(T_TAILS[level])
        for df, q in pairs:
            assert _t_cdf(q - 0.0005, df) < level < _t_cdf(q + 0.0005, df), (level, df, q)
        assert abs(0.5 + math.atan(table[0]) / math.pi - level) < 1e-5
        # Beyond 30, a df takes its bucket's first quantile: never narrower than its own.
        for df in (31, 35, 40, 41, 59, 60, 61, 120, 121, 10_000):
            assert t_quantile(df, level) >= t_quantile(df + 1, level)
            assert _t_cdf(t_quantile(df, level), df) >= level - 1e-6, (level, df)
        assert t_quantile(4.7, level) == table[3]  # Welch's fractional df rounds down
    assert math.isnan(t_quantile(0.5))
    with pytest.raises(ValueError):
        t_quantile(5, 0.95)


@pytest.mark.parametrize("paper", ["ltcp", "htcp", "ehstcp", "tcpgt", "plt"])
def test_quick_reproduction_end_to_end(paper, tmp_path):
    r = run_cli("reproduce", paper, "--quick", "--jobs", "2", "--out", str(tmp_path), "-q", timeout=600)
    assert r.returncode == 0, r.stderr
    d = tmp_path / paper
    md = (d / "report.md").read_text()
    html = (d / "report.html").read_text()
    doc = json.loads((d / "results.json").read_text())
    assert doc["meta"]["mode"] == "quick" and "not a reproduction" in md
    assert doc["meta"]["runs"] > 0 and doc["meta"]["total_wall_s"] > 0
    n_rows = 0
    for s in doc["sections"]:
        assert s["title"] in md
        for fig in s["figures"]:
            png = (d / fig).read_bytes()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
            assert f"]({fig})" in md
        for row in s["rows"]:
            n_rows += 1
            # Each verdict follows from the stored measured value and check
            # (before pairing with a negative control; settled below).
            assert row.get("raw_verdict", row["verdict"]) == evaluate(row["check"], row["value"]), row
            _assert_row_meets_the_standard(s["experiment"], row, quick=True)
            if row["check"]["kind"] != "none" and row["verdict"] == AGREES:
                # A ratio is infinite when one flow got nothing; never NaN.
                assert row["value"] is not None and not math.isnan(row["value"]), row
            assert row["measured"] and row["paper"]
    assert n_rows >= 8
    # The report opens with the answer: every claim row (not its controls, nor rows counted apart), in order,
    # before the first section; the method text is folded.
    claims = [r["item"] for s in doc["sections"] for r in s["rows"]
              if (r["check"].get("scope") or "claim") == "claim" and r["check"].get("role") != "control"]
    head, first_section = md.split("\n## The paper's claims at a glance\n", 1)[1], md.index(f"\n## {doc['sections'][0]['title']}\n")
    table = [line for line in head.split("\n\n<details>")[0].split("\n## Coverage of the paper")[0].splitlines()
             if line.startswith("| ") and not line.startswith("| figure |")]
    assert [line.split(" | ")[1] for line in table] == [c.replace("|", "\\|") for c in claims]
    assert md.index("## The paper's claims at a glance") < md.index("## Coverage of the paper:") < md.index("<details><summary>How the rows") < first_section
    assert f"## Coverage of the paper: {doc['meta']['coverage_score']:.2f}" in md and len(doc["meta"]["coverage"]) >= 5
    assert doc["meta"]["layout"] == "claims first" and "<details><summary>How the rows are measured and judged</summary>" in html
    _assert_controls_pair_up(doc)
    assert html.count("data:image/png;base64,") == sum(len(s["figures"]) for s in doc["sections"])
    # No temporary directories left beside the output.
    assert sorted(p.name for p in tmp_path.iterdir()) == [paper]


def test_reproduce_refuses_unknown_paper_and_bad_jobs(tmp_path):
    r = run_cli("reproduce", "nope", "--out", str(tmp_path))
    assert r.returncode == 2 and "PAPER: unknown paper 'nope'" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("reproduce", "ltcp", "--jobs", "0", "--out", str(tmp_path))
    assert r.returncode == 2 and "--jobs: must be >= 1" in r.stderr
    assert not any(tmp_path.iterdir())


def test_scenario_files_run_on_their_own(tmp_path):
    """A reproduction scenario is also an ordinary scenario: `longfat run`
    ignores its [reproduce] table."""
    r = run_cli("run", "scenarios/htcp/fig6.toml", "--set", 'run.duration="5s"', "--set", 'run.measure_from="1s"', "--out", str(tmp_path / "o"), "-q", "--no-plot")
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["flows"][0]["algorithm"] == "htcp"


def test_generator_fields_are_checked(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(
        """
[network]
topology = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", queue = "100pkt" }
[[short_flows]]
cc = "reno"
arrival_rate = -1.0
size_mean = "3000B"
[run]
duration = "10s"
"""
    )
    r = run_cli("run", str(p), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "short_flows[0].arrival_rate: -1 is out of range; allowed (0, 1e6]" in r.stderr
    p.write_text(p.read_text().replace("arrival_rate = -1.0", "arrival_rate = 5.0\nsize_shape = 0.9"))
    r = run_cli("run", str(p), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "short_flows[0].size_shape: 0.9 is out of range" in r.stderr


def test_malformed_reproduce_table_is_refused_by_field(tmp_path):
    from longfat._native import ScenarioError
    from longfat.reproduce.core import load_experiment

    src = (ROOT / "scenarios" / "htcp" / "fig6.toml").read_text()
    for bad, field in (('seeds = "1"', "reproduce.seeds"), ("cases = [1, 2]", "reproduce.cases"), ("vary = { x = 3 }", "reproduce.vary"), ("sedes = [1]", "reproduce.sedes")):
        p = tmp_path / "x.toml"
        p.write_text(src.replace("seeds = [1]", bad))
        with pytest.raises(ScenarioError, match=field.replace(".", r"\.")):
            load_experiment("htcp", p, quick=False)


# ---- criteria stated in the scenario files (criteria.py) ----------------------


def _criteria(table):
    from pathlib import Path

    from longfat.reproduce.criteria import check_criteria

    return check_criteria(Path("x.toml"), table)


@pytest.mark.parametrize(
    "spec, field, words",
    [
        ({"kind": "range", "lo": 0.95}, "reproduce.criteria.q", "needs both lo and hi"),
        ({"kind": "range", "lo": 1, "hi": 2, "one_sided": "x"}, "reproduce.criteria.q", "exactly one of lo and hi"),
        ({"kind": "range", "lo": 1, "one_sided": "x"}, "reproduce.criteria.q.one_sided", "at least 6 words"),
        ({"kind": "factor", "paper": 1e-4, "factor": 3}, "reproduce.criteria.q.factor", "must be in (1, 2)"),
        ({"kind": "factor", "paper": 1e-4, "factor": 2.414}, "reproduce.criteria.q.factor", "must be in (1, 2)"),
        ({"kind": "factor", "paper": 1e-4, "factor": 2}, "reproduce.criteria.q.factor", "must be in (1, 2)"),
        ({"kind": "rel", "paper": 10, "tol": 1.0}, "reproduce.criteria.q.tol", "must be in (0, 0.5]"),
        ({"kind": "rel", "paper": 10, "tol": 0.999}, "reproduce.criteria.q.tol", "must be in (0, 0.5]"),
        ({"kind": "ci", "paper": 10, "tol": 0.6}, "reproduce.criteria.q.tol", "must be in (0, 0.5]"),
        # A band with no non-zero paper value must say what the quantity can take, and cover at most half of it.
        ({"kind": "ci", "lo": -1e12, "hi": 1e12}, "reproduce.criteria.q.span", "span: missing"),
        ({"kind": "ci", "lo": 0, "hi": 0.5, "paper": 0}, "reproduce.criteria.q.span", "span: missing"),
        ({"kind": "range", "lo": 0.9, "hi": 1.0}, "reproduce.criteria.q.span", "span: missing"),
        ({"kind": "ci", "lo": -1e12, "hi": 1e12, "span": [0, 1]}, "reproduce.criteria.q.span", "must lie inside the span"),
        ({"kind": "ci", "lo": 0.25, "hi": 1.0, "span": [0, 1]}, "reproduce.criteria.q", "covers more than half of the span"),
        ({"kind": "ci", "lo": 0.2, "hi": 0.4, "span": [1, 0]}, "reproduce.criteria.q.span", "must be below max"),
        ({"kind": "ci", "lo": 0.2, "hi": 0.4, "span": [0]}, "reproduce.criteria.q.span", "must be [min, max]"),
        ({"kind": "separate", "claim": ">", "span": [0, 1]}, "reproduce.criteria.q.span", "only to bound its margin"),
        # A margin (the largest difference that counts as none) is bounded and belongs to a strict claim.
        ({"kind": "separate", "claim": ">", "margin": 0.05}, "reproduce.criteria.q.span", "span: missing"),
        ({"kind": "separate", "claim": ">=", "margin": 0.05, "span": [0, 1]}, "reproduce.criteria.q.margin", "applies to a strict claim"),
        ({"kind": "separate", "claim": "<", "margin": 0.2, "span": [0, 1]}, "reproduce.criteria.q.margin", "must be in (0, 0.1]"),
        ({"kind": "separate", "claim": "<", "margin": 0, "span": [0, 1]}, "reproduce.criteria.q.margin", "must be in (0, 0.1]"),
        ({"kind": "separate", "claim": "<", "margin": -0.05, "span": [0, 1]}, "reproduce.criteria.q.margin", "must be in (0, 0.1]"),
        ({"kind": "separate", "claim": "<", "margin": float("nan"), "span": [0, 1]}, "reproduce.criteria.q.margin", "a number above 0"),
        ({"kind": "separate", "claim": "<", "margin": 0.2, "stat": "log"}, "reproduce.criteria.q.margin", "must be in (0, 0.0953]"),
        ({"kind": "separate", "claim": "<", "margin": 0.05, "stat": "log", "span": [0, 1]}, "reproduce.criteria.q.span", "not a span"),
        ({"kind": "ci", "lo": 0.9, "hi": 1.0, "span": [0, 1], "margin": 0.05}, "reproduce.criteria.q.margin", "unknown field"),
        ({"kind": "ci", "lo": 0.9, "hi": 1.0, "span": [0, 1], "judge": "mean"}, "reproduce.criteria.q.judge", "must be 'every_seed'"),
        ({"kind": "ci", "lo": 0, "hi": 2, "paper": 1, "stat": "log"}, "reproduce.criteria.q.lo", "above 0 for stat"),
        ({"kind": "ci", "lo": 0.5, "hi": 1.5, "paper": 1, "stat": "mean"}, "reproduce.criteria.q.stat", "must be one of 'log', 'median'"),
        ({"kind": "ci", "lo": 0, "hi": 60, "span": [0, 600], "stat": "median", "judge": "every_seed"}, "reproduce.criteria.q.stat", "not both"),
        ({"kind": "separate", "claim": "<", "stat": "max"}, "reproduce.criteria.q.stat", "must be one of 'log', 'median'"),
        ({"kind": "ci", "lo": 0.5, "hi": 1.5, "paper": 1, "stat": "log", "judge": "every_seed"}, "reproduce.criteria.q.stat", "not both"),
        ({"kind": "ci", "lo": 0, "hi": 2.5, "paper": 1}, "reproduce.criteria.q", "at least twice the paper's value"),
        ({"kind": "ci", "lo": 2, "hi": 3, "paper": 1}, "reproduce.criteria.q", "must lie in [lo, hi]"),
        ({"kind": "ci", "paper": 1}, "reproduce.criteria.q", "either paper and tol, or lo and hi"),
        ({"kind": "ci", "lo": 1, "hi": float("inf")}, "reproduce.criteria.q.hi", "a finite number"),
        ({"kind": "separate", "claim": "!="}, "reproduce.criteria.q.claim", "must be one of"),
        ({"kind": "between", "lo": 1}, "reproduce.criteria.q.kind", "must be one of"),
        ({"kind": "rel", "paper": 1, "tol": 0.1, "tolerance": 2}, "reproduce.criteria.q.tolerance", "unknown field"),
        ({"kind": "rel", "paper": 1, "tol": 0.1, "control": "nope"}, "reproduce.criteria.q.control", "no criterion 'nope'"),
        ({"kind": "rel", "paper": 1, "tol": 0.1, "control": "q"}, "reproduce.criteria.q.control", "must be a control"),
        # A control must mirror its claim's check.
        ({"kind": "rel", "paper": 1, "tol": 0.1, "control": "c"}, "reproduce.criteria.q.control", "must mirror the claim's check; they differ in tol"),
        ({"kind": "ci", "paper": 1, "tol": 0.2, "control": "c"}, "reproduce.criteria.q.control", "the same kind of check"),
    ],
)
def test_a_bad_criterion_is_refused_by_field(spec, field, words):
    from longfat._native import ScenarioError

    with pytest.raises(ScenarioError) as e:
        _criteria({"q": spec, "c": {"kind": "rel", "paper": 1, "tol": 0.2}})
    assert e.value.args[1] == field and words in e.value.args[0], e.value.args


def _probe_checks(exp):
    """Every criterion of an experiment, completed with plausible intervals."""
    from longfat.reproduce.criteria import criterion

    for cid, spec in exp.criteria.items():
        if spec["kind"] == "ci":
            mid = (spec["lo"] + spec["hi"]) / 2
            yield cid, criterion(exp, cid, ci=ci95([mid] * 5))
        elif spec["kind"] == "separate":
            yield cid, criterion(exp, cid, a=ci95([2.0, 3.0, 2.5]), b=ci95([0.0, 1.0, 0.5]))
        else:
            yield cid, criterion(exp, cid)


@pytest.mark.parametrize("quick", [False, True])
def test_no_shipped_criterion_passes_a_missing_nan_or_infinite_value(quick):
    """Every criterion stated in a paper's scenario files refuses a missing,
    NaN or infinite measurement, and a NaN or infinite interval."""
    from longfat.reproduce import PAPERS
    from longfat.reproduce.core import load_paper
    from longfat.reproduce.criteria import criterion

    bad = [None, float("nan"), float("inf"), float("-inf")]
    n = 0
    for paper in PAPERS:
        for exp in load_paper(paper, quick):
            for cid, check in _probe_checks(exp):
                n += 1
                for v in bad:
                    assert evaluate(check, v) != AGREES, (exp.path, cid, v)
                if check["kind"] == "ci":
                    for vals in ((float("nan"), 1.0), (0.0, float("inf")), (float("-inf"), float("inf"))):
                        assert evaluate(criterion(exp, cid, ci=ci95(vals)), 1.0) != AGREES, (exp.path, cid)
                if check["kind"] == "separate":
                    for vals in ((float("nan"), 1.0), (0.0, float("inf"))):
                        assert evaluate(criterion(exp, cid, a=ci95(vals), b=ci95([5.0, 6.0])), 1.0) != AGREES, (exp.path, cid)
                        assert evaluate(criterion(exp, cid, a=ci95([5.0, 6.0]), b=ci95(vals)), 1.0) != AGREES, (exp.path, cid)
    assert n >= 100, f"only {n} criteria found in the shipped scenario files"


def test_a_claim_counts_only_if_its_negative_control_differs():
    from longfat.reproduce.criteria import CONTROL_DIFFERS, CONTROL_PASSES, NOT_EVIDENCE, criterion, settle

    class Exp:
        path = "x.toml"
        criteria = _criteria({"fair": {"kind": "ci", "lo": 0.9, "hi": 1.0, "span": [0, 1], "control": "fair_reno"},
                              "fair_reno": {"kind": "ci", "lo": 0.9, "hi": 1.0, "span": [0, 1]}})

    def rows(ctl_ci, group="g"):
        return [Row("claim", "p", "m", 0.95, criterion(Exp, "fair", ci=(0.92, 0.97), group="g")),
                Row("control", "p", "m", 0.5, criterion(Exp, "fair_reno", ci=ctl_ci, group=group))]

    r = rows((0.4, 0.6))
    settle(r)
    assert [x.verdict for x in r] == [AGREES, CONTROL_DIFFERS] and r[0].control_verdict == CONTROL_DIFFERS
    r = rows((0.92, 0.99))
    settle(r)
    assert [x.verdict for x in r] == [NOT_EVIDENCE, CONTROL_PASSES] and r[0].raw_verdict == AGREES
    r = rows((0.4, 0.6), group="other")  # the control's row is for another group: missing
    settle(r)
    assert r[0].verdict == NOT_EVIDENCE and r[0].control_verdict == "missing"
    # A claim that differs on its own stays a difference whatever the control does.
    r = [Row("claim", "p", "m", 0.5, criterion(Exp, "fair", ci=(0.4, 0.6), group="g")), rows((0.4, 0.6))[1]]
    settle(r)
    assert r[0].verdict == DIFFERS
    # settle is idempotent (the reports and the tests both run it).
    settle(r)
    assert r[0].verdict == DIFFERS and r[1].verdict == CONTROL_DIFFERS


def test_the_forms_a_criterion_states_decide_its_statistic():
    """judge = "every_seed" judges every seed (a universal claim: one seed
    outside differs, even when the mean's interval straddles the band);
    stat = "log" judges the geometric mean (one heavy seed does not decide
    a ratio); a separate criterion judges Welch's interval of the
    difference, where two separate intervals overlap."""
    from longfat.reproduce.criteria import criterion

    class Exp:
        path = "x.toml"
        criteria = _criteria({
            "never_drops": {"kind": "ci", "paper": 0, "lo": 0, "hi": 0.5, "span": [0, 1e9], "judge": "every_seed"},
            "ratio_near_1": {"kind": "ci", "paper": 1.0, "lo": 0.5, "hi": 2.0, "stat": "log"},
            "a_above_b": {"kind": "separate", "claim": ">"},
            "a_at_least_b": {"kind": "separate", "claim": ">="},
        })

    # 0 drops in three seeds, 18,228 and 5,891 in two: the mean's interval spans 0 (not separable
    # on a mean), but the universal claim is contradicted by the two seeds.
    drops = [0.0, 0.0, 18228.0, 0.0, 5891.0]
    c = criterion(Exp, "never_drops", ci=ci95(drops))
    assert c["ci"][0] == 0.0 < 0.5 < c["ci"][1] and evaluate(c, 4823.8) == DIFFERS and c["values"] == drops  # the interval cut to the span
    assert evaluate(criterion(Exp, "never_drops", ci=ci95([0.0] * 5)), 0.0) == AGREES
    with pytest.raises(ValueError, match="needs the seeds' values"):
        criterion(Exp, "never_drops", ci=(0.0, 0.0))
    # Ratios 1.1, 0.9, 1.0, 1.2 and one seed at 86: the arithmetic mean's interval lies above the band's
    # middle and reaches far past 2; the geometric mean's is [0.3, 24]: across the bound, not agreeing.
    ratios = [1.1, 0.9, 1.0, 1.2, 86.0]
    c = criterion(Exp, "ratio_near_1", ci=ci95(ratios))
    gm = math.exp(sum(map(math.log, ratios)) / 5)
    assert abs(c["ci"][0] * c["ci"][1] - gm * gm) < 1e-9 * gm * gm and evaluate(c, gm) == NOT_SEPARABLE
    assert evaluate(criterion(Exp, "ratio_near_1", ci=ci95([1.1, 0.9, 1.0, 1.2, 1.05])), 1.05) == AGREES
    assert evaluate(criterion(Exp, "ratio_near_1", ci=ci95([1.1, 0.0, 1.0])), 0.7) == DIFFERS  # a ratio of 0 has no logarithm
    # Two intervals that overlap ([9.29, 10.71] and [8.29, 9.71]) with a Welch interval of the
    # difference above 0 ([0.17, 1.83]): decided.
    a, b = [10.0, 9.3, 10.7, 10.4, 9.6], [9.0, 8.3, 9.7, 9.4, 8.6]
    c = criterion(Exp, "a_above_b", a=ci95(a), b=ci95(b))
    assert c["a"][0] < c["b"][1] and c["diff"][0] > 0 and evaluate(c, 1.0) == AGREES
    d, lo, hi = diff_ci95(a, b)
    assert c["diff"] == [lo, hi]
    # 0 against 0 in every seed: a strict claim is contradicted, a non-strict one met.
    zero = ci95([0.0] * 5)
    assert evaluate(criterion(Exp, "a_above_b", a=zero, b=zero), 0.0) == DIFFERS
    assert evaluate(criterion(Exp, "a_at_least_b", a=zero, b=zero), 0.0) == AGREES


def test_a_margin_decides_a_near_tie_and_nothing_else():
    """With a margin m, a difference whose interval lies wholly inside
    (-m, m) contradicts a strict claim (by hand: Welch's interval of
    [0.50, 0.51, 0.49, 0.50, 0.50] minus the same shifted by 0.005 is
    0.005 -/+ 0.0135 at 97.5 %, inside +/-0.05), an interval that reaches
    past m stays not separable, and one wholly on the claimed side agrees
    even when it is inside the margin too (the margin only decides what the
    claim's side does not)."""
    from longfat.reproduce.core import deciding, describe
    from longfat.reproduce.criteria import criterion

    class Exp:
        path = "x.toml"
        criteria = _criteria({
            "a_above_b": {"kind": "separate", "claim": ">", "margin": 0.05, "span": [0, 1]},
            "plain": {"kind": "separate", "claim": ">"},
            "ratio": {"kind": "separate", "claim": "<", "margin": math.log(1.05), "stat": "log"},
        })

    a = [0.50, 0.51, 0.49, 0.50, 0.50]
    b = [x - 0.005 for x in a]
    c = criterion(Exp, "a_above_b", a=ci95(a), b=ci95(b))
    lo, hi = c["diff"]
    assert -0.05 < lo < 0 < hi < 0.05 and evaluate(c, 0.005) == DIFFERS
    assert "inside +/-0.05" in describe(c) and "no difference: inside +/-0.05" in deciding(c, 0.005)
    assert evaluate(criterion(Exp, "plain", a=ci95(a), b=ci95(b)), 0.005) == NOT_SEPARABLE  # no margin: a near tie stays open
    wide = [0.3, 0.7, 0.5, 0.4, 0.6]
    c = criterion(Exp, "a_above_b", a=ci95(wide), b=ci95(b))
    assert c["diff"][1] > 0.05 and evaluate(c, 0.005) == NOT_SEPARABLE
    above = [x + 0.03 for x in a]
    c = criterion(Exp, "a_above_b", a=ci95(above), b=ci95(a))
    assert 0 < c["diff"][0] and c["diff"][1] < 0.05 and evaluate(c, 0.03) == AGREES
    # On logarithms: ratios 0.5 % apart in every seed (an interval across 0, inside log 1.05).
    r = [1.0, 1.01, 0.99, 1.005, 0.995]
    c = criterion(Exp, "ratio", a=ci95([x * 1.005 for x in r]), b=ci95(r))
    assert c["diff"][0] < 0 < c["diff"][1] < math.log(1.05) and evaluate(c, 1.005) == DIFFERS
    assert abs(sum(c["diff"]) / 2 - math.log(1.005)) < 1e-12


def _shipped_experiments():
    from longfat.reproduce import PAPERS
    from longfat.reproduce.core import load_paper

    for paper in PAPERS:
        yield from load_paper(paper, False)


def test_every_shipped_criterion_can_fail():
    """The discrimination probe: each criterion stated in a paper's
    scenario files, applied to values it must reject: twice the paper's
    value (where it gives one), the end of the quantity's span farthest
    from the band, a value beyond the band's bound, and for a comparison
    the claim reversed; none may agree."""
    from longfat.reproduce.criteria import criterion

    n = 0
    for exp in _shipped_experiments():
        for cid, spec in exp.criteria.items():
            n += 1
            where = (exp.path.name, cid)
            probes = []
            p = spec.get("paper")
            if p not in (None, 0):
                probes.append(2 * p)
            lo, hi = spec.get("lo"), spec.get("hi")
            if spec["kind"] == "factor":
                probes += [p * spec["factor"] * 1.01, p / spec["factor"] / 1.01]
            if spec["kind"] == "rel":
                probes += [p + abs(p) * spec["tol"] * 1.01]
            if "span" in spec and spec["kind"] != "separate":  # a separate criterion's span bounds its margin
                a, b = spec["span"]
                probes.append(a if abs(a - (lo if lo is not None else hi)) > abs(b - (hi if hi is not None else lo)) else b)
            if lo is not None:
                probes.append(lo - max(abs(lo), 1.0) * 0.01)
            if hi is not None:
                probes.append(hi + max(abs(hi), 1.0) * 0.01)
            if spec["kind"] == "separate":
                strict = spec["claim"] in (">", "<")
                up, down = ci95([2.0, 2.1, 1.9] * 4), ci95([0.0, 0.1, -0.1] * 4)  # 12 seeds: a median's interval is bounded
                wrong = (down, up) if spec["claim"][0] == ">" else (up, down)
                assert evaluate(criterion(exp, cid, a=wrong[0], b=wrong[1]), -2.0) == DIFFERS, where
                tie = evaluate(criterion(exp, cid, a=ci95([0.0] * 5), b=ci95([0.0] * 5)), 0.0)
                assert tie == (DIFFERS if strict else AGREES), where
                if spec.get("margin"):
                    # A near tie: the two sides the same in every seed but one, a tenth of the margin
                    # apart there, across 0 and inside the margin: the margin decides it against the claim.
                    base = [1.0, 1.0 + spec["margin"] / 100, 1.0 - spec["margin"] / 100] * 4
                    near = list(base)
                    near[0] += spec["margin"] / 10 * (1 if spec["claim"] == ">" else -1)
                    check = criterion(exp, cid, a=ci95(near), b=ci95(base))
                    assert check["diff"][0] < 0 < check["diff"][1], where
                    assert evaluate(check, 0.0) == DIFFERS, where
                continue
            assert probes, where
            for x in probes:
                if spec["kind"] == "ci":
                    # A median over 5 seeds is never bounded (not separable whatever the values): probe it over 30.
                    check = criterion(exp, cid, ci=ci95([x] * (30 if spec.get("stat") == "median" else 5)))
                else:
                    check = criterion(exp, cid)
                assert evaluate(check, x) != AGREES, (where, x)
    assert n >= 200, f"only {n} criteria found"


def test_every_one_sided_criterion_quotes_its_paper():
    """A one-sided range's ``one_sided`` is a quote of the paper (its words
    found, in order, in the paper's text), not a placeholder."""
    papers = ROOT.parent / "shared" / "papers"
    if not papers.is_dir():
        pytest.skip("../shared/papers is not beside the clone")
    text = {p: _words((papers / f).read_text(encoding="utf-8")) for p, f in PAPER_FILES.items()}
    n = 0
    for exp in _shipped_experiments():
        for cid, spec in exp.criteria.items():
            if "one_sided" in spec:
                n += 1
                assert _words(spec["one_sided"]) in text[exp.paper], (exp.path.name, cid, spec["one_sided"])
    assert n >= 1


# ---- the standard every report row meets (issue 16) ----------------------------


def _assert_row_meets_the_standard(experiment: str, row: dict, quick: bool) -> None:
    """A row compares only under a criterion stated in its scenario file; a
    comparison carries both intervals; a full-mode interval is over at
    least 5 seeds."""
    c = row["check"]
    where = f"{experiment}: {row['item']}"
    if c["kind"] == "none":
        return
    # Every judged row says which numbers of this run decided it; a
    # difference always carries them.
    from longfat.reproduce.core import deciding

    assert row["decided_by"] == deciding(c, row["value"]), where
    if row["verdict"] == DIFFERS:
        assert any(ch.isdigit() for ch in row["decided_by"]) or row["decided_by"] == "no finite measurement", where
    assert c.get("id"), f"{where}: its criterion is not stated in the scenario file"
    if c["kind"] == "range":
        assert (c.get("lo") is not None and c.get("hi") is not None) or c.get("one_sided"), f"{where}: a one-sided range with no one-sided claim"
    if c["kind"] == "separate":
        assert len(c["a"]) == 2 and len(c["b"]) == 2 and len(c["diff"]) == 2 and c["claim"] in (">", "<", ">=", "<="), where
    if c["kind"] == "ci":
        assert len(c["ci"]) == 2, where
    if not quick and c["kind"] in ("ci", "separate"):
        n = c.get("n")
        ns = n if isinstance(n, list) else [n]
        assert all(isinstance(x, int) and x >= 5 for x in ns), f"{where}: an interval over {n} runs; the standard asks for 5 seeds or more"


def _assert_controls_pair_up(doc: dict) -> None:
    """Every claim that names a negative control has the control's row (same
    group, same section: one scenario file's criteria) in the report, and
    the stored verdicts are settle()'s."""
    import copy

    from longfat.reproduce.criteria import settle

    for s in doc["sections"]:
        rows = s["rows"]
        for r in rows:
            c = r["check"]
            if "control" in c and c.get("role") != "control":
                partners = [x for x in rows if x["check"].get("id") == c["control"] and x["check"].get("group", "") == c.get("group", "")]
                assert partners, f"{s['experiment']}: {r['item']}: its negative control {c['control']!r} has no row"
        again = copy.deepcopy(rows)
        for r in again:
            r["verdict"] = r.get("raw_verdict", r["verdict"])
        settle(again)
        assert [r["verdict"] for r in again] == [r["verdict"] for r in rows], s["experiment"]


def test_plan_counts_each_bottleneck_direction_that_carries_data():
    """estimate_cost: rate x duration / 1040-byte packets on each bottleneck
    in each direction a source sends through, by hand."""
    from longfat.reproduce.core import estimate_cost

    one = 10e6 * 100 / (8 * 1040)
    base = {"network": {"bottleneck": {"rate": "10Mbps"}}, "run": {"duration": "100s"}, "flows": [{"cc": "reno"}]}
    assert estimate_cost(base) == pytest.approx(one)
    assert estimate_cost({**base, "web": [{"from": 1, "to": 0}]}) == pytest.approx(2 * one)  # reverse traffic
    lot = {**base, "network": {"topology": "parking_lot", "hops": 3, "bottleneck": {"rate": "10Mbps"}},
           "flows": [{"from": 0, "to": 1}], "udp": [{"from": 1, "to": 3}]}
    assert estimate_cost(lot) == pytest.approx(3 * one)  # every hop once, forward
    assert estimate_cost({"run": {"duration": "100s"}}) == 1.0


def test_plan_runs_nothing_and_only_picks_experiments(tmp_path):
    r = run_cli("reproduce", "htcp", "--plan", "--only", "fig6,fig3", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert "fig6" in r.stdout and "fig3" in r.stdout and "fig7" not in r.stdout and "about" in r.stdout
    assert not (tmp_path / "o").exists()
    r = run_cli("reproduce", "htcp", "--only", "fig99", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--only: htcp has no experiment 'fig99'; allowed: " in r.stderr and "Traceback" not in r.stderr
    r = run_cli("reproduce", "all", "--only", "fig6", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--only: names experiments of one paper" in r.stderr
    assert not (tmp_path / "o").exists()
    r = run_cli("reproduce", "htcp", "--quick", "--only", "fig6", "--jobs", "1", "--out", str(tmp_path / "o"), "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "o" / "htcp" / "results.json").read_text())
    assert [s["experiment"] for s in doc["sections"]] == ["fig6"] and doc["meta"]["only"] == ["fig6"]


def test_runs_wait_on_disk_in_a_file_that_never_shows(tmp_path):
    """reproduce keeps finished runs on disk until their experiment is
    analysed (SpilledResults), in a file unlinked as it is created: nothing
    appears in --out, and nothing stays if the process is killed."""
    from longfat.reproduce.core import SpilledResults

    with SpilledResults(tmp_path) as s:
        s.put(3, {"a": [1, 2]})
        s.put(0, "x" * 100_000)
        assert s[3] == {"a": [1, 2]} and s[0] == "x" * 100_000 and 3 in s and 2 not in s and len(s) == 2
        with pytest.raises(KeyError):
            s[2]
        assert list(tmp_path.iterdir()) == []
    assert list(tmp_path.iterdir()) == []


# ---- the committed reports (docs/reproductions) --------------------------------

PAPER_FILES = {"ltcp": "ltcp.md", "htcp": "htcp.md", "ehstcp": "ehstcp.md", "tcpgt": "tcp-gt.md", "plt": "plt.md"}


def _words(text: str) -> str:
    import re

    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


@pytest.mark.parametrize("paper", ["ltcp", "htcp", "ehstcp", "tcpgt", "plt"])
def test_committed_report_meets_the_standard(paper):
    """Each committed report: paper length, from the current scenario files
    and analysis (regenerate after changing them), at a commit, with the
    paper's exact title and authors; every row under a criterion stated in
    its scenario file, intervals over >= 5 seeds, controls paired, every
    stated criterion reported."""
    from longfat.reproduce import inputs_digest, paper_module
    from longfat.reproduce.core import load_paper

    doc = json.loads((ROOT / "docs" / "reproductions" / paper / "results.json").read_text())
    meta = doc["meta"]
    assert meta["mode"] == "full" and "only" not in meta
    assert meta["inputs"] == inputs_digest(paper), "the scenario files or the analysis changed since this report: regenerate it"
    assert meta["commit"] != "unknown" and "uncommitted" not in meta["commit"]
    mod = paper_module(paper)
    assert meta["title"] == mod.TITLE and meta["authors"] == mod.AUTHORS
    text = (ROOT.parent / "shared" / "papers" / PAPER_FILES[paper])
    if text.is_file():  # ../shared sits beside the clone in CI
        head = _words(text.read_text(encoding="utf-8")[:3000])
        assert _words(mod.TITLE) in head, "the title is not the paper's"
        for name in mod.AUTHORS.split(", "):
            assert _words(name.split()[-1]) in head, f"{name} is not among the paper's authors"
    used = set()
    for s in doc["sections"]:
        for row in s["rows"]:
            assert row.get("raw_verdict", row["verdict"]) == evaluate(row["check"], row["value"]), row
            _assert_row_meets_the_standard(s["experiment"], row, quick=False)
            used.add((s["experiment"], row["check"].get("id")))
    _assert_controls_pair_up(doc)
    for exp in load_paper(paper, quick=False):
        for cid in exp.criteria:
            assert (exp.name, cid) in used, f"{exp.path.name}: criterion {cid} is stated but no row of the report applies it"


@pytest.mark.parametrize("paper", ["ltcp", "htcp", "ehstcp", "tcpgt", "plt"])
def test_every_paper_states_its_coverage_figure_by_figure(paper):
    """Each paper module's COVERAGE names every figure and table of the
    paper (its captions and the tables its text names, read from the paper
    itself) and nothing else; a covered figure names experiments the paper
    has; anything short of full says why; the score (full 1, partly 1/2,
    n-a left out) is at least 0.9; the committed report states the same."""
    from longfat.reproduce import paper_module
    from longfat.reproduce.core import SCENARIO_ROOT
    from longfat.reproduce.coverage import Cover, figures_in, score

    mod = paper_module(paper)
    text = ROOT.parent / "shared" / "papers" / PAPER_FILES[paper]
    if not text.is_file():
        pytest.skip("../shared/papers is not beside the clone")
    assert sorted(mod.COVERAGE) == sorted(figures_in(text.read_text(encoding="utf-8")))
    names = {f.stem for f in (Path(SCENARIO_ROOT) / paper).glob("*.toml")}
    for fig, cover in mod.COVERAGE.items():
        assert isinstance(cover, Cover)
        assert set(cover.experiments) <= names, (fig, set(cover.experiments) - names)
    assert score(mod.COVERAGE) >= 0.9, score(mod.COVERAGE)
    meta = json.loads((ROOT / "docs" / "reproductions" / paper / "results.json").read_text())["meta"]
    assert meta["coverage"] == [c.to_json(f) for f, c in mod.COVERAGE.items()]
    assert meta["coverage_score"] == score(mod.COVERAGE)


def test_coverage_reads_captions_and_refuses_unexplained_gaps():
    from longfat.reproduce.coverage import Cover, figures_in, score

    text = ("As Fig. 5 and Figure 12 show, Table 3 ...\n\nFig. 1. A topology\nFigure 2: Goodput\nTABLE IV: Increase\n"
            "  Fig. 8(a) is not a caption")
    assert figures_in(text) == ["Table 3", "Fig. 1", "Fig. 2", "Table 4"]
    assert score({"Fig. 1": Cover("n-a", why="a drawing"), "Fig. 2": Cover("full", ("a",)), "Fig. 3": Cover("partly", ("a",), "x"),
                  "Fig. 4": Cover("not", why="y")}) == pytest.approx(0.5)
    for bad in (lambda: Cover("some", ("a",)), lambda: Cover("full"), lambda: Cover("partly", ("a",)), lambda: Cover("n-a")):
        with pytest.raises(ValueError):
            bad()


def test_readme_verdict_table_is_the_reports():
    from longfat.reproduce import PAPERS
    from longfat.reproduce.report import verdict_table

    table = verdict_table(ROOT / "docs" / "reproductions", PAPERS)
    assert table in (ROOT / "README.md").read_text(), "README's verdict table differs from the committed reports:\n" + table


# ---- sequential seeds (reproduce.looks, reproduce/sequential.py) -------------

#: The fake experiment's cells: (mean, standard deviation) of their values.
#: A far inside the band [0.9, 1.1], B far outside, C on its edge, F inside;
#: D and E alike (the claim D > E cannot be decided at any number of seeds).
_CELLS = {"A": (1.0, 0.02), "B": (2.0, 0.02), "C": (1.1, 0.05), "D": (5.0, 1.0), "E": (5.0, 1.0), "F": (1.0, 0.02)}


def _cell_value(cell: str, seed: int) -> float:
    import numpy as np

    mu, sd = _CELLS[cell]
    return mu + sd * float(np.random.default_rng([ord(cell), seed]).standard_normal())


def _fake_analysis(runs, out, exp):
    from longfat.reproduce.core import Row, Section, setup_text
    from longfat.reproduce.criteria import criterion

    by = {c: [r for p, r in runs.pairs if p.key["cell"] == c] for c in _CELLS}
    rows = [Row(f"cell {c}", "1.0", "", ci95(by[c])[0], criterion(exp, "near_one", ci=ci95(by[c]), group=c)) for c in "ABCF" if by[c]]
    if by["D"] and by["E"]:
        rows.append(Row("D above E", ">", "", 0.0, criterion(exp, "d_above_e", a=ci95(by["D"]), b=ci95(by["E"]))))
    return Section(exp.name, exp.title, setup_text(exp), rows)


def test_sequential_seeds_extend_only_the_cells_of_undecided_claims(tmp_path, monkeypatch):
    """Through reproduce() with a fake paper whose runs are numbers drawn
    per (cell, seed): looks at 5, 10, 20 and 30 seeds extend exactly the
    edge cell C and the two compared cells D and E to the cap; cells whose
    rows are decided at the first look (A inside, B outside, F inside and
    beside the comparison) stay at 5 seeds; every interval is at the
    corrected level (t quantile 0.99375, checked by hand at n = 5)."""
    import types

    import longfat.reproduce as rp
    from longfat._native import ScenarioError
    from longfat.reproduce.core import Experiment, Point, cell_of
    from longfat.reproduce.criteria import check_criteria
    from longfat.reproduce.sequential import pending_cells
    from longfat.reproduce.stats import T_QUANTILES

    path = tmp_path / "scenarios" / "fake" / "looks.toml"
    path.parent.mkdir(parents=True)
    path.write_text("# a fake experiment\n")
    crit = check_criteria(path, {"near_one": {"kind": "ci", "paper": 1.0, "lo": 0.9, "hi": 1.1}, "d_above_e": {"kind": "separate", "claim": ">"}})

    def experiment():
        pts = [Point("looks", {"cell": c}, s, {"run": {"seed": s, "duration": "10s"}, "network": {"bottleneck": {"rate": "10Mbps"}}}, 1.0)
               for c in _CELLS for s in range(1, 6)]
        return Experiment("fake", "looks", path, "Fake looks", {}, pts, crit, seeds=[1, 2, 3, 4, 5], looks=[5, 10, 20, 30])

    # The dependence of rows on cells, alone: at 5 seeds, C's row and the comparison are undecided.
    exp = experiment()
    pairs = [(p, _cell_value(p.key["cell"], p.seed)) for p in exp.points]
    assert pending_cells(_fake_analysis, exp, pairs) == {cell_of(Point("looks", {"cell": c}, 1, {}, 1.0)) for c in "CDE"}

    exp = experiment()
    module = types.SimpleNamespace(ANALYSES={"looks": _fake_analysis}, TITLE="Fake", CITATION="none", __file__=str(path))
    ran: list[int] = []

    def fake_run_points(points, jobs, on_done=None, scheduler=None, spill=None, memory_budget_bytes=None, *, executor=None, first=0, positions=None):
        ran.append(len(points))
        for i, pt in enumerate(points):
            spill.put(positions[i] if positions is not None else first + i, _cell_value(pt.key["cell"], pt.seed))
            on_done(pt)
        return spill

    monkeypatch.setattr(rp, "load_papers", lambda papers, quick, only, memory_budget_bytes=None: {"fake": [exp]})
    monkeypatch.setattr(rp, "paper_module", lambda p: module)
    monkeypatch.setattr(rp, "run_points", fake_run_points)
    monkeypatch.setattr("longfat.reproduce.core.SCENARIO_ROOT", tmp_path / "scenarios")
    cache = tmp_path / "runs.pkl"
    monkeypatch.setenv("LONGFAT_REPRODUCE_CACHE", str(cache))
    rp.reproduce(["fake"], quick=False, jobs=1, out=tmp_path / "out", command="test")

    seeds = {c: sorted(p.seed for p in exp.points if p.key["cell"] == c) for c in _CELLS}
    assert {c: len(s) for c, s in seeds.items()} == {"A": 5, "B": 5, "C": 30, "D": 30, "E": 30, "F": 5}
    assert seeds["C"] == list(range(1, 31))  # the listed seeds, then the next whole numbers
    assert ran == [30, 15, 30, 30]  # the first look, then 3 cells x 5, x 10, x 10
    doc = json.loads((tmp_path / "out" / "fake" / "results.json").read_text())
    assert doc["meta"]["runs"] == 105 and doc["meta"]["later_looks"] == 75
    rows = {r["item"]: r for r in doc["sections"][0]["rows"]}
    assert [rows[f"cell {c}"]["verdict"] for c in "ABF"] == [AGREES, DIFFERS, AGREES]
    assert rows["cell C"]["verdict"] == NOT_SEPARABLE and rows["D above E"]["verdict"] == NOT_SEPARABLE
    assert rows["cell C"]["check"]["n"] == 30 and rows["D above E"]["check"]["n"] == [30, 30]
    # Cell A's interval at 5 seeds, at the corrected level: t(4, 0.99375) = 4.315.
    a = [_cell_value("A", s) for s in range(1, 6)]
    m = sum(a) / 5
    sd = math.sqrt(sum((x - m) ** 2 for x in a) / 4)
    assert T_QUANTILES[0.99375][3] == 4.315
    assert rows["cell A"]["check"]["ci"] == pytest.approx([m - 4.315 * sd / math.sqrt(5), m + 4.315 * sd / math.sqrt(5)], rel=1e-12)
    assert rows["cell A"]["check"]["level"] == 0.99375 and "98.75 % (95 % over up to 4 looks at the seeds) CI" in rows["cell A"]["criterion"]
    report = (tmp_path / "out" / "fake" / "report.md").read_text()
    assert "looks at 5, 10, 20, 30 seeds per point" in report and "points by seeds: 3 to 5, 3 to 30" in report

    # LONGFAT_REPRODUCE_CACHE replays the runs it holds and runs the others:
    # with cell F's runs taken out of it, only those 5 run again, and every
    # row and count is as before.
    import pickle

    stored = rp.CacheReader(cache)
    assert len(stored.keys) == 105 and stored.get("no such run") is None
    keep = [key for key in stored.keys if "cell=F" not in key]
    assert len(keep) == 100
    kept = [stored.get(key) for key in keep]
    stored.close()
    rp.write_cache(cache, keep, [r for r, _ in kept], 60.0, [c for _, c in kept])
    exp = experiment()
    ran.clear()
    rp.reproduce(["fake"], quick=False, jobs=1, out=tmp_path / "out", command="test", force=True)
    assert ran == [5]
    again = json.loads((tmp_path / "out" / "fake" / "results.json").read_text())
    assert again["sections"] == doc["sections"] and again["meta"]["runs"] == 105
    # The replayed runs count at the 60 s the file says they took (all of its cost was used).
    assert 60.0 <= again["meta"]["total_wall_s"] < 70.0
    stored = rp.CacheReader(cache)
    assert len(stored.keys) == 105
    stored.close()
    # A run whose scenario changed is a new run, though its label is the same.
    exp = experiment()
    for pt in exp.points:
        if pt.key["cell"] == "A":
            pt.scenario["run"]["duration"] = "20s"
    ran.clear()
    rp.reproduce(["fake"], quick=False, jobs=1, out=tmp_path / "out", command="test", force=True)
    assert ran == [5]
    # A cache file of another layout (format 2 took every result into memory
    # at once), a file cut short, or a file the user made, is refused by
    # name, not misread, and left as it was.
    whole = cache.read_bytes()
    old_layout = pickle.dumps({"format": 2, "keys": ["x"], "results": {0: 1.0}, "wall_s": 1.0, "costs": [1.0]})
    for body in (pickle.dumps((["x"], {0: 1.0}, 1.0)), old_layout, whole[:-10], b"my notes\n"):
        cache.write_bytes(body)
        with pytest.raises(ScenarioError) as e:
            rp.reproduce(["fake"], quick=False, jobs=1, out=tmp_path / "out", command="test", force=True)
        assert e.value.args[1] == "LONGFAT_REPRODUCE_CACHE" and cache.read_bytes() == body
    assert not (tmp_path / "runs.pkl.partial").exists()


@pytest.mark.parametrize("looks, words", [
    ("[5, 10, 20, 30, 40]", "5 looks; give 2 to 4"),
    ("[5]", "1 looks; give 2 to 4"),
    ("[4, 10]", "the first look (4) must be the number of listed seeds (5)"),
    ("[5, 5, 20]", "must rise from look to look"),
    ("[5, 10, 2000]", "the last look (2000 seeds) is above 1000"),
    ('"5, 10"', "must be a list of whole numbers"),
    ("[5, 10.5]", "must be a list of whole numbers"),
])
def test_a_bad_looks_is_refused_by_field(tmp_path, looks, words):
    from longfat._native import ScenarioError
    from longfat.reproduce.core import load_experiment

    src = (ROOT / "scenarios" / "htcp" / "fig6.toml").read_text()
    assert "seeds = [1]" in src
    p = tmp_path / "x.toml"
    p.write_text(src.replace("seeds = [1]", f"seeds = [1, 2, 3, 4, 5]\nlooks = {looks}"))
    with pytest.raises(ScenarioError) as e:
        load_experiment("htcp", p, quick=False)
    assert e.value.args[1] == "reproduce.looks" and words in e.value.args[0], e.value.args
    # A looks whose last look passes the runs limit is refused by the same field.
    p.write_text(src.replace("seeds = [1]", "seeds = [1, 2, 3, 4, 5]\nlooks = [5, 10, 1000]").replace("[reproduce]", "[reproduce]\ncases = [" + ", ".join(["{}"] * 11) + "]"))
    with pytest.raises(ScenarioError) as e:
        load_experiment("htcp", p, quick=False)
    assert e.value.args[1] == "reproduce.looks" and "at the last look" in e.value.args[0], e.value.args


def test_median_of_times_some_runs_never_reach():
    """stats.median_ci by hand: the order statistics [X_(l), X_(n-l+1)] with
    l the largest whole number whose binomial tail P(Bin(n, 1/2) <= l - 1)
    is within 1 - level; runs that never reached (+inf) rank last; and the
    verdicts a median criterion gives, unbounded ends included."""
    from longfat.reproduce.core import deciding
    from longfat.reproduce.criteria import criterion
    from longfat.reproduce.stats import at_level, median_ci

    inf = math.inf
    # n = 5 at 95 %: P(Bin(5, 1/2) = 0) = 1/32 = 3.1 % > 2.5 %: no l >= 1; both ends unbounded.
    assert tuple(median_ci([5.0, 1.0, 3.0, 2.0, 4.0])) == (3.0, -inf, inf, 5)
    # n = 6: 1/64 = 1.6 % <= 2.5 % < 7/64: l = 1, [X_(1), X_(6)].
    assert tuple(median_ci([6.0, 1.0, 2.0, 3.0, 4.0, 5.0])) == (3.5, 1.0, 6.0, 6)
    # n = 20: P(Bin <= 5) = 21,700 / 2^20 = 2.07 % <= 2.5 % < P(Bin <= 6) = 5.77 %: l = 6, [X_(6), X_(15)].
    assert tuple(median_ci([float(x) for x in range(1, 21)])) == (10.5, 6.0, 15.0, 20)
    # Three of 20 never reached: they are the three largest; the upper end X_(15) = 15 is still bounded.
    xs = [float(x) for x in range(1, 18)] + [inf] * 3
    assert tuple(median_ci(xs)) == (10.5, 6.0, 15.0, 20)
    # Six of 20 never reached: X_(15) is one of them: bounded below only.
    assert tuple(median_ci([float(x) for x in range(1, 15)] + [inf] * 6)) == (10.5, 6.0, inf, 20)
    with at_level(0.99375):
        # n = 30 at 98.75 %: P(Bin(30, 1/2) <= 7) = 0.26 % <= 0.625 % < P(<= 8) = 0.81 %: l = 8, [X_(8), X_(23)].
        assert tuple(median_ci([float(x) for x in range(1, 31)])) == (15.5, 8.0, 23.0, 30)
        # n = 7: 1/128 = 0.78 % > 0.625 %: unbounded; n = 8: 1/256 = 0.39 %: [X_(1), X_(8)].
        assert tuple(median_ci([float(x) for x in range(7)]))[1:3] == (-inf, inf)
        assert tuple(median_ci([float(x) for x in range(8)]))[1:3] == (0.0, 7.0)
    m = median_ci([1.0, float("nan"), 2.0])
    assert all(math.isnan(x) for x in m[:3]) and m[3] == 3

    class Exp:
        path = "x.toml"
        criteria = _criteria({
            "converges": {"kind": "ci", "paper": 60, "tol": 0.33, "stat": "median"},
            "faster": {"kind": "separate", "claim": "<", "stat": "median"},
        })

    times = [50.0, 55.0, 58.0, 61.0, 62.0, 64.0, 70.0, 52.0, 57.0, 60.0]  # l = 2 at 95 %: [X_(2), X_(9)] = [52, 64]
    c = criterion(Exp, "converges", ci=ci95(times))
    assert c["ci"] == [52.0, 64.0] and c["infinite"] == [0, 0] and evaluate(c, None) == AGREES
    # Five of ten never converged: the median's upper end is unbounded; the lower one (55) is inside: not separable.
    c = criterion(Exp, "converges", ci=ci95(times[:5] + [inf] * 5))
    assert c["ci"] == [55.0, None] and c["infinite"] == [0, 1] and evaluate(c, inf) == NOT_SEPARABLE
    assert deciding(c, inf) == "the median's 95 % CI [55, unbounded] against the band [40.2, 79.8]"
    # Nine of ten never converged: X_(2) is infinite too: the median lies above the band: differs.
    c = criterion(Exp, "converges", ci=ci95([50.0] + [inf] * 9))
    assert c["ci"] == [None, None] and c["infinite"] == [1, 1] and evaluate(c, inf) == DIFFERS
    # Five seeds never bound a median at 95 %: not separable, whatever the values.
    assert evaluate(criterion(Exp, "converges", ci=ci95([60.0] * 5)), 60.0) == NOT_SEPARABLE
    assert evaluate(criterion(Exp, "converges", ci=ci95([60.0, float("nan")] * 5)), 60.0) == DIFFERS
    # A comparison of medians: [a_lo - b_hi, a_hi - b_lo].
    a, b = [10.0 + x for x in range(10)], [40.0 + x for x in range(10)]  # [11, 18] and [41, 48]
    c = criterion(Exp, "faster", a=ci95(a), b=ci95(b))
    assert c["diff"] == [11.0 - 48.0, 18.0 - 41.0] and evaluate(c, None) == AGREES
    assert evaluate(criterion(Exp, "faster", a=ci95(b), b=ci95(a)), None) == DIFFERS
    # B never converged in any seed: A is faster whatever A's times (B's interval is [inf, inf]).
    c = criterion(Exp, "faster", a=ci95(a), b=ci95([inf] * 10))
    assert c["diff"] == [None, None] and c["infinite"] == [-1, -1] and evaluate(c, None) == AGREES
    # Five seeds of the same time on both sides: an exact tie, which contradicts a strict claim.
    c = criterion(Exp, "faster", a=ci95([30.0] * 5), b=ci95([30.0] * 5))
    assert c["diff"] == [0.0, 0.0] and evaluate(c, None) == DIFFERS
    # Neither converged: the difference is unknown: not separable.
    assert evaluate(criterion(Exp, "faster", a=ci95([inf] * 10), b=ci95([inf] * 10)), None) == NOT_SEPARABLE


def test_a_case_states_its_own_looks(tmp_path):
    """A case's "reproduce.looks" takes its cells to its own looks (a cheap
    case to more seeds than a costly one in the same file); the other cases
    keep the file's; the file's intervals are at the corrected level;
    --quick looks once; a bad case looks is refused by its field; --plan
    counts each case at its own last look."""
    from longfat._native import ScenarioError
    from longfat.reproduce.core import LOOKS_LEVEL, load_experiment

    src = (ROOT / "scenarios" / "htcp" / "fig6.toml").read_text()
    assert "seeds = [1]" in src

    def write(case_looks: str, file_looks: str = "looks = [5, 10]") -> Path:
        p = tmp_path / "x.toml"
        p.write_text(src.replace("seeds = [1]", f"seeds = [1, 2, 3, 4, 5]\n{file_looks}\n"
                                 f'cases = [{{ "network.bottleneck.rate" = "10Mbps", "reproduce.looks" = {case_looks} }}, '
                                 '{ "network.bottleneck.rate" = "20Mbps" }]'))
        return p

    exp = load_experiment("htcp", write("[5, 50, 200]"), quick=False)
    assert [pt.looks for pt in exp.points] == [(5, 50, 200)] * 5 + [()] * 5
    assert "reproduce.looks" not in exp.points[0].key and exp.level == LOOKS_LEVEL and exp.most_looks == 3
    cells = set(exp.cells())
    exp.extend(cells, 1)
    count = {r: sum(1 for pt in exp.points if pt.key["network.bottleneck.rate"] == r) for r in ("10Mbps", "20Mbps")}
    assert count == {"10Mbps": 50, "20Mbps": 10}
    assert exp.extend(cells, 2) and sum(1 for pt in exp.points if pt.key["network.bottleneck.rate"] == "20Mbps") == 10
    assert sorted(pt.seed for pt in exp.points if pt.key["network.bottleneck.rate"] == "10Mbps") == list(range(1, 201))
    # A case's looks alone (no file looks) puts the file at the corrected level too.
    exp = load_experiment("htcp", write("[5, 50]", file_looks=""), quick=False)
    assert exp.level == LOOKS_LEVEL and exp.looks == [] and exp.extend(set(exp.cells()), 1) and len(exp.points) == 55
    # --quick looks once.
    exp = load_experiment("htcp", write("[5, 50, 200]"), quick=True)
    assert all(pt.looks == () for pt in exp.points)
    for bad, words in (("[4, 50]", "the first look (4) must be the number of listed seeds (5)"), ("[5, 5000]", "above 1000"),
                       ("[5, 10, 20, 30, 40]", "5 looks; give 2 to 4"), ('"more"', "must be a list of whole numbers")):
        with pytest.raises(ScenarioError) as e:
            load_experiment("htcp", write(bad), quick=False)
        assert e.value.args[1] == 'reproduce.cases[0]."reproduce.looks"' and words in e.value.args[0], e.value.args
    # The runs limit counts each case at its own last look.
    p = tmp_path / "x.toml"
    p.write_text(src.replace("seeds = [1]", "seeds = [1, 2, 3, 4, 5]\ncases = [" + ", ".join(['{ "reproduce.looks" = [5, 1000] }'] * 11) + "]"))
    with pytest.raises(ScenarioError) as e:
        load_experiment("htcp", p, quick=False)
    assert "11,000 runs" in e.value.args[0] and "up to" not in e.value.args[0], e.value.args
