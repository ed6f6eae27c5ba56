"""`longfat conformance`: the packetdrill interpreter on longfat's sender,
and the shipped suite against docs/conformance.md.

The interpreter's own tests use short scripts whose expectations are
derived by hand from Linux's rules (IW10, slow start by the packets each ACK
delivers, RTO = srtt + max(4 mdev, 200 ms) after the handshake's sample);
each one is also run with an expectation moved, which must fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli
from longfat import conformance

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "python" / "longfat" / "packetdrill"
DOC = ROOT / "docs" / "conformance.md"

HANDSHAKE = """\
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
  +.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
  +.1 < . 1:1(0) ack 1 win 257
   +0 accept(3, ..., ...) = 4
"""

# IW10; an ACK per 2 packets delivers 2, so cwnd grows by 2 and 4 leave.
SLOW_START = HANDSHAKE + """\
   +0 write(4, ..., 30000) = 30000
   +0 > P. 1:10001(10000) ack 1
   +0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%
+.100 < . 1:1(0) ack 2001 win 257
   +0 > P. 10001:14001(4000) ack 1
+.005 < . 1:1(0) ack 4001 win 257
   +0 > P. 14001:18001(4000) ack 1
   +0 %{ assert tcpi_snd_cwnd == 14, tcpi_snd_cwnd }%
"""

# One packet out: the RTO after the handshake's 100 ms sample is
# 100 + max(4 x 50, 200) = 300 ms, and the tail loss probe is cut to it
# (tcp_schedule_loss_probe); the timeout itself comes 300 ms later.
RTO = HANDSHAKE + """\
   +0 write(4, ..., 1000) = 1000
   +0 > P. 1:1001(1000) ack 1
  +.3 > P. 1:1001(1000) ack 1
  +.3 > P. 1:1001(1000) ack 1
   +0 %{ assert tcpi_ca_state == TCP_CA_Loss and tcpi_backoff == 1, (tcpi_ca_state, tcpi_backoff) }%
