"""The class of refusals at the body limits: a near-limit body with one malformed or out-of-range
value anywhere (a string where a number belongs, a literal beyond float64 or beyond the literal
bound, a label not of the vocabulary late in 10^6 samples, too many traces) is refused with a
4xx problem document naming the field by its JSON Pointer, before any exact work: the engine's
own counter of its exact arithmetic (``engine.work.counting``, the public seam the cost bound
is proved with) counts nothing while the request is served. No timing is asserted
(``bench/refusals.py`` measures them: docs/service.md, "The worst requests")."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdec_service import create_app
from specdec_service.api.grading import GRADE_MAX_BODY_BYTES
from specdec_service.engine import parse_config, run
from specdec_service.engine.work import counting

SEED = {"draft": "biased", "seed": 1}
BAD = "@"
"""A placeholder string written as a raw literal by :func:`dumps`."""


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def dumps(value: object, literal: str = "") -> bytes:
    """``value`` as compact JSON, the string ``"@"`` written as the raw ``literal`` (if given)."""
    text = json.dumps(value, separators=(",", ":"))
    return (text.replace(json.dumps(BAD), literal) if literal else text).encode()


def one_hot(size: int, shift: int) -> dict:
    vocab = [f"t{i}" for i in range(size)]
    row = lambda i: [1.0 if j == i % size else 0.0 for j in range(size)]  # noqa: E731
    return {"vocab": vocab, "start": row(0), "next": {label: row(i + shift) for i, label in enumerate(vocab)}}


def table(entry: object, size: int = 64) -> dict:
    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": [entry] * size, "next": {label: [entry] * size for label in vocab}}


TRACE = json.loads(json.dumps(run(parse_config({"target": one_hot(64, 1), "draft": one_hot(64, 2), "width": 16,
                                                "limit": 16, "seed": 1}))))
"""A valid trace of about 90 KB: 16 blocks of width 16 over 64 labels."""
LAST_Q = ("blocks", len(TRACE["blocks"]) - 1, "proposal", "steps", len(TRACE["blocks"][-1]["proposal"]["steps"]) - 1,
          "q", 63)


def with_last(trace: dict, entry: object) -> dict:
    """``trace`` with the last entry of its last draft row replaced by ``entry``."""
    copy = json.loads(json.dumps(trace))
    copy["blocks"][-1]["proposal"]["steps"][-1]["q"][-1] = entry
    return copy


def traces_body(size: int, last: dict) -> tuple[bytes, int]:
    """A batch of copies of :data:`TRACE` then ``last``, as many as fit in ``size`` bytes (with
    the bad literal written), and the index of ``last``."""
    per = len(dumps(TRACE)) + 1
    count = max(1, (size - 2 * per) // per)
    return dumps({"traces": [TRACE] * count + [last]}), count


def post(client, route: str, data: bytes):
    """``data`` sent to ``route``, with the engine's exact work counted while it is served."""
    with counting() as work:
        response = client.post(route, data=data, headers={"Content-Type": "application/json"})
    return response, work.units


def assert_refused(response, units: int, status: int, where: str, reading: int = 0) -> None:
    """The refusal: its status, a problem document, the first field it names, and no exact work
    but ``reading`` units (the configs' rows read, where the body's configs are valid)."""
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["errors"][0]["pointer"] == where
    assert units <= reading  # refused before any run, check or analysis


def config_units(config: dict) -> int:
    """The engine's work units of reading ``config`` (its rows' exact reading), and of running it."""
    with counting() as reading:
        parsed = parse_config(config)
    with counting() as running:
        run(parsed)
    assert running.units > 0
    return reading.units


def pointer_of(path: tuple) -> str:
    return "#/" + "/".join(map(str, path))


# ---------------------------------------------------------------- near-limit grading bodies

@pytest.mark.parametrize("literal, status", [("1e400", 422), ("-1e999", 422), ("1e-99999", 400), ("9" * 400, 400)])
def test_a_literal_beyond_float64_or_the_bound_last_in_8_mib_of_traces(client, literal, status):
    data, last = traces_body(GRADE_MAX_BODY_BYTES - 1024, with_last(TRACE, BAD))
    data = data.replace(b'"@"', literal.encode())
    assert GRADE_MAX_BODY_BYTES // 2 < len(data) <= GRADE_MAX_BODY_BYTES
    response, units = post(client, "/v1/grade", data)
    assert_refused(response, units, status, pointer_of(("traces", last) + LAST_Q))


def test_strings_where_numbers_belong_in_8_mib_of_traces(client):
    wrong = json.loads(json.dumps(TRACE))
    for block in wrong["blocks"]:
        for step in block["proposal"]["steps"]:
            step["q"] = ["x"] * 64
    per = len(dumps(wrong)) + 1
    count = GRADE_MAX_BODY_BYTES // per - 1
    response, units = post(client, "/v1/grade", dumps({"traces": [wrong] * count}))
    # each trace's config is read (as many units as a run of it charges, at most), none is run
    assert_refused(response, units, 422, "#/traces/0/blocks/0/proposal/steps/0/q/0",
                   reading=count * config_units(TRACE["config"]))


