"""The service's answers for the golden configs equal the recorded golden answers, field by field.

``tests/golden/answers/<name>.json`` holds, for every golden config ``<name>``
(``tests/golden/index.json``), the JSON the service answers on each route, normalised (sorted
keys, one-space indentation, so a change is a readable diff):

- ``runs``: ``POST /v1/runs``;
- ``draft``, ``verify``, ``step``: the chain of ``POST /v1/draft``, ``POST /v1/verify`` (of the
  drafted tokens) and ``POST /v1/step`` over every block of the session (one answer a block);
- ``grade``: ``POST /v1/grade`` of the golden trace;
- ``grade/distribution`` (modes speculative and autoregressive): ``POST /v1/grade/distribution``
  of 20 copies of the output's first two tokens (m = 2) with the trace's counters;
- ``mistake/<id>`` (mode speculative): for every catalogued mistake, ``{"trace": its faulty
  trace (grading.faulty_run), "grade": the POST /v1/grade report of it}``, or
  ``{"undefined": why}`` when the mistake makes a rule undefined for the config.

Nothing is stored twice: a value equal to one recorded elsewhere is written as
``{"$ref": where}``, ``where`` being a file of ``tests/golden/`` (``runs`` is the golden trace
``tests/golden/<name>.json``) or a JSON Pointer into the same answers (``#/runs/blocks/0``: a
step's block, or a faulty trace's config and blocks before the mistake shows, are the trace's;
``#/step``: the verify chain equals the step chain; ``#/step/0/block/proposal``: a draft
answer). References are resolved before comparing. In all: 66 files, 7.8 MB.

Comparison: every field exactly (same JSON type, same value; a float's shortest repr, so its
bytes), except the floats of ``grade/distribution`` that come from numpy or scipy
(:data:`TOLERANT`: the chi-square statistic and p-value, the expected counts and shares, the
residuals, the total variation and the expected acceptance rate), which may differ by a relative
:data:`REL_TOL` = 1e-12 (scipy's ``chdtrc`` may move by a few ulp between versions; every
number is the same bits on every CPU, ``tests/test_blas_independence.py``). Key order and
spacing of the service's bytes are not compared. A failure names the config, the route, the
first differing JSON path with the golden and the current value, and how many paths differ.

A refactoring of the engine or the grader must leave every answer as it is; a deliberate change
of behaviour rewrites the files (and its commit says why; review the diff):

    .venv/bin/python tests/test_golden_bytes.py --write   # rewrite tests/golden/answers/
    .venv/bin/python tests/test_golden_bytes.py           # exit 1 and list the differences
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
ANSWERS = GOLDEN / "answers"
INDEX = json.loads((GOLDEN / "index.json").read_text(encoding="utf-8"))
J = {"Content-Type": "application/json"}
REL_TOL = 1e-12
"""Relative tolerance for the floats of :data:`TOLERANT`."""
TOLERANT = {"grade/distribution": frozenset({
    "statistic", "p_value", "expected", "expected_share", "residual", "total_variation",
    "pooled_expected", "expected_rate"})}
"""Route -> the field names whose floats come from numpy or scipy (compared within
:data:`REL_TOL`); every other value is compared exactly."""
_MISSING = object()


def render(value: Any) -> str:
    """The normalised text of a golden file: sorted keys, one-space indentation, ASCII, newline."""
    return json.dumps(value, indent=1, sort_keys=True) + "\n"


# ---------------------------------------------------------------- the answers


def _post(client, path: str, body) -> Any:
    response = client.post(path, data=json.dumps(body), headers=J)
    assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
    return json.loads(response.get_data())


def answers(client, config: dict, mistake_ids: Optional[list[str]] = None) -> dict:
    """Route -> the parsed JSON the service answers for golden config ``config`` (see the module
    docstring). ``mistake_ids``: the catalogued mistakes whose traces are graded (default: all)."""
    from specdec_service.engine import parse_config
    from specdec_service.grading import BY_ID, CATALOGUE, faulty_run

    out: dict[str, Any] = {}
    trace = out["runs"] = _post(client, "/v1/runs", {"config": config})
    state: dict = {"config": config}
    drafts, verifies, steps = out["draft"], out["verify"], out["step"] = [], [], []
    while True:
        drafts.append(_post(client, "/v1/draft", state))
        verifies.append(_post(client, "/v1/verify", {"state": state, "proposal": {"tokens": drafts[-1]["tokens"]}}))
        steps.append(_post(client, "/v1/step", state))
        if steps[-1]["done"] is not None:
            break
        state = steps[-1]["state"]
    out["grade"] = _post(client, "/v1/grade", trace)
    mode = config.get("mode", "speculative")
    if mode != "greedy":
        body = {"config": config, "m": 2, "samples": [trace["output"][:2]] * 20, "counters": trace["counters"]}
        out["grade/distribution"] = _post(client, "/v1/grade/distribution", body)
    if mode == "speculative":
        parsed = parse_config(config)
        for mistake_id in [m.id for m in CATALOGUE] if mistake_ids is None else mistake_ids:
            try:
                faulty = faulty_run(parsed, BY_ID[mistake_id].rules)
            except ValueError as error:  # the mistake makes a rule undefined for this config
                out[f"mistake/{mistake_id}"] = {"undefined": str(error)}
                continue
            out[f"mistake/{mistake_id}"] = {"trace": faulty, "grade": _post(client, "/v1/grade", faulty)}
    return out


# ---------------------------------------------------------------- references


def _pointer(doc: Any, pointer: str) -> Any:
    """The value at JSON Pointer ``pointer`` (``#/a/0``) in ``doc`` (RFC 6901)."""
    for token in pointer.lstrip("#").split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _equal(a: Any, b: Any) -> bool:
    """Equal as JSON answers (types too: 1, 1.0 and true differ), as the comparison below."""
    return next(differences(a, b), None) is None


def _refer(values: list, targets: list, pointer: str, part=lambda value: value) -> list:
    """``values`` with each ``values[i]`` equal to ``part(targets[i])`` replaced by a reference
    to ``pointer/i`` (plus the part's own path, given in ``pointer``'s ``{i}``)."""
    return [{"$ref": pointer.format(i=i)} if i < len(targets) and _equal(value, part(targets[i])) else value
            for i, value in enumerate(values)]


def compress(name: str, answers_: dict) -> dict:
    """The stored form of ``answers_``: values recorded elsewhere replaced by ``{"$ref": ...}``."""
    out = dict(answers_)
    trace_file = GOLDEN / f"{name}.json"
    if trace_file.is_file() and _equal(json.loads(trace_file.read_text(encoding="utf-8")), answers_["runs"]):
        out["runs"] = {"$ref": f"{name}.json"}
    blocks = answers_["runs"].get("blocks", [])
    steps = answers_["step"]
    block_refs = _refer([s.get("block") for s in steps], blocks, "#/runs/blocks/{i}")
    out["step"] = [{**s, "block": ref} for s, ref in zip(steps, block_refs)]
    if _equal(answers_["verify"], steps):
        out["verify"] = {"$ref": "#/step"}
    out["draft"] = _refer(answers_["draft"], steps, "#/step/{i}/block/proposal",
                          lambda step: step.get("block", {}).get("proposal"))
    for route, value in answers_.items():
        if route.startswith("mistake/") and "trace" in value:
            out[route] = {**value, "trace": _refer_trace(value["trace"], answers_["runs"])}
    return out


def _refer_trace(faulty: dict, trace: dict) -> dict:
    """A faulty trace with each top-level field, and each block, equal to the golden trace's
    replaced by a reference to it (its config, and the blocks before the mistake shows)."""
    out = {key: {"$ref": f"#/runs/{_escape(key)}"} if key in trace and _equal(value, trace[key]) else value
           for key, value in faulty.items()}
    if isinstance(faulty.get("blocks"), list) and not _equal(faulty["blocks"], trace.get("blocks")):
        out["blocks"] = _refer(faulty["blocks"], trace.get("blocks", []), "#/runs/blocks/{i}")
    return out


def resolve(stored: dict) -> dict:
    """The answers a stored golden file records, every ``{"$ref": ...}`` replaced by its value."""
    doc = dict(stored)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"$ref"}:
                where = node["$ref"]
                if where.startswith("#"):
                    return walk(_pointer(doc, where))
                return json.loads((GOLDEN / where).read_text(encoding="utf-8"))
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            return [walk(value) for value in node]
        return node

    for route in ("runs", "step", "verify", "draft"):  # each refers only to those before it
        if route in doc:
            doc[route] = walk(doc[route])
    return {route: walk(value) for route, value in doc.items()}


