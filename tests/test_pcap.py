"""Packet captures (`run.pcap`), read back with Debian's tshark and tcptrace:
the files open without an error or a warning, and what the tools count and
measure in them equals what longfat counted and measured for the flow."""

from __future__ import annotations

import os
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import longfat
from longfat._native import ScenarioError

REQUIRE_ENV = "LONGFAT_REQUIRE_PCAP_TOOLS"
#: The capture files' clock: the simulated time plus 1 s (capture.rs EPOCH_NS).
EPOCH_NS = 1_000_000_000
SENDER_ISN = 1_000_000_000
PAYLOAD = 1460

#: A short lossy flow: Reno over 20 Mbit/s x 20 ms with random loss on the
#: wire and a small queue, 3 s; it starts at 1 ms so that the summary's
#: window (from 0) holds every packet it sends.
LOSSY = {
    "name": "pcap-lossy",
    "network": {"topology": "dumbbell", "bottleneck": {"rate": "20Mbps", "delay": "10ms", "queue": "30pkt", "loss": 0.002}},
    "flows": [{"name": "bulk", "cc": "reno", "start": "1ms"}],
    "run": {"duration": "3s", "sample_interval": "10ms"},
}


def require_tools() -> None:
    missing = [t for t in ("tshark", "tcptrace") if shutil.which(t) is None]
    if missing:
        why = f"no {' or '.join(missing)} (apt-get install tshark tcptrace)"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but the capture checks cannot run: {why}", pytrace=False)
        pytest.skip(f"capture check skipped: {why}")


def tshark(path: Path, *args: str) -> str:
    """tshark's output; its stderr must hold nothing but its note on
    running as root (a malformed or truncated file is reported there)."""
    p = subprocess.run(["tshark", "-r", str(path), *args], capture_output=True, text=True, check=True)
    err = [ln for ln in p.stderr.splitlines() if ln.strip() and "could be dangerous" not in ln]
    assert not err, f"tshark complained about {path}: {err}"
    return p.stdout


FIELDS = (
    "frame.number", "frame.time_epoch", "ip.src", "tcp.flags.syn", "tcp.len", "tcp.seq", "tcp.ack",
    "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr", "tcp.options.sack_le", "tcp.options.sack_re",
    "tcp.analysis.ack_rtt", "tcp.analysis.acks_frame", "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission", "tcp.analysis.out_of_order", "tcp.checksum.status", "ip.checksum.status",
)


def frames(path: Path) -> list[dict]:
    """Every frame's fields, absolute sequence numbers, checksums checked."""
    out = tshark(
        path, "-o", "tcp.relative_sequence_numbers:FALSE", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
        "-T", "fields", "-E", "separator=|", *[a for f in FIELDS for a in ("-e", f)],
    )
    rows = []
    for line in out.splitlines():
        r = dict(zip(FIELDS, line.split("|")))
        r["t_ns"] = int(Decimal(r["frame.time_epoch"]) * 10**9) - EPOCH_NS
        rows.append(r)
    return rows


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    require_tools()
    result = longfat.run(LOSSY, pcap=["bulk"])
    out = tmp_path_factory.mktemp("pcap") / "run"
    result.save(out)
    path = out / "pcap" / "bulk.pcapng"
    return result, out, path, frames(path)


def test_capture_is_saved_with_the_results(lossy):
    result, out, path, _ = lossy
    assert list(result.captures) == ["bulk"] and result.capture_tap == "sender"
    assert path.read_bytes() == result.captures["bulk"]
    assert result.capture_paths() == {"bulk": Path("pcap/bulk.pcapng")}
    assert (out / "summary.json").exists()


def test_tshark_reads_it_without_errors_or_warnings(lossy):
    _, _, path, rows = lossy
    expert = tshark(path, "-q", "-z", "expert")
    # At the sender's host nothing is reordered or missed: an out-of-order,
    # previous-segment-lost or malformed verdict would be an encoding error.
    for level in ("Errors", "Warns"):
        assert f"\n{level} (" not in expert, expert
    assert len(rows) > 5000
    # Checksums: every header checks (the ACKs are whole; data segments are
    # cut after their headers, so their TCP checksum is unverifiable: 2).
    assert {r["ip.checksum.status"] for r in rows} == {"1"}
    acks = [r for r in rows if r["ip.src"] == "10.128.0.1"]
    data = [r for r in rows if r["ip.src"] == "10.64.0.1" and r["tcp.len"] != "0"]
    assert {r["tcp.checksum.status"] for r in acks} == {"1"}
    assert {r["tcp.checksum.status"] for r in data} == {"2"}