@pytest.mark.parametrize("entry, status", [('"x"', 422), ("1e400", 422), ("1e-999", 422)])
def test_a_batch_of_configs_with_bad_tables_at_8_mib(client, entry, status):
    config = {"traces": [{"config": {"target": table(BAD), "draft": table(BAD), "seed": 1}}]}
    per = len(dumps(config["traces"][0], entry)) + 1
    data = dumps({"traces": config["traces"] * (GRADE_MAX_BODY_BYTES // per - 1)}, entry)
    response, units = post(client, "/v1/grade", data)
    assert_refused(response, units, status, "#/traces/0/config/target/start/0")


def test_too_many_traces(client):
    data = dumps({"traces": [{"config": SEED}] * 150_000})
    assert len(data) <= GRADE_MAX_BODY_BYTES
    response, units = post(client, "/v1/grade", data)
    assert_refused(response, units, 422, "#/traces")


@pytest.mark.parametrize("route, extra", [("/v1/grade/distribution", {"m": 1}), ("/v1/grade/samples", {})])
@pytest.mark.parametrize("entry, status, position", [('"Z"', 422, -1), ("1e400", 422, -1), ('"Z"', 422, 0)])
def test_a_bad_label_among_a_million_samples(client, route, extra, entry, status, position):
    samples = [["A"]] * 10**6
    samples[position] = [BAD]
    response, units = post(client, route, dumps({"config": SEED, **extra, "samples": samples}, entry))
    assert_refused(response, units, status, f"#/samples/{position % 10**6}/0")


@pytest.mark.parametrize("route", ["/v1/draft", "/v1/step", "/v1/runs", "/v1/analysis"])
@pytest.mark.parametrize("entry", ["1e-999", "-1e-400", "0.10000000000000000001", "1e99999"])
def test_bad_tables_on_the_session_routes(client, route, entry):
    data = dumps({"config": {"target": table(BAD), "draft": table(BAD), "seed": 1}}, entry)
    response, units = post(client, route, data)
    assert 400 <= response.status_code < 500 and response.status_code != 413
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["errors"][0]["pointer"] == "#/config/target/start/0"
    assert units == 0


# ---------------------------------------------------------------- anywhere in the body

BAD_LITERALS = st.sampled_from(["1e400", "-1e400", "1e309", "9" * 309 + ".5", "1e-10000", "1" * 331])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(literal=BAD_LITERALS, trace_at=st.integers(0, 9), row=st.integers(0, 15), entry=st.integers(0, 63),
       in_string=st.booleans())
def test_a_bad_literal_anywhere_is_named_where_it_is(client, literal, trace_at, row, entry, in_string):
    """One bad literal at any place of a batch of ten traces (and, to mislead a search on the
    bytes, the same characters inside a label's string before it) is named at its place."""
    traces = [json.loads(json.dumps(TRACE)) for _ in range(10)]
    blocks = traces[trace_at]["blocks"]
    block = blocks[row % len(blocks)]
    block["proposal"]["steps"][-1]["q"][entry] = BAD
    if in_string:
        traces[0]["output"][0] = literal[:60]
    data = dumps({"traces": traces}, literal)
    response, units = post(client, "/v1/grade", data)
    status = 400 if len(literal) > 330 or "10000" in literal else 422
    where = ("traces", trace_at, "blocks", row % len(blocks), "proposal", "steps",
             len(block["proposal"]["steps"]) - 1, "q", entry)
    assert_refused(response, units, status, pointer_of(where))


def _list_paths(value: object, path: tuple = ()) -> list:
    """The path of every list inside ``value``."""
    found = [path] if isinstance(value, list) else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found += _list_paths(inner, path + (key,))
    return found


TREE_TRACE = run(parse_config({"target": "toy", "draft": "biased", "mode": "tree", "width": 2, "drafts": 2,
                               "seed": 16, "limit": 8, "tree": {"shape": "distinct"}}))


@pytest.mark.parametrize("trace", [TRACE, TREE_TRACE], ids=["speculative", "tree-distinct"])
@pytest.mark.parametrize("item", [1, "A"], ids=["wrong-items", "labels"])
def test_a_huge_list_anywhere_in_a_block_is_refused_where_it_is(trace, item):
    """Every list of a block (proposal steps, rows, nodes, tokens, discarded...) replaced by
    100,000 items is refused with a fault inside that list or naming the object that holds it,
    before any engine work, and a message that gives a list's length gives its real one."""
    from specdec_service.engine.errors import InvalidInput
    from specdec_service.grading.validate import validate_trace

    block = trace["blocks"][0]
    for path in _list_paths(block):
        copy = json.loads(json.dumps(trace))
        part = copy["blocks"][0]
        for key in path[:-1]:
            part = part[key]
        if path:
            part[path[-1]] = [item] * 100_000
        else:
            copy["blocks"][0] = [item] * 100_000
        with counting() as work, pytest.raises(InvalidInput) as refused:
            validate_trace(copy)
        assert work.units == 0
        first = refused.value.faults[0]
        # in the list or the object holding it; a tree's proposal (one of two forms, SPEC 4.1 and
        # 12.1) may be named by its other form's first fault, so only its top field is promised
        depth = 1 + len(path) if trace is TRACE else 3
        assert first.path[:depth] == (("blocks", 0) + path)[:depth], (path, refused.value.faults[:3])
        for fault in refused.value.faults:
            if "a list of" in fault.message and fault.path == ("blocks", 0) + path:
                assert "a list of 100000 items" in fault.message, fault.message
