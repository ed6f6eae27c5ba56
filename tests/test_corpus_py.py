"""The regression corpus, tests/corpus/, replayed through the Python path.

Every file (tests/corpus/*: scenarios shared with the Rust harness;
tests/corpus/python/: Python-only cases, some with ``# args:`` for the
command line; tests/corpus/reproduce/: [reproduce] tables) runs in a worker
process under the fuzz campaign's limits (scripts/fuzz_py.py: 2 GiB of
address space, a time limit, a bounded run) and must not end in BUG, HANG or
MEMORY; a ``# expect:`` line must hold. The cases the issue found on the
command line also run through ``longfat run``.
"""

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_py  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
FILES = fuzz_py.corpus_files(CORPUS)
TIME_LIMIT = 10.0


def _id(p):
    return str(p.relative_to(CORPUS))


@pytest.fixture(scope="module")
def replayed():
    inputs = [fuzz_py.read_corpus_file(p) for p in FILES]
    pairs = fuzz_py.run_inputs(inputs, jobs=2, timeout=TIME_LIMIT)
    return {inp["origin"]: (inp, res) for inp, res in pairs}


def test_corpus_is_there():
    assert len(FILES) >= 60
    names = {p.parent.name for p in FILES}
    assert {"corpus", "python", "reproduce"} <= names


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_corpus_header(path):
    inp = fuzz_py.read_corpus_file(path)
    assert inp["corpus_source"], f"{path}: no '# source:' line"
    e = inp["expect"]
    assert e == "" or e == "ok" or e.startswith("error"), e


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_corpus_case(replayed, path):
    inp, res = replayed[str(path)]
    assert res["outcome"] not in fuzz_py.FAILURES, f"{res['outcome']}: {res.get('detail')}\n{res.get('traceback', '')}\n{res.get('stderr', '')}"
    problem = fuzz_py.expectation_problem(inp["expect"], res)
    assert problem is None, problem


CLI_CASES = [p for p in FILES if p.parent.name == "python" and "CLI internal error" in fuzz_py.read_corpus_file(p)["corpus_source"]]


@pytest.mark.parametrize("path", CLI_CASES, ids=_id)
def test_cli_cases_end_in_one_error_line(path, tmp_path):
    """The issue's command-line reproducers (deep nesting, TOML dates,
    --seed when run is not a table): exit 2 and one 'error: <field>: ...'
    line, never 'internal error'."""
    inp = fuzz_py.read_corpus_file(path)
    res = fuzz_py.run_cli_input(inp, tmp_path, timeout=60)
    assert res["outcome"] == fuzz_py.REFUSED, f"{res['outcome']} {res.get('detail')}: {res.get('stderr')}"
    want = inp["expect"].removeprefix("error").strip()
    if want:
        assert res["stderr"].startswith(f"error: {want}"), res["stderr"]
