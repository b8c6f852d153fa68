"""The closed forms grading/laws.py keeps for reach (SPEC 11's and 12's tree mistakes, the correct
tree) equal, exactly, block by block, to the enumeration of their own decoders (the engine's
``play`` with one rule swapped, grading/faulty*.py, through grading/laws.py ``decoder_kernel``),
under every block schedule, on small configs of each mistake's own example; the laws of the
other mistakes are that enumeration (grading/laws.py ``PROGRAMS``)."""

from __future__ import annotations

import pytest

from specdec_service.engine import parse_config
from specdec_service.engine.enumeration import NotEnumerable
from specdec_service.grading.catalogue import BY_ID, CATALOGUE
from specdec_service.engine.decoders import TREE
from specdec_service.grading.laws import (
    CORRECT, CUMPROD, ENUMERATED, PROGRAMS, SCHEDULES, TARGETS_LAW, UNSTATED, law_of_program,
)
from specdec_service.grading.samples import law_of_rules

WRITTEN = {name: program for name, program in {**PROGRAMS, **TARGETS_LAW}.items()
           if name not in CUMPROD and not hasattr(program, "verifier")}
"""The block programs kept (the others are decoders)."""


def small(mistake):
    example = mistake.example
    return parse_config({**example, "limit": 3, "width": min(example.get("width", 3), 2)})


def assert_same_kernels(config, program, decoder, name, schedule):
    written, enumerated = {}, {}
    law = law_of_program(config, program, name, schedule=schedule, kernels=written)
    assert law_of_program(config, decoder, name, schedule=schedule, kernels=enumerated) == law
    assert enumerated == written  # every block's law, exact Fractions
    assert all(sum(p for _, p in kernel) == 1 for kernel in enumerated.values())


@pytest.mark.parametrize("name", sorted(WRITTEN))
@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_a_kept_program_is_the_enumeration_of_its_decoder(name, schedule):
    mistake = BY_ID[name]
    assert_same_kernels(small(mistake), WRITTEN[name], mistake.rules, name, schedule)


@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_the_correct_tree_program_is_the_enumeration_of_the_tree_decoder(schedule):
    config = parse_config({"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "limit": 3, "seed": 0})
    assert_same_kernels(config, CORRECT["tree"], TREE, "", schedule)


def test_the_other_mistakes_laws_are_their_decoders():
    assert all(PROGRAMS[name] is BY_ID[name].rules for name in ENUMERATED)


@pytest.mark.parametrize("name", CUMPROD)
def test_a_mistake_that_multiplies_draws_keeps_its_closed_form(name):
    # u_1 ... u_i < a_i: a product of draws, which no question to one draw asks
    mistake = BY_ID[name]
    with pytest.raises(NotEnumerable):
        law_of_program(small(mistake), mistake.rules, name)


FORWARD = [m.id for m in CATALOGUE if m.id not in PROGRAMS and m.id not in UNSTATED]
"""The mistakes whose law the token-wise forward pass states (grading/samples.py ``law_of_rules``)."""


@pytest.mark.parametrize("name", FORWARD)
@pytest.mark.parametrize("schedule", list(SCHEDULES))
def test_the_forward_pass_is_the_enumeration_of_the_decoder(name, schedule):
    mistake = BY_ID[name]
    config = small(mistake)
    closed, enumerated = law_of_rules(config, mistake.rules, schedule), law_of_program(config, mistake.rules, name,
                                                                                       schedule=schedule)
    assert closed.keys() == enumerated.keys()
    for row, cell in closed.items():
        assert cell.keys() == enumerated[row].keys(), row
        assert all(abs(p - enumerated[row][y]) < 1e-12 for y, p in cell.items()), row  # floats summed in two orders
