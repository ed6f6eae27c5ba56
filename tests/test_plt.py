"""PLT through the Python front end: per-module columns, and its checks."""

import numpy as np
import pytest

import longfat
from conftest import run_cli, small_scenario
from longfat import ScenarioError


def plt_scenario(**run):
    sc = small_scenario(**run)
    sc["network"]["bottleneck"].update(discipline="priority", buffer="shared", loss=0.01)
    # mu above the random loss rate, so the LCM grows (at mu = 0.5 % it would back off).
    sc["flows"] = [{"cc": "plt", "plt": {"mu": 0.05}}, {"cc": "reno"}]
    return sc


def test_plt_flows_carry_per_module_series_that_add_up():
    res = longfat.run(plt_scenario())
    cols = res.flows.column_names
    for c in ("hcm_cwnd_pkts", "lcm_cwnd_pkts", "hcm_sent_pkts", "lcm_sent_pkts", "hcm_lost_pkts", "lcm_lost_pkts", "hcm_goodput_bps", "lcm_goodput_bps"):
        assert c in cols, c
    flow = np.asarray(res.flows["flow"])
    plt_rows, reno_rows = flow == 0, flow == 1
    hcm = res.flows["hcm_cwnd_pkts"].to_numpy(zero_copy_only=False)
    lcm = res.flows["lcm_cwnd_pkts"].to_numpy(zero_copy_only=False)
    cwnd = np.asarray(res.flows["cwnd_pkts"])
    assert np.allclose(cwnd[plt_rows], hcm[plt_rows] + lcm[plt_rows])
    assert res.flows["hcm_cwnd_pkts"].null_count == reno_rows.sum() == res.flows["lcm_sent_pkts"].null_count
    assert not np.isnan(hcm[plt_rows]).any()
    # Runs without PLT flows have no module columns.
    assert "lcm_cwnd_pkts" not in longfat.run(small_scenario()).flows.column_names
    # Over the whole run the data that arrived first through either module
    # is the data delivered (in order) plus what is still held out of order.
    s = res.summary["flows"][0]
    assert s["algorithm"] == "plt"
    first = s["hcm_goodput_bps"] + s["lcm_goodput_bps"]
    assert first == pytest.approx(s["goodput_bps"], rel=0.05)
    assert s["lcm_goodput_bps"] > s["hcm_goodput_bps"], "at 1 % loss the LCM carries most of the data"
    # Reno's share on this lossy path is what Reno gets; PLT takes the rest.
    assert s["goodput_bps"] > 3 * res.summary["flows"][1]["goodput_bps"]


def test_plt_needs_a_priority_bottleneck(tmp_path):
    sc = plt_scenario()
    sc["network"]["bottleneck"] = {"rate": "20Mbps", "delay": "20ms", "queue": "1bdp"}
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.cc: .*priority"):
        longfat.run(sc)
    path = tmp_path / "fifo.toml"
    path.write_text(
        'name = "fifo"\n[network]\ntopology = "dumbbell"\n[network.bottleneck]\nrate = "20Mbps"\ndelay = "20ms"\nqueue = "1bdp"\n'
        '[[flows]]\ncc = "plt"\n[run]\nduration = "5s"\n'
    )
    r = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode != 0
    assert "flows[0].cc" in r.stderr and "priority" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()
