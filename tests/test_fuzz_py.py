"""A short seeded run of the Python-level fuzz campaign (scripts/fuzz_py.py):
generated scenarios, mutated scenario files, mutated [reproduce] tables and
--set/--seed strings, each in a worker process under a time and memory limit;
none may end in anything but a result or one well-formed ScenarioError. Plus
the campaign's own parts: reproducible inputs, the TOML writer, the refusal
classifier, and a few inputs through the real command line."""

import re
import sys
import tomllib

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_py  # noqa: E402

SEED = 20261123


SCENARIO_SOURCES = [s for s in fuzz_py.SOURCES if s != "sweep"]


def test_seeded_campaign():
    summary = fuzz_py.campaign(seed=SEED, inputs=350, jobs=2, findings=None, sources=SCENARIO_SOURCES)
    text = fuzz_py.report(summary)
    print(text)
    assert summary["inputs"] >= 270
    counts = summary["counts"]
    # The mix reaches both ends: runs and refusals, from every source.
    assert counts.get(fuzz_py.ACCEPTED, 0) >= 20 and counts.get(fuzz_py.REFUSED, 0) >= 100, text
    assert set(summary["by_source"]) == set(SCENARIO_SOURCES), text
    assert not summary["failures"], text


def test_every_declared_field_is_generated():
    """A scenario field the catalogue declares but gen_schema never writes
    is never fuzzed: every one must appear, in its own table, within a few
    hundred generated scenarios."""
    schema = fuzz_py.scenario_schema()
    seen: set[tuple[str, str]] = set()

    def walk(v, struct):
        if not isinstance(v, dict):
            return
        decls = dict(schema[struct])
        for k, x in v.items():
            f = decls.get(k)
            if f is None:
                continue
            seen.add((struct, k))
            if f["kind"] == "table":
                walk(x, f["table"])
            elif f["kind"] == "tables" and isinstance(x, list):
                for e in x:
                    walk(e, f["table"])

    c = fuzz_py.Corpus()
    for i in range(400):
        walk(fuzz_py.gen_schema(fuzz_py.random.Random(i), c), "Scenario")
    missing = [(s, n) for s, fs in schema.items() for n, _ in fs if (s, n) not in seen]
    assert not missing, f"declared fields the Python fuzzer never generates: {missing}"


# ---- longfat sweep ---------------------------------------------------------------

#: Open findings of the sweep campaign in python/longfat/sweep.py (see the
#: fuzz report): a failure whose detail matches one of these is printed, not
#: failed on. Delete an entry when its bug is fixed; the test then guards it.
KNOWN_OPEN_SWEEP: list[str] = [
]


def _unexpected(failures):
    import re

    def known(r):
        # A command line failure is known if the same input's API result is.
        return any(re.search(k, r.get("detail", "")) or re.search(k, r.get("api_detail", "").partition(": ")[2]) for k in KNOWN_OPEN_SWEEP)

    return [(i, r) for i, r in failures if not known(r)]


def test_seeded_sweep_campaign():
    """[sweep] tables and --grid/--cc/--seeds through load_sweep,
    grid_from_args and expand (and a few cells through run_cells)."""
    summary = fuzz_py.campaign(seed=SEED, inputs=250, jobs=2, findings=None, sources=["sweep"])
    text = fuzz_py.report(summary)
    print(text)
    assert summary["inputs"] == 250 and set(summary["by_source"]) == {"sweep"}
    counts = summary["counts"]
    assert counts.get(fuzz_py.ACCEPTED, 0) >= 10 and counts.get(fuzz_py.REFUSED, 0) >= 150, text
    assert not [f for f in summary["failures"] if f[1]["outcome"] != fuzz_py.BUG], text  # no HANG or MEMORY at all
    bad = _unexpected(summary["failures"])
    assert not bad, [(i["id"], r["detail"]) for i, r in bad]


def test_huge_grids_are_refused_before_expansion():
    """Grids past the cell limit are refused by their count, fast, without
    expanding a cell (run_sweep_input checks the time, the memory and that
    no cell was expanded); at exactly the limit, its first (bad) cell is
    what refuses it."""
    import random

    c = fuzz_py.corpus()
    name, doc = next((n, d) for n, d in c.files if n.endswith("canonical.toml"))
    doc = dict(doc, run=dict(doc["run"], duration="0.2s"))
    inputs = []
    for shape in fuzz_py.HUGE_SHAPES:
        table, grid, seeds = fuzz_py._huge_grid(random.Random(shape), doc, c, shape=shape)
        inputs.append({
            "id": shape, "source": "sweep", "kind": "sweep", "doc": None, "path": None, "seed": None, "overrides": [], "quick": False, "origin": name,
            "text": fuzz_py.to_toml({**doc, "sweep": table} if table else doc), "sweep": {"grid": grid, "cc": None, "seeds": seeds},
        })
    results = {i["id"]: r for i, r in fuzz_py.run_inputs(inputs, jobs=2, timeout=20)}
    for shape, res in results.items():
        assert res["outcome"] == fuzz_py.REFUSED, (shape, res)
        if shape == "exact":
            assert res["field"] == "network.bottleneck.delay" and res["message"].startswith(f"cell 1 of {fuzz_py.MAX_CELLS} "), res
        else:
            assert res["cells"] > fuzz_py.MAX_CELLS and res["field"] == "sweep" and f"at most {fuzz_py.MAX_CELLS:,}" in res["message"], (shape, res)


def test_sweep_command_line_sample():
    """A few sweep inputs through ``longfat sweep ... --workers 1 --out
    TMP/study -q``: exit 0, 1 or 2 only, one line naming a field on 2, no
    traceback, nothing written outside the study, no study on refusal."""
    res = fuzz_py.sweep_cli_sample(SEED, 6, jobs=2, findings=None)
    assert res["inputs"] == 6
    bad = _unexpected(res["failures"])
    assert not bad, [(i["id"], r["detail"], r.get("stderr")) for i, r in bad]