def test_counts_match_longfats_counters(lossy):
    """Data segments = sent_pkts, pure ACKs = the ACKs the sender received,
    retransmissions = retransmits. Wireshark flags
    a segment below the highest sent as a fast retransmission (within 20 ms
    of the second duplicate ACK for it), out of order (within the
    handshake's RTT of the highest segment: 1 ns here) or a retransmission;
    tcp.analysis.retransmission is set on the fast ones too. Each of Reno's
    fast recoveries starts with one fast retransmission; no RTO fired."""
    result, _, path, rows = lossy
    f = result.summary["flows"][0]
    assert f["timeouts"] == 0 and f["retransmits"] > 20
    data = [r for r in rows if r["ip.src"] == "10.64.0.1" and r["tcp.len"] != "0"]
    pure_acks = [r for r in rows if r["ip.src"] == "10.128.0.1" and r["tcp.flags.syn"] == "0"]
    rtx = [r for r in rows if r["tcp.analysis.retransmission"]]
    assert len(data) == f["sent_pkts"]
    assert len(pure_acks) == result.stats["acks_received"][0]
    assert len(rtx) == f["retransmits"]
    assert not [r for r in rows if r["tcp.analysis.out_of_order"]]
    assert sum(1 for r in rows if r["tcp.analysis.fast_retransmission"]) == f["fast_recoveries"]


def test_tcptrace_counts_the_same_retransmissions(lossy):
    result, _, path, _ = lossy
    out = subprocess.run(["tcptrace", "-l", str(path)], capture_output=True, text=True, check=True).stdout
    f = result.summary["flows"][0]

    def pair(label: str) -> tuple[int, int]:
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(label))
        a, b = (int(x) for x in line.replace(label, " ").split() if x.isdigit())
        return a, b

    assert pair("rexmt data pkts:") == (f["retransmits"], 0)
    assert pair("actual data pkts:") == (f["sent_pkts"], 0)
    assert pair("pure acks sent:") == (0, result.stats["acks_received"][0])
    assert "1 TCP connection traced" in out


def test_rtt_samples_match_rtt_ns(lossy):
    """The rule: the `rfc` sender takes an RTT sample from every ACK, now
    minus the TSval its TSecr echoes (the sender's clock, in ns); the series'
    rtt_ns at time t is the latest sample, from the last ACK before t.
    Wireshark's ack_rtt is the ACK's time minus the time of the segment whose
    end the ACK acknowledges (only for an ACK that advances to the end of a
    segment it saw, so not for duplicate ACKs). The two are the same sample
    when that segment is the one whose TSval the ACK echoes (a delayed ACK
    echoes the later of its two segments, the one it acknowledges up to; an
    ACK that fills a hole echoes the retransmission, while Wireshark times
    the original: these differ and are left out). The tap is the sender's
    host, where the sender stamps and receives, so the tolerance is zero:
    equal to the nanosecond. Rows with an ACK at their very instant are left
    out (which of the two the engine ran first is its event order)."""
    result, _, path, rows = lossy
    tsval = {r["frame.number"]: r["tcp.options.timestamp.tsval"] for r in rows}
    acks = [r for r in rows if r["ip.src"] == "10.128.0.1" and r["tcp.flags.syn"] == "0"]
    times = [a["t_ns"] for a in acks]
    flows = pq.read_table(Path(path).parent.parent / "flows.parquet").to_pylist()
    import bisect

    compared = matched = 0
    for row in flows:
        t = round(row["time_s"] * 1e9)
        i = bisect.bisect_left(times, t)
        if i == 0 or (i < len(times) and times[i] == t):
            continue
        a = acks[i - 1]
        compared += 1
        if a["tcp.analysis.ack_rtt"] and tsval[a["tcp.analysis.acks_frame"]] == a["tcp.options.timestamp.tsecr"]:
            assert row["rtt_ns"] == int(Decimal(a["tcp.analysis.ack_rtt"]) * 10**9), (t, a)
            matched += 1
    # Most rows compare (the rest fall on duplicate ACKs of a recovery).
    assert compared >= 290 and matched >= 0.8 * compared, (compared, matched)
    print(f"rtt_ns rows compared {compared}, equal to ack_rtt {matched}")