# ---------------------------------------------------------------- comparison


def _same(golden: Any, now: Any, tolerant: bool) -> bool:
    if type(golden) is not type(now):  # 1 and 1.0 and true are different answers
        return False
    if isinstance(golden, float):
        if tolerant:
            return math.isclose(golden, now, rel_tol=REL_TOL, abs_tol=0.0)
        return repr(golden) == repr(now)
    return golden == now


def differences(golden: Any, now: Any, path: str = "#", tolerant_keys: frozenset = frozenset(),
                tolerant: bool = False) -> Iterator[tuple[str, Any, Any]]:
    """Every ``(JSON Pointer, golden value, current value)`` where ``now`` differs from ``golden``,
    depth first in sorted key order; a missing field or element has the value :data:`_MISSING`.
    Floats under a key of ``tolerant_keys`` are compared within :data:`REL_TOL`."""
    if isinstance(golden, dict) and isinstance(now, dict):
        for key in sorted(set(golden) | set(now)):
            yield from differences(golden.get(key, _MISSING), now.get(key, _MISSING), f"{path}/{_escape(key)}",
                                   tolerant_keys, tolerant or key in tolerant_keys)
    elif isinstance(golden, list) and isinstance(now, list):
        for i in range(max(len(golden), len(now))):
            yield from differences(golden[i] if i < len(golden) else _MISSING, now[i] if i < len(now) else _MISSING,
                                   f"{path}/{i}", tolerant_keys, tolerant)
    elif not _same(golden, now, tolerant):
        yield path, golden, now


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


