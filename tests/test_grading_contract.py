"""POST /v1/grade: the contract's ``GradeTraceIn`` is what the route accepts (issue 18 section 6).

A grader grades a wrong trace (200, ``passed: false``, a diagnosis) and refuses (422) only what
is not a trace. ``GradeTraceIn`` is produced from the one schema the grader validates with
(``grading.validate.grading_schema``: the trace format relaxed so that a wrong probability, ratio
or a bonus past the limit is graded), so the two agree; this file proves it on the kind, not on
one example: every node of a few reference traces (every part of the format: proposal steps,
verification steps, correction, bonus, autoregressive sample, discarded tokens, custom models,
EOS) is replaced by values of every JSON type and at and past each bound, deleted, duplicated or
given an unknown neighbour, and for each mutant the contract's verdict (the published
``openapi.yaml``) must be the grader's: admitted -> graded (a report), or refused by a rule the
contract test excuses (``tests/test_openapi.py``: the config's cross-field rules); forbidden ->
refused with a 422 naming a field. The route is checked on a sample and on the issue's examples.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
import yaml
from jsonschema_rs import Draft202012Validator

from specdec_service import create_app
from specdec_service.engine import InvalidInput, parse_config, pointer, run
from specdec_service.grading import grade
from test_openapi import excused

DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
CONTRACT = Draft202012Validator({"$ref": "#/components/schemas/GradeTraceIn", "components": DOCUMENT["components"]})
"""The published contract of one submitted trace."""
STRICT = Draft202012Validator({"$ref": "#/components/schemas/Trace", "components": DOCUMENT["components"]})
"""The trace format as the service writes it (stricter than what the grader reads)."""

EOS_MODEL = {"vocab": ["a", "b", "$"], "start": [0.5, 0.3, 0.2],
             "next": {"a": [0.2, 0.5, 0.3], "b": [0.6, 0.3, 0.1], "$": [0.3, 0.3, 0.4]}}
EOS_DRAFT = {"vocab": ["a", "b", "$"], "start": [0.3, 0.3, 0.4],
             "next": {"a": [0.6, 0.2, 0.2], "b": [0.2, 0.7, 0.1], "$": [0.5, 0.25, 0.25]}}
CONFIGS = {
    # rejections with a correction, discarded proposals, a bonus (seed 3)
    "speculative": {"draft": "biased", "seed": 3, "limit": 6, "width": 2},
    "greedy": {"draft": "biased", "mode": "greedy", "seed": 0, "limit": 5},
    "autoregressive": {"draft": "biased", "mode": "autoregressive", "seed": 0, "limit": 3},
    "custom-eos": {"target": EOS_MODEL, "draft": EOS_DRAFT, "eos": "$", "seed": 2, "limit": 4, "width": 2},
}
TRACES = {name: run(parse_config(config)) for name, config in CONFIGS.items()}

REPLACEMENTS = (None, True, "A", "", "x" * 17, "0123456789abcdef", [], {}, -1, 0, 1, 2, 16, 17, 256, 257,
                2 ** 53 - 1, 2 ** 53, -0.5, 0.5, 1.5)
"""Values of every JSON type, at and past the bounds the trace format states (probabilities
0-1, indices 1-16, lengths up to 256, positions up to 2^53-1, labels of 1-16 characters, a
draw's 16 hex digits)."""


def nodes(value, path=()):
    """Every (path, value) of a JSON value, containers included (root excluded)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,), item
            yield from nodes(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield path + (i,), item
            yield from nodes(item, path + (i,))


def mutants(trace):
    """``(description, mutant)`` for every mutation (see the module docstring) of every node of
    ``trace`` at a place of the format not seen yet (its path with the array indices left out,
    and the kind of its value: a block's correction that is null and one that is an object are
    two places; the tenth item of a distribution is the first's), each a fresh copy."""
    seen = set()
    for path, value in list(nodes(trace)):
        place = (tuple(k for k in path if isinstance(k, str)), type(value))
        if place in seen:
            continue
        seen.add(place)
        for replacement in REPLACEMENTS:
            if replacement != value or type(replacement) is not type(value):
                yield f"{pointer(path)} = {json.dumps(replacement)[:20]}", _set(trace, path, replacement)
        yield f"delete {pointer(path)}", _delete(trace, path)
        if isinstance(value, list):
            grown = value + ([copy.deepcopy(value[-1])] if value else ["A"])
            yield f"{pointer(path)} one item longer", _set(trace, path, grown)
        if isinstance(value, dict):
            yield f"{pointer(path)} with an unknown field", _set(trace, path, {**value, "extra": 0})


def _set(trace, path, value):
    mutant = copy.deepcopy(trace)
    parent = mutant
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = copy.deepcopy(value)
    return mutant


def _delete(trace, path):
    mutant = copy.deepcopy(trace)
    parent = mutant
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return mutant


def as_read(trace):
    """The trace as ``POST /v1/grade`` reads its body (float64, an integral number as an int)."""
    return json.loads(json.dumps(trace), parse_float=lambda text: int(float(text)) if float(text).is_integer()
                      else float(text))


def verdict(trace):
    """The grader's verdict: ``(report, None)`` or ``(None, InvalidInput)``."""
    try:
        return grade(trace, diagnose=False), None
    except InvalidInput as error:
        return None, error


def excused_refusal(error: InvalidInput) -> bool:
    """Whether the contract test excuses the grader's refusal of a contract-valid trace."""
    problem = {"errors": [{"pointer": pointer(f.path), "detail": f.message} for f in error.faults]}
    return excused(422, problem)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_contract_admits_what_the_grader_grades_and_forbids_what_it_refuses(name):
    """Every mutant of one reference trace: contract-valid -> graded (or an excused 422);
    contract-invalid -> a 422 naming a field. Counts each way, so a walk that tests nothing fails."""
    admitted = refused = relaxed = 0
    for description, mutant in mutants(TRACES[name]):
        mutant = as_read(mutant)
        report, error = verdict(mutant)
        if CONTRACT.is_valid(mutant):
            admitted += 1
            relaxed += not STRICT.is_valid(mutant)
            assert report is not None or excused_refusal(error), (
                f"{name}: {description}: the contract admits it, the grader refused it: "
                f"{[(pointer(f.path), f.message) for f in error.faults]}")
        else:
            refused += 1
            assert error is not None and error.faults, (
                f"{name}: {description}: the contract forbids it ({next(CONTRACT.iter_errors(mutant)).message}), "
                f"the grader graded it")
    print(f"{name}: {admitted} mutants admitted ({relaxed} only by the relaxed reading), {refused} refused")
    assert admitted > 100 and refused > 1000 and relaxed >= 10, (admitted, refused, relaxed)


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


@pytest.mark.parametrize("name, where, value", [
    ("autoregressive", ("blocks", 0, "sample", "p"), [2, 0.0]),
    ("autoregressive", ("blocks", 0, "sample", "p"), [-1, 0.0]),
    ("speculative", ("blocks", 0, "verification", 0, "p_token"), -1),
    ("speculative", ("blocks", 0, "verification", 0, "ratio"), -0.5),
    ("speculative", ("blocks", 0, "proposal", "steps", 0, "q"), [1.5, -0.25, -0.25]),
    ("speculative", ("blocks", 0, "proposal", "steps", 0, "draw", "u"), -0.25),
    ("speculative", ("blocks", 0, "proposal", "steps", 0, "draw", "u"), 1.5),
    ("speculative", ("blocks", 0, "proposal", "steps", 0, "draw", "hex"), "ABCDEF0123456789"),
    ("speculative", ("blocks", 0, "proposal", "steps", 0, "draw", "hex"), "abc"),
    ("speculative", ("blocks", 0, "verification", 0, "index"), 0),
    ("speculative", ("blocks", 0, "proposal", "steps", 1, "index"), 17),
])
def test_the_issue_examples_are_graded_and_admitted_by_the_contract(client, name, where, value):
    """issue 18: an autoregressive sample's distribution of ``[2, 0.0]`` or ``[-1, 0.0]``
    (a wrong computation, not a malformed trace) was graded while the contract forbade it; so
    were a negative probability or ratio of a verification step and an unclipped draft row.
    And values a student computes wrongly that were refused and are now graded: a draw's ``u``
    outside [0, 1), its ``hex`` in upper case or unpadded, an index counted from 0 or past 16."""
    mutant = _set(TRACES[name], where, value)
    assert CONTRACT.is_valid(mutant) and not STRICT.is_valid(mutant)
    response = client.post("/v1/grade", json=mutant)
    assert response.status_code == 200
    report = response.get_json()
    assert report["passed"] is False and report["first_divergence"]["path"].startswith(pointer(where))


def test_the_route_agrees_with_the_contract_on_a_sample(client):
    """Over HTTP (body reading included), a fixed sample of 60 mutants of each trace: 200 when
    the contract admits it (or an excused 422), 422 with pointers when it forbids it; never 5xx."""
    rng = random.Random(20261201)
    for name, trace in sorted(TRACES.items()):
        for description, mutant in rng.sample(list(mutants(trace)), 60):
            response = client.post("/v1/grade", json=mutant)
            body = response.get_json()
            if CONTRACT.is_valid(as_read(mutant)):
                assert response.status_code == 200 or (response.status_code == 422 and excused(422, body)), (
                    name, description, body)
            else:
                assert response.status_code == 422 and body["errors"], (name, description, body)


def test_a_token_list_one_past_the_limit_is_graded_and_two_past_refused(client):
    """The third relaxation, which no trace above reaches (their limits are small): at limit 256
    an output of 257 tokens (a bonus past the limit) is admitted by the contract and graded;
    258 tokens are forbidden by both."""
    trace = run(parse_config({"draft": "biased", "seed": 1, "limit": 256}))
    assert len(trace["output"]) == 256
    for extra, admitted in ((1, True), (2, False)):
        mutant = _set(trace, ("output",), trace["output"] + ["A"] * extra)
        assert CONTRACT.is_valid(mutant) is admitted and not STRICT.is_valid(mutant)
        response = client.post("/v1/grade", json=mutant)
        if admitted:
            assert response.status_code == 200 and response.get_json()["passed"] is False
        else:
            assert response.status_code == 422
            assert [e["pointer"] for e in response.get_json()["errors"]] == ["#/output"]


def test_a_repeated_vocabulary_label_is_a_refusal_the_contract_test_excuses(client):
    """The fourth difference from the trace format: the labels' uniqueness is checked by the
    config's rules (a 422 naming the label), not by the schema (schemathesis cannot generate
    negative data for uniqueItems there, see grading.validate), and the contract test's
    EXCUSES cover it."""
    trace = TRACES["custom-eos"]
    mutant = _set(trace, ("config", "draft", "vocab"), ["a", "a", "$"])
    assert CONTRACT.is_valid(mutant) and not STRICT.is_valid(mutant)
    response = client.post("/v1/grade", json=mutant)
    assert response.status_code == 422 and excused(422, response.get_json())