def test_sack_blocks_and_timestamps_decode_as_used(lossy):
    """Timestamps: a data segment's TSval is the sender's clock when it
    sent, in microseconds; its TSecr the TSval of the last ACK the sender
    got (0 before the first); an ACK's TSecr is the TSval of a segment sent
    before it. SACK blocks: whole segments above the cumulative ACK, at
    most three, and the sender never retransmits a segment an earlier ACK
    SACKed (RFC 6675)."""
    _, _, _, rows = lossy
    rows = [r for r in rows if r["tcp.flags.syn"] == "0"]
    sent_ts: set[str] = set()
    last_ack_tsval = "0"
    sacked: set[int] = set()
    n_blocks = 0
    for r in rows:
        if r["ip.src"] == "10.64.0.1":
            assert int(r["tcp.options.timestamp.tsval"]) == r["t_ns"] // 1000, r
            assert r["tcp.options.timestamp.tsecr"] == last_ack_tsval, r
            sent_ts.add(r["tcp.options.timestamp.tsval"])
            seq = int(r["tcp.seq"])
            if r["tcp.analysis.retransmission"]:
                assert seq not in sacked, r
        else:
            assert r["tcp.options.timestamp.tsecr"] in sent_ts, r
            last_ack_tsval = r["tcp.options.timestamp.tsval"]
            ack = int(r["tcp.ack"])
            les, res = ints(r["tcp.options.sack_le"]), ints(r["tcp.options.sack_re"])
            assert len(les) == len(res) <= 3
            for le, re_ in zip(les, res):
                assert ack < le < re_ and (le - SENDER_ISN - 1) % PAYLOAD == 0 and (re_ - SENDER_ISN - 1) % PAYLOAD == 0, r
                sacked.update(range(le, re_, PAYLOAD))
                n_blocks += 1
            sacked = {s for s in sacked if s >= ack}
    assert n_blocks > 100


def test_bottleneck_tap_sees_what_leaves_the_bottleneck(tmp_path):
    """At the bottleneck's far end the capture holds the data that left the
    bottleneck link intact (sent minus what its queue dropped and the wire
    corrupted) and the ACKs that reached the bottleneck's far router: no
    fewer than the sender received, no more than the receiver sent (the
    rest are in flight at the end); tshark, which cannot know what was lost
    before its tap, reads the file without an error."""
    require_tools()
    result = longfat.run(LOSSY, pcap="bulk", pcap_tap="bottleneck")
    assert result.capture_tap == "bottleneck"
    path = tmp_path / "b.pcapng"
    path.write_bytes(result.captures["bulk"])
    assert "\nErrors (" not in tshark(path, "-q", "-z", "expert")
    rows = frames(path)
    data = [r for r in rows if r["ip.src"] == "10.64.0.1" and r["tcp.len"] != "0"]
    acks = [r for r in rows if r["ip.src"] == "10.128.0.1" and r["tcp.flags.syn"] == "0"]
    f = result.summary["flows"][0]
    fwd = [ln for ln in result.summary["links"] if ln["name"] == "bottleneck"][0]
    assert fwd["drops_overflow"] > 0 and fwd["drops_random"] > 0
    # What is still queued or on the bottleneck's wire at the end (30
    # packets of queue, 20 Mbit/s x 10 ms = 17 packets of wire) is not seen.
    in_flight = f["sent_pkts"] - fwd["drops_overflow"] - fwd["drops_random"] - len(data)
    assert 0 <= in_flight <= 30 + 17 + 1, in_flight
    got, sent = result.stats["acks_received"][0], result.stats["acks_sent"][0]
    assert got <= len(acks) <= sent and sent - got < 20


def test_off_costs_no_file_and_bad_requests_name_the_field(tmp_path):
    plain = longfat.run(LOSSY)
    assert plain.captures == {} and plain.capture_tap is None
    plain.save(tmp_path / "r")
    assert not (tmp_path / "r" / "pcap").exists()
    with pytest.raises(ScenarioError, match=r"run.pcap\[0\].*no flow is named \"nope\".*bulk"):
        longfat.run(LOSSY, pcap=["nope"])
    with pytest.raises(ScenarioError, match=r"run.pcap\[1\].*listed twice"):
        longfat.run(LOSSY, pcap=["bulk", "bulk"])
    udp = {**LOSSY, "udp": [{"name": "cbr", "rate": "1Mbps", "pattern": "cbr"}]}
    with pytest.raises(ScenarioError, match=r"run.pcap\[0\].*UDP source; captures cover TCP flows only"):
        longfat.run(udp, pcap=["cbr"])
    prio = {**LOSSY["network"]["bottleneck"], "discipline": "priority"}
    plt = {**LOSSY, "network": {"topology": "dumbbell", "bottleneck": prio}, "flows": [{"name": "p", "transport": "plt", "cc": "reno"}]}
    with pytest.raises(ScenarioError, match=r"run.pcap\[0\].*PLT connection"):
        longfat.run(plt, pcap=["p"])
    with pytest.raises(ScenarioError, match="pcap_tap"):
        longfat.run(LOSSY, pcap=["bulk"], pcap_tap="middle")
    with pytest.raises(ScenarioError, match="pcap: 3 is not a flow name"):
        longfat.run(LOSSY, pcap=[3])