def report(name: str, golden: dict, now: dict) -> list[str]:
    """One line per route whose answer differs: the first differing path, both values, and how
    many paths differ in all."""
    lines = []
    for route in sorted(set(golden) | set(now)):
        found = list(differences(golden.get(route, _MISSING), now.get(route, _MISSING), "#",
                                 TOLERANT.get(route, frozenset())))
        if found:
            where, was, is_ = found[0]
            more = f" (and {len(found) - 1} more paths)" if len(found) > 1 else ""
            lines.append(f"{name}: {route} {where}: golden {_show(was)}, now {_show(is_)}{more}")
    return lines


def recorded(name: str) -> dict:
    """The stored golden answers of config ``name``, references resolved."""
    return resolve(json.loads((ANSWERS / f"{name}.json").read_text(encoding="utf-8")))


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("name", sorted(INDEX))
def test_service_answers_equal_the_golden_answers(client, name):
    golden = recorded(name)
    mistakes = sorted(route.split("/", 1)[1] for route in golden if route.startswith("mistake/"))
    lines = report(name, golden, answers(client, INDEX[name], mistakes))
    assert not lines, "the answers changed (tests/test_golden_bytes.py --write records them):\n" + "\n".join(lines)


def test_every_golden_config_has_normalised_golden_answers():
    files = sorted(ANSWERS.glob("*.json"))
    assert [f.stem for f in files] == sorted(INDEX) and len(INDEX) == 66
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert text == render(json.loads(text)), f"{file.name} is not normalised: run the writer"
        golden = resolve(json.loads(text))
        assert {"runs", "draft", "verify", "step", "grade"} <= set(golden), file.name
        mode = INDEX[file.stem].get("mode", "speculative")
        assert ("grade/distribution" in golden) == (mode != "greedy"), file.name
        assert any(route.startswith("mistake/") for route in golden) == (mode == "speculative"), file.name


def test_a_difference_names_its_path_and_both_values():
    golden = {"grade/distribution": {"acceptance": {"expected_rate": 0.8, "observed_rate": 0.5}, "dof": 1},
              "step": [{"done": None, "block": {"committed": ["A"]}}]}
    assert report("x", golden, golden) == []
    tolerated = {"grade/distribution": {"acceptance": {"expected_rate": 0.8000000000000002, "observed_rate": 0.5},
                                        "dof": 1}, "step": golden["step"]}
    assert report("x", golden, tolerated) == []
    changed = {"grade/distribution": {"acceptance": {"expected_rate": 0.8, "observed_rate": 0.5000000000000001},
                                      "dof": 1.0},
               "step": [{"done": None, "block": {"committed": ["A", "B"]}}, {"done": "limit"}]}
    assert report("x", golden, changed) == [
        "x: grade/distribution #/acceptance/observed_rate: golden 0.5, now 0.5000000000000001 (and 1 more paths)",
        'x: step #/0/block/committed/1: golden (absent), now "B" (and 1 more paths)',
    ]
    assert list(differences({"a": True}, {"a": 1})) == [("#/a", True, 1)]
    assert list(differences({"a/b": 1}, {})) == [("#/a~1b", 1, _MISSING)]


def main(argv) -> int:
    sys.path.insert(0, str(HERE.parent / "service"))
    from specdec_service import create_app

    client = create_app({"TESTING": True}).test_client()
    changed = 0
    if "--write" in argv:
        ANSWERS.mkdir(exist_ok=True)
        for stale in set(ANSWERS.glob("*.json")) - {ANSWERS / f"{name}.json" for name in INDEX}:
            stale.unlink()
    for name in sorted(INDEX):
        now = answers(client, INDEX[name])
        if "--write" in argv:
            stored = compress(name, now)
            assert _equal(resolve(stored), now), name  # the references resolve to the answers
            (ANSWERS / f"{name}.json").write_text(render(stored), encoding="utf-8")
            continue
        lines = report(name, recorded(name), now) if (ANSWERS / f"{name}.json").is_file() else [f"{name}: no file"]
        print("\n".join(lines)) if lines else None
        changed += bool(lines)
    if "--write" in argv:
        print(f"wrote {len(INDEX)} files in {ANSWERS}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
