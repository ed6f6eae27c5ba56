"""The algorithm catalogue (crates/longfat-cc's declarations) drives
``longfat algorithms --format json``, the parameter tables of
docs/algorithms.md and the Python fuzzer's parameters."""

import json
import random
import re
import sys

from conftest import ROOT, run_cli

from longfat._native import algorithms
from longfat.catalogue import catalogue, generated, with_generated_blocks

DOCS = ROOT / "docs" / "algorithms.md"


def test_committed_docs_tables_are_the_generated_ones():
    text = DOCS.read_text()
    assert with_generated_blocks(text) == text, "docs/algorithms.md is stale: run scripts/algorithm_tables.py"
    # Every algorithm with parameters has its table, and the profiles theirs.
    blocks = set(re.findall(r"<!-- catalogue (\S+): generated", text))
    assert blocks == {a["name"] for a in catalogue() if a["params"]} | {"profiles"}
    assert "`high_p` | unset (`ns2`: 1e-7) |" in generated("highspeed")


def test_algorithms_json_lists_every_parameter_with_its_range():
    r = run_cli("algorithms", "--format", "json", timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [a["name"] for a in doc] == list(algorithms())
    by_name = {a["name"]: a for a in doc}
    assert all(a["what"] and a["paper"] for a in doc)
    assert sum(len(a["params"]) for a in doc) >= 41
    for a in doc:
        for p in a["params"]:
            assert set(p) == {"name", "unit", "default", "profile_defaults", "range", "about", "source"}, p
            assert p["range"]["kind"] in ("closed", "open", "whole", "switch")
            assert set(p["profile_defaults"]) == {"rfc", "ns2", "linux"}
    htcp = {p["name"]: p for p in by_name["htcp"]["params"]}
    assert htcp["beta_max"]["default"] == 0.8
    assert htcp["beta_max"]["profile_defaults"] == {"rfc": 0.8, "ns2": 0.8, "linux": 102 / 128}
    assert htcp["beta_max"]["range"] == {"kind": "open", "lo": 0.0, "hi": 1.0}
    assert "beta_min <= beta_max" in by_name["htcp"]["constraints"]
    cubic = {p["name"]: p for p in by_name["cubic"]["params"]}
    assert {"hystart", "hystart_detect", "hystart_min_samples", "unknown_w_max_growth", "linux_rules"} <= set(cubic)
    assert by_name["plt"]["kind"] == "transport" and by_name["reno"]["kind"] == "controller"


def test_python_fuzzer_generates_every_declared_parameter():
    sys.path.insert(0, str(ROOT / "scripts"))
    import fuzz_py

    rng = random.Random(29)
    seen = set()
    for _ in range(3000):
        seen.update(fuzz_py.random_params(rng))
    declared = {p["name"] for a in catalogue() for p in a["params"]}
    assert declared - seen == set()


def test_the_kernel_programs_defaults_are_the_controllers_own():
    """testbed agree runs, in the simulator, the controller each BPF program
    implements: its own defaults (kernel/algo/<name>.h's *_default_cfg), so
    every parameter the linux profile changes is set back. The values are
    the C headers' defaults, read there by hand."""
    from longfat.testbed.agree import kernel_program_params

    assert kernel_program_params("highspeed") == {"linux_table": 0}
    assert kernel_program_params("scalable") == {"linux_rules": 0, "low_window": 16}
    assert kernel_program_params("htcp") == {
        "beta_max": 0.8,
        "rtt_max_fade": 7 / 8,
        "rtt_max_from_samples": 0,
        "adaptive_min_rtt": 0,
        "rtt_scaling": 0,
        "scale_min": 0.5,
        "scale_max": 10.0,
        "bandwidth_switch": 0,
    }
    for algo in ("ltcp", "ehstcp", "tcpgt"):
        assert kernel_program_params(algo) == {}
