"""Property tests: grading never crashes on a mutated trace, and score 1.0 iff passed."""

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdec_service.engine import InvalidInput, parse_config, run
from specdec_service.grading import first_difference, grade

GOLDEN = Path(__file__).resolve().parent / "golden"
NAMES = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem != "index")
TRACES = {name: json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8")) for name in NAMES}

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(-1, 2, allow_nan=False),
                    st.sampled_from(["A", "B", "C", "the", "cat", ".", "limit", "eos", "rejection", "x"]))


def leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, path + (key,))
        yield path, node
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, path + (i,))
        yield path, node
    else:
        yield path, node


def parent_of(trace, path):
    node = trace
    for key in path[:-1]:
        node = node[key]
    return node


@st.composite
def mutated(draw, traces, editable=lambda path: path and path[0] != "config"):
    """One of ``traces`` (a dict) with 1-3 of its ``editable`` places replaced, deleted or duplicated."""
    trace = copy.deepcopy(traces[draw(st.sampled_from(sorted(traces)))])
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p, _ in leaves(trace) if editable(p)]
        path = draw(st.sampled_from(places))
        parent = parent_of(trace, path)
        action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if action == "replace":
            parent[path[-1]] = draw(SCALARS)
        elif action == "delete" and isinstance(parent, list):
            del parent[path[-1]]
        elif action == "duplicate" and isinstance(parent, list):
            parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
        else:
            parent[path[-1]] = draw(SCALARS)
    return trace


def mutated_traces():
    return mutated(TRACES)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_traces())
def test_grading_a_mutated_trace_never_crashes_and_scores_consistently(trace):
    try:
        report = grade(trace)
    except InvalidInput as error:
        assert error.faults  # a malformed trace: a 422 with at least one pointer
        return
    reference = run(parse_config(trace["config"]))
    assert first_difference(reference, trace, typed=True) == first_difference(reference, trace)
    assert (report["score"] == 1.0) == report["passed"]
    assert report["passed"] == (report["first_divergence"] is None)
    failing = [c for c in report["checks"] if not c["passed"]]
    assert bool(failing) != report["passed"]
    for check in failing:
        assert check["first_failure"]["pointer"].startswith("#")