def test_a_capture_over_the_memory_budget_is_refused_before_the_run():
    """1 Gbit/s for 100 s: 8.3 M data packets, 9.2 M with the estimate's 10 %
    for resent ones, and as many ACKs at most, at 190 bytes each: 3.2 GiB,
    over a 1 GiB budget; the same run without the capture fits."""
    big = {
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "1Gbps", "delay": "5ms", "queue": "100pkt"}},
        "flows": [{"name": "bulk", "cc": "cubic"}],
        "run": {"duration": "100s", "sample_interval": "1s"},
    }
    from longfat.runner import prepare

    prepare(big, memory_budget_bytes="1GiB")
    with pytest.raises(ScenarioError, match=r"packet captures: 3\.2 GiB.*memory budget of 1\.0 GiB.*capture fewer flows \(run.pcap") as e:
        prepare(big, memory_budget_bytes="1GiB", pcap=["bulk"])
    assert e.value.args[1] == "run.pcap"


def test_ecn_bits_are_the_ones_the_simulator_used(tmp_path):
    """An ECN flow behind CoDel that marks: at the sender, new data carries
    ECT(0) and retransmissions Not-ECT (RFC 3168 §6.1.5), and the ACKs with
    ECE are the sender's ece_acks; at the bottleneck's far end the CE-marked
    data are the receiver's ce_marks (only the receiver's access link, no
    delay, lies between)."""
    require_tools()
    s = {
        "name": "pcap-ecn",
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "20Mbps", "delay": "10ms", "queue": "200pkt", "discipline": "codel", "aqm": {"ecn": True}}},
        "flows": [{"name": "bulk", "cc": "reno", "start": "1ms", "tcp": {"ecn": True}}],
        "run": {"duration": "3s", "sample_interval": "10ms"},
    }

    def count(result, display_filter: str) -> int:
        path = tmp_path / f"{result.capture_tap}.pcapng"
        path.write_bytes(result.captures["bulk"])
        return tshark(path, "-Y", display_filter).count("\n")

    at_sender = longfat.run(s, pcap=["bulk"])
    f = at_sender.summary["flows"][0]
    assert f["ece_acks"] > 100 and f["ce_marks"] > 5 and f["retransmits"] > 0
    assert count(at_sender, "ip.src==10.128.0.1 && tcp.flags.ece==1 && tcp.flags.syn==0") == f["ece_acks"]
    assert count(at_sender, "ip.src==10.64.0.1 && tcp.len>0 && ip.dsfield.ecn==2") == f["sent_pkts"] - f["retransmits"]
    assert count(at_sender, "ip.src==10.64.0.1 && tcp.len>0 && ip.dsfield.ecn==0") == f["retransmits"]
    assert count(at_sender, "ip.dsfield.ecn==3") == 0
    at_bottleneck = longfat.run(s, pcap=["bulk"], pcap_tap="bottleneck")
    assert count(at_bottleneck, "ip.dsfield.ecn==3") == at_bottleneck.summary["flows"][0]["ce_marks"]


def test_cli_writes_the_capture_and_names_the_field_of_a_bad_one(tmp_path):
    """`longfat run --pcap` writes pcap/<flow>.pcapng with the other files
    and says so; a name no flow has is an error naming run.pcap[0] and the
    flows' names, with no traceback and no directory."""
    from conftest import run_cli

    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'name = "cli-pcap"\n[network]\ntopology = "dumbbell"\n[network.bottleneck]\nrate = "10Mbps"\ndelay = "5ms"\nqueue = "20pkt"\n'
        '[[flows]]\nname = "a/b"\ncc = "cubic"\n[run]\nduration = "0.5s"\n'
    )
    out = tmp_path / "res"
    r = run_cli("run", str(scenario), "--out", str(out), "--no-plot", "--pcap", "a/b", "--pcap-tap", "bottleneck")
    assert r.returncode == 0, r.stderr
    assert "pcap/a_b.pcapng" in r.stdout
    assert (out / "pcap" / "a_b.pcapng").read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    r = run_cli("run", str(scenario), "--out", str(tmp_path / "no"), "--pcap", "b")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert 'run.pcap[0]: no flow is named "b"' in r.stderr and "a/b" in r.stderr
    assert not (tmp_path / "no").exists()