"""


def run(text: str, profile: str = "linux") -> conformance.Result:
    return conformance.run_script("inline.pkt", profile, text=text)


def test_a_script_with_linuxs_numbers_passes():
    for text in (SLOW_START, RTO):
        res = run(text)
        assert res.status == "PASS", res.text()


def test_a_moved_segment_fails_at_its_line():
    res = run(SLOW_START.replace("10001:14001(4000)", "10001:15001(5000)"))
    assert res.status == "FAIL" and res.line == 13, res.text()
    assert "expected 10001:15001(5000) but the sender sent 10001:14001(4000)" in res.message


def test_a_wrong_assert_fails_with_its_value():
    res = run(SLOW_START.replace("tcpi_snd_cwnd == 14", "tcpi_snd_cwnd == 15"))
    assert res.status == "FAIL" and res.line == 16
    assert res.message == "assert failed: tcpi_snd_cwnd == 15 (it is 14)"


def test_times_are_checked_with_packetdrills_tolerance():
    # 4 ms is the floor of the tolerance; 12.5 % of the 300 ms gap is 37.5 ms.
    assert run(RTO.replace("  +.3 > P. 1:1001(1000) ack 1\n", "  +.33 > P. 1:1001(1000) ack 1\n", 1)).status == "PASS"
    late = run(RTO.replace("  +.3 > P. 1:1001(1000) ack 1\n", "  +.35 > P. 1:1001(1000) ack 1\n", 1))
    assert late.status == "FAIL" and "left at 0.500000 s" in late.message, late.text()
    # A range holds the time.
    assert run(RTO.replace("  +.3 > P.", "  +.29~+.31 > P.", 1)).status == "PASS"
    assert run(RTO.replace("  +.3 > P.", "  +.1~+.2 > P.", 1)).status == "FAIL"


def test_one_line_may_cover_a_burst_or_part_of_it():
    split = SLOW_START.replace("   +0 > P. 1:10001(10000) ack 1\n", "   +0 > P. 1:3001(3000) ack 1\n   +0 > . 3001:10001(7000) ack 1\n")
    assert run(split).status == "PASS"
    # Not past what left at that instant.
    res = run(SLOW_START.replace("1:10001(10000)", "1:11001(11000)"))
    assert res.status == "FAIL" and "sent 1:10001(10000)" in res.message


def test_lines_outside_the_subset_make_it_unsupported_with_the_line():
    for line, why in (
        ("   +0 close(4) = 0\n", "system call close() is not in the subset"),
        ("`sysctl -q net.ipv4.tcp_ecn=1`\n", "command 'sysctl -q net.ipv4.tcp_ecn=1' is not in the subset"),
        ("   +0 > F. 1:1(0) ack 1\n", "FIN, RST and ECN are not modelled"),
        ("   +0 %{ assert tcpi_rttvar == 3 }%\n", "name 'tcpi_rttvar' is not defined"),
        ("   +0 < . 1:1(0) ack 4001 win 257 <sack 1001:2001,nop,nop>\n", "a D-SACK block (RFC 2883)"),
        ("   +0 < . 1:1(0) ack 30001 win 257\n", "acknowledges data never sent (up to byte 18001)"),
        ("   +0 < . 1:1(0) ack 4001 win 257 <sack 5001:19001,nop,nop>\n", "acknowledges data never sent"),
    ):
        res = run(SLOW_START + line)
        assert res.status == "UNSUPPORTED" and why in res.message, res.text()
        assert res.line == len(SLOW_START.splitlines()) + 1
    for code, why in (("import os", "raised ImportError"), ("1 / 0", "raised ZeroDivisionError")):
        res = run(SLOW_START + f"   +0 %{{ {code} }}%\n")
        assert res.status == "UNSUPPORTED" and why in res.message, res.text()
    no_sack = run(SLOW_START.replace("sackOK,", ""))
    assert no_sack.status == "UNSUPPORTED" and "always runs with SACK" in no_sack.message
    odd = run(SLOW_START.replace("write(4, ..., 30000) = 30000", "write(4, ..., 30500) = 30500"))
    assert odd.status == "UNSUPPORTED" and "30500 bytes is not a whole number of 1000-byte segments" in odd.message


def test_timestamps_take_12_bytes_off_the_mss():
    text = SLOW_START.replace("<mss 1000,sackOK,nop,nop,nop,wscale 7>", "<mss 1012,sackOK,TS val 100 ecr 0,nop,wscale 7>")
    assert run(text).status == "PASS"
    res = run(text.replace("mss 1012", "mss 1000"))
    assert res.status == "UNSUPPORTED" and "988-byte segments" in res.message


def test_the_controller_is_chosen_by_tcp_congestion():
    # Reno and CUBIC grow alike in slow start; an unknown name is refused.
    reno = SLOW_START.replace("   +0 accept(3, ..., ...) = 4\n", "   +0 accept(3, ..., ...) = 4\n   +0 setsockopt(4, IPPROTO_TCP, TCP_CONGESTION, \"reno\", 4) = 0\n")
    assert run(reno).status == "PASS"
    res = run(reno.replace('"reno"', '"dctcp"'))
    assert res.status == "UNSUPPORTED" and "'dctcp' is not a longfat algorithm" in res.message


def test_profiles_differ_where_their_rules_do():
    # rfc and ns2 start from 2 packets (RFC 5681's and ns-2's IW).
    for profile in ("rfc", "ns2"):
        res = run(SLOW_START, profile)
        assert res.status == "FAIL" and "sent 1:2001(2000)" in res.message, res.text()


def test_cli_prints_a_line_per_script_and_the_counts(tmp_path):
    good, bad = tmp_path / "good.pkt", tmp_path / "bad.pkt"
    good.write_text(SLOW_START)
    bad.write_text(SLOW_START.replace("tcpi_snd_cwnd == 14", "tcpi_snd_cwnd == 15"))
    r = run_cli("conformance", str(tmp_path), timeout=120)
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 1, r.stdout + r.stderr
    assert lines[0].startswith("FAIL") and f"{bad}:16: assert failed" in lines[0]
    assert lines[1].startswith("PASS") and str(good) in lines[1]
    assert lines[-1] == "1 passed, 1 failed, 0 unsupported (profile linux)"
    binary = tmp_path / "binary.pkt"
    binary.write_bytes(b"\xff\xfe\x00")
    r = run_cli("conformance", str(binary), timeout=120)
    assert r.returncode == 0 and "cannot read the script" in r.stdout and "Traceback" not in r.stderr, r.stdout + r.stderr
    r = run_cli("conformance", str(tmp_path / "none.pkt"), timeout=120)
    assert r.returncode == 2 and "none.pkt: no such script or directory" in r.stdout, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


# --- the suite ---------------------------------------------------------------

CATEGORIES = ("slow_start", "cwnd", "fast_retransmit", "prr", "rack", "tlp", "rto", "frto_undo", "cubic")


def scripts() -> list[Path]:
    return conformance.collect([str(SUITE)])


def test_the_suite_has_sixty_scripts_each_tied_to_a_source():
    found = scripts()
    assert len(found) >= 60, len(found)
    for p in found:
        h = conformance.header(p.read_text())
        assert set(conformance.HEADER_KEYS) <= h.keys(), (p, h)
        assert h["category"] == p.parent.name and h["category"] in CATEGORIES, p
        assert h["verified"] in ("upstream", "unverified"), p
        if h["verified"] == "upstream":
            # A script Linux passes upstream: Google's or the kernel's file,
            # or the script in a kernel commit's message.
            assert re.match(r"^(google/packetdrill gtests/\S+\.pkt|torvalds/linux (tools/testing/selftests/net/packetdrill/\S+\.pkt|[0-9a-f]{12}\b))", h["source"]), (p, h["source"])
        else:
            # Our own case names the upstream script or kernel code it builds on.
            assert "google/packetdrill" in h["source"] or "torvalds/linux" in h["source"], (p, h["source"])
    for c in CATEGORIES:
        assert any(p.parent.name == c for p in found), f"no script in {c}"


@pytest.fixture(scope="module")
def results() -> dict:
    return {profile: {str(p.relative_to(SUITE)): conformance.run_script(p, profile) for p in scripts()} for profile in conformance.PROFILES}


def test_docs_table_is_the_suites_results(results):
    """docs/conformance.md's table is what the suite gives now, on each
    profile (regenerate: scripts/conformance_table.py)."""
    table = conformance.markdown_table(SUITE, results)
    assert table in DOC.read_text(), "docs/conformance.md is stale: run scripts/conformance_table.py"


def test_every_linux_difference_is_explained(results):
    """The linux profile passes every script, or docs/conformance.md says
    why it does not, under a heading naming the script."""
    doc = DOC.read_text()
    explained = set(re.findall(r"^### `([^`]+\.pkt)`", doc, re.M))
    not_passing = {name for name, r in results["linux"].items() if r.status != "PASS"}
    assert not_passing <= explained, sorted(not_passing - explained)
    # And nothing is explained that passes (a fix removes its section).
    assert explained <= not_passing, sorted(explained - not_passing)
