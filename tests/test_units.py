"""Python reads units with the engine's parsers (longfat.units over
crates/longfat-sim/src/units.rs): the same numbers, the same refusals."""

import pytest

import longfat
from conftest import small_scenario
from longfat.units import rate_bps, seconds


def test_units_are_read_as_the_engine_reads_them():
    assert seconds("70ms") == 0.07 and seconds("2min") == 120.0 and seconds("250us") == seconds("250µs") == 250e-6
    assert rate_bps("1Gbps") == 1e9 and rate_bps("2.5Mbps") == 2.5e6 and rate_bps("64kbps") == 64e3


@pytest.mark.parametrize("field, text, parse", [("run.duration", "70", seconds), ("network.bottleneck.rate", "1Gbit", rate_bps)])
def test_a_malformed_unit_is_refused_in_the_engines_words(field, text, parse):
    """The message Python gives is the one the scenario's validation gives
    for the same text (after the field's name)."""
    with pytest.raises(ValueError) as ours:
        parse(text)
    spec = small_scenario()
    section, key = field.rsplit(".", 1)
    node = spec
    for part in section.split("."):
        node = node[part]
    node[key] = text
    with pytest.raises(longfat.ScenarioError) as engine:
        longfat.run(spec)
    assert str(ours.value) in engine.value.args[0], (str(ours.value), engine.value.args[0])
