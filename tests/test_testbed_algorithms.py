"""longfat's BPF congestion controls on the namespace testbed (issue 15's
kernel test): each carries a 100 Mbit/s x 50 ms transfer of 10 s within
10 % of what the kernel's Reno gets alone. The testbed loads each program
itself and unloads it afterwards. Without root, TUN, namespaces or htb, or
in a build without the BPF programs, everything is skipped with the
reason. About 13 s per algorithm, plus 13 s for Reno.
"""

from __future__ import annotations

import pytest

from longfat import kernel, testbed
from longfat.runner import prepare
from test_testbed import _WHY, needs_testbed, scenario

# ---- longfat's BPF algorithms ------------------------------------------------------------

_LONGFAT = [a for a, _ in kernel.built()] or ["(none built)"]


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
def test_each_longfat_algorithm_carries_a_transfer_like_reno(tmp_path, algo, reno_alone_bps):
    """Issue 15: each BPF algorithm carries a 100 Mbit/s x 50 ms transfer of
    10 s within 10 % of what Reno gets alone; the testbed loads the program
    it needs and, when it was not registered before, unloads it after."""
    if kernel.not_built_reason():
        pytest.skip(f"the BPF programs were not built: {kernel.not_built_reason()}")
    name = testbed.kernel_cc(algo)
    was_registered = name in testbed.available_congestion_controls()
    spec = scenario(duration="10s")
    spec["run"]["measure_from"] = "0s"
    spec["flows"] = [{"cc": algo}]
    prepare(spec)
    r = testbed.run(spec, tmp_path / "out", plot=False)
    assert (name in testbed.available_congestion_controls()) == was_registered
    g = r.summary["flows"][0]["goodput_bps"]
    assert abs(g - reno_alone_bps) <= 0.10 * reno_alone_bps, (algo, g, reno_alone_bps)
