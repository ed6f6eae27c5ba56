"""A short seeded run of the Python-level fuzz campaign (scripts/fuzz_py.py):
generated scenarios, mutated scenario files, mutated [reproduce] tables and
--set/--seed strings, each in a worker process under a time and memory limit;
none may end in anything but a result or one well-formed ScenarioError. Plus
the campaign's own parts: reproducible inputs, the TOML writer, the refusal
classifier, and a few inputs through the real command line."""

import sys
import tomllib

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_py  # noqa: E402

SEED = 20261123


def test_seeded_campaign():
    summary = fuzz_py.campaign(seed=SEED, inputs=300, jobs=2, findings=None)
    text = fuzz_py.report(summary)
    print(text)
    assert summary["inputs"] == 300
    counts = summary["counts"]
    # The mix reaches both ends: runs and refusals, from every source.
    assert counts.get(fuzz_py.ACCEPTED, 0) >= 20 and counts.get(fuzz_py.REFUSED, 0) >= 100, text
    assert set(summary["by_source"]) == set(fuzz_py.SOURCES), text
    assert not summary["failures"], text


def test_command_line_sample():
    res = fuzz_py.cli_sample(SEED, 6, jobs=2, findings=None)
    assert res["inputs"] == 6
    assert not res["failures"], [(i["id"], r["detail"], r.get("stderr")) for i, r in res["failures"]]


def test_inputs_are_reproducible():
    for i in range(40):
        a, b = fuzz_py.make_input(7, i), fuzz_py.make_input(7, i)
        assert repr(a) == repr(b)
    assert any(repr(fuzz_py.make_input(7, i)) != repr(fuzz_py.make_input(8, i)) for i in range(5))


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
