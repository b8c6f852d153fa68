"""Assignment suites: the data is complete and honest, and the standard suite catches every
catalogued mistake (the catalogue as it is when the tests run)."""

import json
from pathlib import Path

import pytest

from specdec_service.engine import parse_config, run
from specdec_service.grading import CATALOGUE
from specdec_service.grading.suites import EXERCISES, UnknownSuite, exercises, suite, suites
from specdec_service.grading.suites_search import (
    MARKERS, STANDARD_MAX, docs_block, matrix, outcome, variant_trace,
)

ROOT = Path(__file__).resolve().parents[1]
RERUN = "run `python -m specdec_service.grading.suites_search --write` to search the suites again"
STANDARD = suite("standard")
STANDARD_CONFIGS = {c.id: c.config for c in STANDARD.configs}


def test_the_three_suites_and_their_sizes():
    assert list(suites()) == ["quick", "standard", "full"]
    assert 3 <= len(suite("quick").configs) <= 4
    assert 1 <= len(STANDARD.configs) <= STANDARD_MAX
    full_ids = [c.id for c in suite("full").configs]
    assert set(STANDARD_CONFIGS) <= set(full_ids) and len(full_ids) > len(STANDARD_CONFIGS)
    for s in suites().values():
        ids = [c.id for c in s.configs]
        assert len(set(ids)) == len(ids) and s.description


def test_unknown_suite_names_the_known_ones():
    with pytest.raises(UnknownSuite, match="quick, standard, full"):
        suite("nope")


@pytest.mark.parametrize("name", ["quick", "standard", "full"])
def test_configs_are_complete_and_exercises_are_read_off_the_reference(name):
    for entry in suite(name).configs:
        config = parse_config(entry.config)
        assert json.loads(json.dumps(config.to_json())) == entry.config, entry.id  # every setting, as a trace echoes it
        assert entry.exercises == exercises(config, run(config)), entry.id


def test_standard_suite_exercises_every_rule():
    exercised = {rule for entry in STANDARD.configs for rule in entry.exercises}
    assert exercised == set(EXERCISES)


def test_exercises_of_known_settings():
    # SPEC section 4's worked example: a later rejection with a discarded proposal, never a bonus
    config = parse_config({"draft": "biased", "seed": 1})
    found = exercises(config, run(config))
    assert "later-rejection" in found and "discarded-proposals" in found and "bonus" not in found
    # draft aligned accepts every proposal (ratio 1); width 4 = limit 4: the output reaches the limit, no bonus
    config = parse_config({"draft": "aligned", "seed": 0, "width": 4, "limit": 4})
    assert exercises(config, run(config)) == ("certain-acceptance", "no-bonus-at-limit")


TABLE = matrix(STANDARD_CONFIGS)


@pytest.mark.parametrize("mistake", CATALOGUE, ids=[m.id for m in CATALOGUE])
def test_standard_suite_catches_and_names_every_catalogued_mistake(mistake):
    row = TABLE[mistake.id]
    caught = [key for key, cell in row.items() if cell in ("exact", "named", "caught")]
    named = [key for key, cell in row.items() if cell in ("exact", "named")]
    assert caught, f"{mistake.id} passes every config of the standard suite: {RERUN}"
    assert named, f"{mistake.id} is never named by the diagnosis on the standard suite: {RERUN}"


def test_a_caught_mistake_really_fails_its_config():
    key, config = next(iter(STANDARD_CONFIGS.items()))
    mistake = next(m for m in CATALOGUE if TABLE[m.id][key] == "exact")
    trace = variant_trace(mistake, parse_config(config))
    assert trace != json.loads(json.dumps(run(parse_config(config))))
    assert outcome(mistake, parse_config(config)) == "exact"


def test_docs_publish_the_current_matrix():
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    begin, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
    assert text[begin:end] == docs_block(), f"docs/grading.md's suite matrix is stale: {RERUN}"
    for m in CATALOGUE:
        assert f"| `{m.id}` |" in text[begin:end]


@pytest.mark.slow
def test_the_suites_are_what_the_search_finds():
    """suites.json is the search's output for the catalogue and engine of today (deterministic)."""
    from specdec_service.grading.suites import SUITES_PATH
    from specdec_service.grading.suites_search import search

    found = search()
    assert found == json.loads(SUITES_PATH.read_text(encoding="utf-8")), RERUN
    assert found["unreachable"] == {"rules": [], "mistakes": []}
    assert found["catalogue"] == [m.id for m in CATALOGUE]