def test_sweep_inputs_are_reproducible():
    for i in range(40):
        a, b = fuzz_py.make_input(7, i, source="sweep"), fuzz_py.make_input(7, i, source="sweep")
        assert a["kind"] == "sweep" and a["text"] == b["text"] and a["sweep"] == b["sweep"] and a["overrides"] == b["overrides"]
        assert (a["doc"] is None) == (b["doc"] is None)


def test_command_line_sample():
    res = fuzz_py.cli_sample(SEED, 6, jobs=2, findings=None)
    assert res["inputs"] == 6
    assert not res["failures"], [(i["id"], r["detail"], r.get("stderr")) for i, r in res["failures"]]


def _stable_repr(x) -> str:
    """repr with object addresses masked (the dict path's ``object()``),
    allowing the dict path's 10**5000, which has more digits than repr
    converts by default."""
    digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return re.sub(r" at 0x[0-9a-f]+", " at 0x?", repr(x))
    finally:
        sys.set_int_max_str_digits(digits)


def test_inputs_are_reproducible():
    for i in range(40):
        a, b = fuzz_py.make_input(7, i), fuzz_py.make_input(7, i)
        assert _stable_repr(a) == _stable_repr(b)
    assert any(_stable_repr(fuzz_py.make_input(7, i)) != _stable_repr(fuzz_py.make_input(8, i)) for i in range(5))


def test_toml_writer_round_trips():
    for i in range(200):
        inp = fuzz_py.make_input(3, i, source="schema")
        if inp["text"] is None:
            continue
        try:
            doc = tomllib.loads(inp["text"])
        except tomllib.TOMLDecodeError as e:
            pytest.fail(f"input {i}: {e}\n{inp['text']}")
        assert fuzz_py.to_toml(doc) == fuzz_py.to_toml(tomllib.loads(fuzz_py.to_toml(doc)))


@pytest.mark.parametrize(
    "msg, field, ok",
    [
        ("run: must be a table ([run]), not a string", "run", True),
        ("/x/a.toml: reproduce.seeds: must be ...", "reproduce.seeds", True),
        ("/x/a.toml: fig6 cc=reno seed=1: flows[0].cc: unknown algorithm", "flows[0].cc", True),
        ("--set a..b: malformed key part", "a..b", True),
        ("/x/a.toml: TOML syntax error: Expected ']' (at line 1, column 2)", "", True),
        ("missing field `network`", "", False),
        ("run.\n: unknown field `\n`", "run.\n", False),
        ("flows[0].cc: x", "flows[1].cc", False),
        ("", "", False),
    ],
)
def test_refusal_classifier(msg, field, ok):
    assert (fuzz_py.refusal_problem(msg, field) is None) == ok


def test_hang_and_memory_are_caught():
    """The pool's limits work: a busy loop is a HANG, a huge allocation MEMORY."""
    hang = {"id": "hang", "source": "schema", "kind": "scenario", "text": None, "path": None, "seed": None, "overrides": [], "doc": {"__fuzz_test__": "hang"}}
    mem = {**hang, "id": "mem", "doc": {"__fuzz_test__": "memory"}}
    res = {i["id"]: r for i, r in fuzz_py.run_inputs([hang, mem], jobs=2, timeout=2)}
    assert res["hang"]["outcome"] == fuzz_py.HANG
    assert res["mem"]["outcome"] == fuzz_py.MEMORY


def test_a_worker_that_dies_allocating_is_tried_once_more(tmp_path):
    """A worker that dies allocating (glibc's TLS exit 127 here) runs its
    input once more in a fresh worker: an input that dies again is MEMORY,
    one that died once (the machine short of memory, not the input) gives
    its own outcome."""
    base = {"source": "schema", "kind": "scenario", "text": None, "path": None, "seed": None, "overrides": []}
    once = {**base, "id": "once", "doc": {"__fuzz_test__": "tls-once", "__marker__": str(tmp_path / "once")}}
    always = {**base, "id": "always", "doc": {"__fuzz_test__": "tls-always", "__marker__": str(tmp_path / "always")}}
    res = {i["id"]: (i, r) for i, r in fuzz_py.run_inputs([once, always], jobs=2, timeout=30)}
    assert set(res) == {"once", "always"}
    (i_always, r_always), (i_once, r_once) = res["always"], res["once"]
    assert r_always["outcome"] == fuzz_py.MEMORY and "exit 127" in r_always["detail"] and i_always["retried"], r_always
    assert r_once["outcome"] != fuzz_py.MEMORY and i_once["retried"], r_once


# ---- the user's files and studies (scripts/fuzz_files.py) --------------------------


def test_seeded_files_campaign(tmp_path):
    """Commands pointed anywhere in a workspace of the user's files, earlier
    results and studies, damaged studies and hostile SQL: a refusal changes
    nothing, a success changes only its outputs (a query nothing), no user
    file changes, no temporaries are left, a resumed sweep repairs."""
    import fuzz_files

    summary = fuzz_files.campaign(seed=SEED, inputs=150, work=tmp_path)
    text = fuzz_files.report(summary)
    print(text)
    assert summary["inputs"] == 150 and set(summary["by_source"]) == set(fuzz_files.SOURCES), text
    by = summary["by_source"]
    for source in ("outputs", "sql"):  # both ends reached
        assert by[source].get(fuzz_files.OK, 0) >= 5 and by[source].get(fuzz_files.REFUSED, 0) >= 5, text
    assert by["study"].get(fuzz_files.OK, 0) >= 20, text  # a damaged study is still read, or repaired
    assert not summary["failures"], text
