"""longfat's BPF congestion controls on the namespace testbed (issue 15's
kernel test): each carries a 100 Mbit/s x 50 ms transfer of 10 s within
10 % of what the kernel's Reno gets alone. An algorithm whose program is
not registered (`longfat kernel load longfat_<name>`) is skipped with that
reason; without root, TUN, namespaces or htb everything is skipped. About
13 s per registered algorithm, plus 13 s for Reno.
"""

from __future__ import annotations

import pytest

from longfat import testbed
from longfat.runner import prepare
from test_testbed import _WHY, needs_testbed, scenario

# ---- longfat's BPF algorithms, where loaded ------------------------------------------

_LONGFAT = [a for a in __import__("longfat").algorithms() if a not in testbed.KERNEL_BUILTIN and a != "plt"]


@pytest.fixture(scope="module")
def reno_alone_bps(tmp_path_factory):
    """Reno's goodput alone on the transfer of the next test."""
    if _WHY is not None:
        pytest.skip(f"testbed unavailable: {_WHY}")
    spec = scenario(duration="10s")
    spec["run"]["measure_from"] = "0s"
    prepare(spec)
    r = testbed.run(spec, tmp_path_factory.mktemp("reno") / "out", plot=False)
    return r.summary["flows"][0]["goodput_bps"]


@needs_testbed
@pytest.mark.parametrize("algo", _LONGFAT)
def test_each_loaded_longfat_algorithm_carries_a_transfer_like_reno(tmp_path, algo, reno_alone_bps):
    """Issue 15: each BPF algorithm carries a 100 Mbit/s x 50 ms transfer of
    10 s within 10 % of what Reno gets alone (skipped for an algorithm that
    is not registered: `longfat kernel load longfat_<name>` loads it)."""
    name = testbed.kernel_cc(algo)
    if name not in testbed.available_congestion_controls():
        pytest.skip(f"{name} is not registered in this kernel (run `longfat kernel load {name}`)")
    spec = scenario(duration="10s")
    spec["run"]["measure_from"] = "0s"
    spec["flows"] = [{"cc": algo}]
    prepare(spec)
    r = testbed.run(spec, tmp_path / "out", plot=False)
    g = r.summary["flows"][0]["goodput_bps"]
    assert abs(g - reno_alone_bps) <= 0.10 * reno_alone_bps, (algo, g, reno_alone_bps)
