"""Scenario values with units (``"100Mbps"``, ``"70ms"``) as numbers, read by
the simulator's own parsers (crates/longfat-sim/src/units.rs, through the
bindings), so that Python reads a value exactly as the engine does. A
malformed value raises ValueError with the engine's message."""

from __future__ import annotations

from longfat._native import parse_duration_ns, parse_rate_bps

NS_PER_S = 1_000_000_000


def rate_bps(text: str) -> float:
    """``"100Mbps"`` -> 1e8 (bits per second)."""
    return float(parse_rate_bps(text))


def seconds(text: str) -> float:
    """``"70ms"`` -> 0.07 (seconds)."""
    return parse_duration_ns(text) / NS_PER_S
