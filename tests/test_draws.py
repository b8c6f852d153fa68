"""The SplitMix64 draw stream (SPEC section 2) against the SPEC's vectors and the JDK."""

import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from specdec_service.engine import MAX_POSITION, MAX_SEED, InvalidInput, draw, draw_slice

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "splittable_random.json").read_text())


def test_spec_vectors():
    assert [draw(0, n).u for n in range(4)] == [0.8833108082136426, 0.43152799704850997, 0.026433771592597743, 0.9708819781538285]
    assert [draw(1, n).u for n in range(4)] == [0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721]


@pytest.mark.parametrize("seed", sorted(FIXTURE["seeds"], key=int))
def test_first_1000_draws_equal_java_splittable_random(seed):
    expected = FIXTURE["seeds"][seed]
    assert len(expected) == 1000
    assert [d.u for d in draw_slice(int(seed), 0, 1000)] == expected


def test_fixture_covers_the_largest_seed():
    assert str(MAX_SEED) in FIXTURE["seeds"]


def test_hex_is_the_raw_value_before_the_final_shift():
    d = draw(1, 0)
    assert d.hex == "910a2dec89025cc1"
    assert int(d.hex, 16) >> 11 == d.mantissa
    assert d.u == d.mantissa / 2**53
    assert d.to_json() == {"position": 0, "u": 0.5665615751722809, "hex": "910a2dec89025cc1"}


@given(st.integers(0, MAX_SEED), st.integers(0, MAX_POSITION))
def test_any_position_is_reachable_and_in_unit_interval(seed, position):
    d = draw(seed, position)
    assert 0 <= d.u < 1
    assert d.mantissa < 2**53
    assert len(d.hex) == 16
    assert d == draw(seed, position)


def test_slice_is_the_stream_from_a_position():
    assert draw_slice(1, 3, 2) == [draw(1, 3), draw(1, 4)]
    assert [d.position for d in draw_slice(42, 10, 3)] == [10, 11, 12]


def test_slice_reaches_the_last_position():
    assert draw_slice(7, MAX_POSITION, 1)[0].position == MAX_POSITION


@pytest.mark.parametrize(
    "seed, position, count, field",
    [
        (-1, 0, 1, "seed"),
        (2**53, 0, 1, "seed"),
        (1, -1, 1, "position"),
        (1, 0, 0, "count"),
        (1, 0, 4097, "count"),
        (1, MAX_POSITION, 2, "position"),
        (True, 0, 1, "seed"),
    ],
)
def test_slice_bounds(seed, position, count, field):
    with pytest.raises(InvalidInput) as error:
        draw_slice(seed, position, count)
    assert [f.path for f in error.value.faults] == [(field,)]
