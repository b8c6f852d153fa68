"""The laws of the catalogued mistakes from the enumeration of their own decoders (the engine's
``play`` with one rule swapped, grading/faulty*.py, through grading/laws.py ``decoder_kernel``),
equal, exactly, block by block, to the block programs grading/laws.py writes for them, under every
block schedule, on small configs of each mistake's own example."""

from __future__ import annotations

import pytest

from specdec_service.engine import parse_config
from specdec_service.engine.enumeration import NotEnumerable
from specdec_service.grading.catalogue import BY_ID
from specdec_service.grading.laws import CUMPROD, PROGRAMS, SCHEDULES, TARGETS_LAW, law_of_program
from specdec_service.grading.samples import _mistake_rows

ENUMERATED = [name for name in {**PROGRAMS, **TARGETS_LAW} if name not in CUMPROD]


def small(mistake):
    example = mistake.example
    return parse_config({**example, "limit": 3, "width": min(example.get("width", 3), 2)})


@pytest.mark.parametrize("name", ENUMERATED)
@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_a_mistakes_law_is_the_enumeration_of_its_decoder(name, schedule):
    mistake = BY_ID[name]
    config = small(mistake)
    program = {**PROGRAMS, **TARGETS_LAW}[name]
    rows, ratio_draft = _mistake_rows(config, mistake)
    written, enumerated = {}, {}
    law = law_of_program(config, program, name, rows=rows, ratio_draft=ratio_draft, schedule=schedule, kernels=written)
    assert law_of_program(config, mistake.rules, name, schedule=schedule, kernels=enumerated) == law
    assert enumerated == written  # every block's law, exact Fractions
    assert all(sum(p for _, p in kernel) == 1 for kernel in enumerated.values())


@pytest.mark.parametrize("name", CUMPROD)
def test_a_mistake_that_multiplies_draws_keeps_its_closed_form(name):
    # u_1 ... u_i < a_i: a product of draws, which no question to one draw asks
    mistake = BY_ID[name]
    with pytest.raises(NotEnumerable):
        law_of_program(small(mistake), mistake.rules, name)
