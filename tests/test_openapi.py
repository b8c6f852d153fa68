"""The OpenAPI contract: up to date, valid OpenAPI 3.1, served byte for
byte, and obeyed by the app (schemathesis, every check, bounded examples)."""

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings
from openapi_spec_validator import validate
from schemathesis.config import SchemathesisConfig

from specdec_service import create_app
from specdec_service.api import contract
from specdec_service.api.openapi import REGENERATE, repository_openapi_path
from specdec_service.api.problems import SESSION_DONE
from specdec_service.budget import OVER_BUDGET

OPENAPI_PATH = Path(__file__).resolve().parents[1] / "openapi.yaml"

# Positive data (valid by the schema) must be accepted: 2xx, or 304 for a GET
# whose If-None-Match names the current ETag (or is `*`). A refusal is excused
# only by a rule that a JSON Schema cannot state, listed in EXCUSES with the
# reason and matched against the problem the service answered: every item of
# a 422's `errors` must match an excuse. Nothing else (no blanket 422).


@dataclass(frozen=True)
class Excuse:
    """A rule the service enforces that the schema cannot state, and why not."""

    rule: str
    reason: str
    status: int
    detail: str = ""
    """A regular expression matched against a refused field's detail (an item of a 422's
    ``errors``) or the problem's detail (other statuses)."""
    type: str = ""
    """The problem type, when the excuse is the type."""


def excused(status: int, problem: dict, excuses=None) -> bool:
    """Whether ``excuses`` (default :data:`EXCUSES`) cover a refusal: its type, or else each
    refused field (a 422) or its detail (other statuses), each by some excuse of that status."""
    excuses = [e for e in (EXCUSES if excuses is None else excuses) if e.status == status]
    if any(e.type and e.type == problem.get("type") for e in excuses):
        return True
    details = [e["detail"] for e in problem.get("errors", [])] if status == 422 else [problem.get("detail", "")]
    return bool(details) and all(any(e.detail and re.search(e.detail, d) for e in excuses) for d in details)


EXCUSES = (
    Excuse("each row of a custom model sums to 1 within 1e-9 (SPEC section 1)",
           "JSON Schema cannot add up the items of an array", 422, r"^must sum to 1 within 1e-9"),
    Excuse("each row has one probability per vocabulary label, and `next` one row for each label",
           "a length or a set of names equal to another field's value", 422,
           r"^must have one probability per vocabulary token|^missing the row after|is not in the vocabulary$"),
    Excuse("target and draft share one vocabulary (SPEC section 1)",
           "equality of two fields", 422, r"^the draft's vocabulary .* differs from the target's"),
    Excuse("tokens (committed, proposal, eos, sample, prefix) are labels of the config's vocabulary",
           "an enum taken from another field's value", 422,
           r"is not a token of the vocabulary|^must be null or a token of the vocabulary"),
    Excuse("a custom probability is the shortest decimal of a float64 (echoed exactly in traces)",
           "a property of the decimal's digits that no numeric keyword states", 422,
           r"is not exactly a float64's shortest decimal"),
    Excuse("the committed prefix holds at most `limit` tokens and an EOS only last (SPEC section 6)",
           "a length bounded by another field's value; an order of values", 422,
           r"more than the limit|^has tokens after the EOS token"),
    Excuse("a proposal holds 1 to min(width, limit - committed) tokens (none in mode autoregressive), each with "
           "positive draft probability (SPEC sections 4.1, 5)", "a length bounded by a difference of fields; a "
           "property of a model's row", 422,
           r"^must be empty in mode autoregressive|^must hold 1 to \d+ tokens: min\(width, limit - committed\)"
           r"|probability 0 .*: it cannot be a proposal$"),
    Excuse("positions and counters stay at most 2^53-1 after a block (the block's draws and counts added)",
           "a sum of a field and what the block adds", 422,
           r"past 2\^53-1|would exceed 2\^53-1 after this block|^position \+ count - 1 must not exceed 2\^53-1"),
    Excuse("grade/distribution: mode greedy is refused (its trace is graded exactly by POST /v1/grade)",
           "the config schema is shared with the session routes", 422, r"^must be speculative or autoregressive"),
    Excuse("grade/distribution: a sample or prefix has min(m, limit) tokens unless it ends in EOS, a prefix is "
           "counted once, the counts sum to 1..10^6, accepted <= draft_steps",
           "lengths and sums bounded by other fields; uniqueness of a member of array items", 422,
           r"tokens \(min\(m, limit\)\) unless it ends in the EOS token$|^is listed twice$|^the counts must sum to"
           r"|^cannot exceed draft_steps$"),
    Excuse("a submitted trace's vocabulary labels are distinct (SPEC section 1)",
           "stated (uniqueItems) on the session routes, left out of the grading schema: schemathesis 4.32's "
           "negative generation fails on it there (InvalidArgument: 2 unique items drawn from one value)", 422,
           r"is listed twice: the token labels must be distinct$"),
    Excuse("a request's work is within its budget (docs/service.md)", "a product of several sizes", 422,
           type=OVER_BUDGET),
    Excuse("a session is done when its prefix reached the limit or ends in EOS (SPEC section 6)",
           "a length equal to another field's value", 409, type=SESSION_DONE),
    Excuse("a body is at most 256 KiB (8 MiB on the grading routes)",
           "a size in bytes of the serialised body", 413, r"^The request body is larger than the limit"),
    Excuse("in mode tree a proposal is exactly `drafts` chains, in every other mode `tokens` (SPEC section 11)",
           "a length equal to another field's value; a member allowed by another field's value", 422,
           r"^must hold exactly \d+ chains: the config's drafts|^only mode tree verifies chains"
           r"|^mode tree verifies chains: give `chains`"),
    Excuse("an analysis in mode block enumerates at most 500,000 draft-block cells (engine/analysis_block.py)",
           "a power of the vocabulary size to the widths, summed (V^k over the config's and swept widths)", 422,
           r"^mode block enumerates every draft block: these widths need"),
    Excuse("`tree` only in mode tree; residual not with beam; branching only with distinct and at most 256 nodes; "
           "thresholds only with target_only; a distinct or beam tree drafts its own proposal (SPEC section 12)",
           "a member allowed by another field's value; a sum of products bounded by fields", 422,
           r"^is read only in mode tree|^must be \"target_only\" with shape \"beam\"|^is read only with shape"
           r"|^is read only with verify|^gives \d+ nodes over min\(width, limit\)|drafts its own tree: use /v1/step"),
)
"""Every refusal of schema-valid data that the contract test excuses, with the reason."""


_TABLE = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
          "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
_SEED1 = {"config": {"draft": "biased", "seed": 1}}
_COUNTS = {"config": {"draft": "biased", "seed": 0}, "m": 1, "counts": [{"prefix": ["A"], "count": 5}]}
REAL_REFUSALS = [
    ("/v1/runs", {"config": {"draft": {**_TABLE, "start": [0.5, 0.3, 0.1]}, "seed": 1}}, 422, 0),
    ("/v1/runs", {"config": {"draft": {**_TABLE, "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3]}}, "seed": 1}}, 422, 1),
    ("/v1/runs", {"config": {"draft": {**_TABLE, "start": [0.5, 0.5]}, "seed": 1}}, 422, 1),
    ("/v1/runs", {"config": {"target": {**_TABLE, "vocab": ["X", "B", "C"], "next": {"X": [0.2, 0.6, 0.2],
                  "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}, "draft": "biased", "seed": 1}}, 422, 2),
    ("/v1/step", {**_SEED1, "committed": ["D"]}, 422, 3),
    ("/v1/runs", {"config": {"draft": "biased", "seed": 1, "eos": "D"}}, 422, 3),
    ("/v1/runs", '{"config": {"draft": {"vocab": ["A", "B", "C"], "start": [0.1000000000000000055511151231257827, '
                 '0.7, 0.2], "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}, '
                 '"seed": 1}}', 422, 4),
    ("/v1/step", {"config": {"draft": "biased", "seed": 1, "limit": 1}, "committed": ["A", "B"]}, 422, 5),
    ("/v1/step", {"config": {"draft": "biased", "seed": 1, "eos": "A"}, "committed": ["A", "B"]}, 422, 5),
    ("/v1/verify", {"state": _SEED1, "proposal": {"tokens": ["A", "A", "A", "A"]}}, 422, 6),
    ("/v1/verify", {"state": {"config": {"draft": "biased", "seed": 1, "mode": "autoregressive"}},
                    "proposal": {"tokens": ["A"]}}, 422, 6),
    ("/v1/step", {**_SEED1, "position": 2**53 - 2}, 422, 7),
    ("/v1/step", {**_SEED1, "counters": {"draws": 2**53 - 2}}, 422, 7),
    ("/v1/grade/distribution", {**_COUNTS, "config": {"draft": "biased", "seed": 0, "mode": "greedy"}}, 422, 8),
    ("/v1/grade/distribution", {**_COUNTS, "counts": [{"prefix": ["A"], "count": 5}] * 2}, 422, 9),
    ("/v1/grade/distribution", {**_COUNTS, "counters": {"accepted": 5, "draft_steps": 4}}, 422, 9),
    ("/v1/grade/distribution", {**_COUNTS, "m": 2}, 422, 9),
    ("/v1/runs", {"config": {"draft": {**_TABLE, "vocab": ["A", "B", "A"]}, "seed": 1}}, 422, 10),
    ("/v1/step", {"config": {"draft": "biased", "seed": 1, "limit": 1}, "committed": ["A"]}, 409, 12),
    ("/v1/verify", {"state": _SEED1, "proposal": {"chains": [["A"]]}}, 422, 14),
    ("/v1/verify", {"state": {"config": {"draft": "biased", "seed": 1, "mode": "tree"}},
                    "proposal": {"tokens": ["A"]}}, 422, 14),
    ("/v1/verify", {"state": {"config": {"draft": "biased", "seed": 1, "mode": "tree", "drafts": 2}},
                    "proposal": {"chains": [["A"]]}}, 422, 14),
    ("/v1/analysis", {"config": {"draft": "biased", "mode": "block", "width": 12}}, 422, 15),
    ("/v1/runs", {"config": {"draft": "biased", "seed": 1, "tree": {}}}, 422, 16),
    ("/v1/runs", {"config": {"draft": "biased", "seed": 1, "mode": "tree", "tree": {"shape": "beam"}}}, 422, 16),
    ("/v1/step", {"config": {"draft": "biased", "seed": 1, "mode": "tree", "tree": {"branching": [2]}}}, 422, 16),
    ("/v1/step", {"config": {"draft": "biased", "seed": 1, "mode": "tree", "tree": {"threshold_acc": 0.5}}}, 422, 16),
    ("/v1/runs", {"config": {"draft": "biased", "seed": 1, "mode": "tree", "width": 16, "limit": 256,
                             "tree": {"shape": "distinct", "branching": [8, 8]}}}, 422, 16),
    ("/v1/verify", {"state": {"config": {"draft": "biased", "seed": 1, "mode": "tree", "tree": {"shape": "distinct"}}},
                    "proposal": {"chains": [["A"]]}}, 422, 16),
]
"""A real refusal for each excuse (by index in :data:`EXCUSES`): the excuses name the service's
real messages, and each is needed for its refusal (the over-budget one is tested in test_budget)."""


@pytest.mark.parametrize("path,body,status,index", REAL_REFUSALS)
def test_every_excuse_covers_a_real_refusal_and_is_needed(path, body, status, index):
    text = body if isinstance(body, str) else json.dumps(body)  # a string: the JSON text as written
    response = APP.test_client().post(path, data=text, content_type="application/json")
    assert response.status_code == status, response.data
    problem = response.get_json()
    assert excused(status, problem)
    assert not excused(status, problem, EXCUSES[:index] + EXCUSES[index + 1:]), problem
    assert {i for path, body, status, i in REAL_REFUSALS} | {11, 13} == set(range(len(EXCUSES)))


def test_a_body_over_the_limit_is_excused():
    app = create_app({"MAX_CONTENT_LENGTH": 64})
    response = app.test_client().post("/v1/step", json={**_SEED1, "committed": ["A"] * 40})
    assert response.status_code == 413 and excused(413, response.get_json())


def accepted_or_excused(ctx, response, case):
    """The positive-data check: a 2xx or 304, or a refusal that an :data:`EXCUSES` rule covers."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if 200 <= status < 300 or status == 304:
        return True
    problem = json.loads(response.content) if response.content else {}
    if not excused(status, problem):
        raise AssertionError(f"schema-valid data refused with {status} and no rule excuses it: "
                             f"{problem.get('detail', '')[:300]} {problem.get('errors', '')}")
    return True


# Every phase of schemathesis 4 runs on every route, with every check:
# - examples: the contract's named examples;
# - coverage: the boundary values of every keyword, positive and negative, unexpected
#   methods and malformed content types (deterministic: not bounded by max_examples);
# - fuzzing: hypothesis-generated bodies and parameters, positive and negative;
# - stateful: sequences of calls along the contract's links and the ones schemathesis
#   infers (test_stateful_sequences_conform_to_the_contract, LINKS).
# The one built-in check switched off is positive_data_acceptance: accepted_or_excused
# (above) is that check with the EXCUSES, the rules a JSON Schema cannot state.
CONFIG = SchemathesisConfig.from_dict({
    "seed": 20261130,
    "checks": {"positive_data_acceptance": {"enabled": False}},
    "generation": {"max-examples": 40},
})
schema = schemathesis.openapi.from_path(OPENAPI_PATH, config=CONFIG)


@pytest.fixture(scope="module")
def contract_schema():
    """The contract under :data:`CONFIG`, handed to the lazy tests below."""
    return schema


@pytest.fixture(autouse=True)
def _node_id_for_lazy_schemas(request):
    """schemathesis 4.32's lazy loader names each operation's subtest by rewriting
    ``request.node._nodeid``, an attribute pytest 9.2 no longer has (it keeps ``nodeid`` only):
    give the node that attribute so the subtests are named ``test[POST /v1/step]``."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


contract_lazy = schemathesis.pytest.from_fixture("contract_schema")
"""The contract's tests are built when they run, not when pytest collects: building every
phase's examples (the coverage phase above all) costs about 25 s of CPU, which a developer
running one unrelated test file should not pay. Each operation is a subtest of its test."""
GRADING = "^/v1/grade"
"""The grading routes: the same phases and checks, fewer fuzzed examples (a generated batch
of traces is megabytes of JSON)."""
APP = create_app()


def test_repository_file_is_the_generated_document():
    assert repository_openapi_path() == OPENAPI_PATH
    current = OPENAPI_PATH.read_text(encoding="utf-8") if OPENAPI_PATH.is_file() else ""
    assert current == contract(), f"openapi.yaml is out of date: run `{REGENERATE}`"


def test_document_is_valid_openapi_3_1():
    document = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    assert document["openapi"] == "3.1.0"
    validate(document)


def test_served_document_is_the_same_bytes():
    response = APP.test_client().get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert response.data == OPENAPI_PATH.read_bytes()


def test_every_route_is_documented():
    document = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    served = {(re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule), method.lower()) for rule in APP.url_map.iter_rules()
              for method in rule.methods - {"HEAD", "OPTIONS"} if rule.endpoint != "static"}
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    assert served == documented


def test_every_operation_tag_is_declared():
    document = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    declared = [tag["name"] for tag in document["tags"]]
    used = {tag for item in document["paths"].values() for op in item.values() for tag in op["tags"]}
    assert declared == ["service", "models", "draws", "sessions", "runs", "grading", "analysis", "inspector",
                        "operations"]
    assert used == set(declared)


def test_step_example_is_the_spec_worked_example():
    document = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    step = document["paths"]["/v1/step"]["post"]
    request = step["requestBody"]["content"]["application/json"]["examples"]["seed1"]["value"]
    block = step["responses"]["200"]["content"]["application/json"]["examples"]["seed1"]["value"]["block"]
    assert request == {"config": {"draft": "biased", "seed": 1}}
    assert block["proposal"]["tokens"] == ["A", "A", "C"]
    assert block["correction"]["distribution"] == [0.0, 0.75, 0.25]
    assert block["committed"] == ["A", "C"] and block["next_position"] == 6


@contract_lazy.exclude(path_regex=GRADING).parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_app_conforms_to_the_contract(case):
    case.call_and_validate(app=APP, additional_checks=[accepted_or_excused])


@contract_lazy.include(path_regex=GRADING).parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_grading_routes_conform_to_the_contract(case):
    """Fewer fuzzed examples: a generated batch of traces is megabytes of JSON."""
    case.call_and_validate(app=APP, additional_checks=[accepted_or_excused])


class WorkflowChecks:
    """The checks of the stateful phase (mixed into a schemathesis state machine): every
    built-in one and :func:`accepted_or_excused`, and one of the links' own: a trace of
    ``POST /v1/runs`` sent on to ``POST /v1/grade`` as it is passes."""

    def setup(self):
        super().setup()
        self.traces = []

    def validate_response(self, response, case, additional_checks=None, **kwargs):
        super().validate_response(response, case, additional_checks=[accepted_or_excused], **kwargs)
        if case.path == "/v1/runs" and response.status_code == 200:
            self.traces.append(json.loads(response.content))
        if case.path == "/v1/grade" and case.body in self.traces:
            assert response.status_code == 200 and json.loads(response.content)["passed"] is True, response.content


class Workflow(WorkflowChecks, schema.as_state_machine()):
    """The stateful phase: calls chained along the contract's links, in process."""

    def get_call_kwargs(self, case):
        return {"app": APP}


LINKS = {"POST_v1_step___200_next_block__POST_v1_step", "POST_v1_step___200_next_proposal__POST_v1_draft",
         "POST_v1_verify___200_next_block__POST_v1_step", "POST_v1_verify___200_next_proposal__POST_v1_draft",
         "POST_v1_runs___200_grade__POST_v1_grade",
         "GET_v1_grade_suites___200_GetSuiteSummary__GET_v1_grade_suites_name_"}
"""The transitions of the stateful phase: the contract's links (a session goes on from the
``state`` of a step or a verification; a run's trace is graded) and the one schemathesis
infers (a suite's name from the list of suites)."""


def test_stateful_sequences_conform_to_the_contract():
    assert LINKS <= set(dir(Workflow)), sorted(name for name in dir(Workflow) if "__" in name)
    Workflow.run(settings=settings(max_examples=60, stateful_step_count=6, deadline=None,
                                   suppress_health_check=list(HealthCheck), database=None, derandomize=True))


live_schema = schemathesis.openapi.from_path(OPENAPI_PATH, config=SchemathesisConfig.from_dict({
    "seed": 20261201,
    "checks": {"positive_data_acceptance": {"enabled": False}},
}))
"""Every phase again, over real sockets (another seed, fewer fuzzed examples)."""


@pytest.fixture(scope="module")
def live_contract_schema():
    """The contract under the live run's configuration, for :data:`live_lazy`."""
    return live_schema


live_lazy = schemathesis.pytest.from_fixture("live_contract_schema")


@pytest.mark.server
@live_lazy.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_live_service_conforms_to_the_contract(case, live_url):
    """The same phases and checks against the real service under gunicorn (sockets, real
    framing), positive and negative data, fewer fuzzed examples: no 5xx, no unexcused refusal."""
    case.call_and_validate(base_url=live_url, additional_checks=[accepted_or_excused], timeout=30)


@pytest.mark.server
def test_live_stateful_sequences_conform_to_the_contract(live_url):
    """The stateful phase over real sockets."""

    class LiveWorkflow(WorkflowChecks, live_schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"base_url": live_url, "timeout": 30}

    assert LINKS <= set(dir(LiveWorkflow))
    LiveWorkflow.run(settings=settings(max_examples=15, stateful_step_count=6, deadline=None,
                                       suppress_health_check=list(HealthCheck), database=None, derandomize=True))


# What client generators need (issue 22; tests/test_clients.py generates and runs the clients).

STABLE_OPERATION_IDS = {
    ("get", "/health"): "getHealth", ("get", "/openapi.yaml"): "getOpenapi", ("get", "/v1/models"): "listModels",
    ("get", "/v1/draws"): "getDraws", ("post", "/v1/draft"): "draftProposal", ("post", "/v1/verify"): "verifyProposal",
    ("post", "/v1/step"): "stepSession", ("post", "/v1/runs"): "createRun", ("post", "/v1/grade"): "gradeTrace",
    ("get", "/v1/grade/suites"): "listSuites", ("get", "/v1/grade/suites/{name}"): "getSuite",
    ("post", "/v1/grade/distribution"): "gradeDistribution", ("post", "/v1/analysis"): "analyze",
    ("get", "/"): "getInspector", ("get", "/metrics"): "getMetrics",
}
"""The ``operationId`` of each operation: generated clients are called by these names
(``step_session`` in Python, ``stepSession`` in TypeScript), so they never change."""


def _document() -> dict:
    return yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))


def test_every_operation_has_a_unique_stable_operation_id():
    ids = {(method, path): op.get("operationId") for path, item in _document()["paths"].items()
           for method, op in item.items()}
    missing = sorted(f"{method.upper()} {path}" for (method, path), name in ids.items() if not name)
    assert not missing, f"operations without an operationId (operation_id= on the route): {missing}"
    assert len(set(ids.values())) == len(ids), f"an operationId is used twice: {sorted(ids.values())}"
    bad = sorted(name for name in ids.values() if not re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", name))
    assert not bad, f"operationIds must be lowerCamelCase words: {bad}"
    changed = {f"{m.upper()} {p}": (name, ids.get((m, p))) for (m, p), name in STABLE_OPERATION_IDS.items()
               if ids.get((m, p)) != name}
    assert not changed, f"a stable operationId changed or went (was, is): {changed}"
    documented = (OPENAPI_PATH.parent / "docs" / "service.md").read_text(encoding="utf-8")
    undocumented = sorted(name for name in ids.values() if f"`{name}`" not in documented)
    assert not undocumented, f"operationIds docs/service.md does not list: {undocumented}"


def _titled(node, path=""):
    """(JSON Pointer, schema) of every schema below ``node`` that has a ``title``."""
    if isinstance(node, dict):
        if isinstance(node.get("title"), str) and ("type" in node or "$ref" in node or "oneOf" in node
                                                   or "enum" in node or "properties" in node):
            yield path, node
        for key, value in node.items():
            if key not in ("examples", "example", "default", "const", "enum"):
                yield from _titled(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _titled(value, f"{path}/{i}")


def test_every_component_has_its_name_as_its_unique_title():
    """Generators name a type by its schema's ``title``: a title that two schemas share made
    openapi-python-client report duplicate models and drop ``POST /v1/grade``. A component's
    title is its name; a schema nested in one that a generator makes a named type of (an
    object or an enumeration) has no title."""
    schemas = _document()["components"]["schemas"]
    assert {name: schema.get("title") for name, schema in schemas.items()} == {name: name for name in schemas}
    aliases = [name for name, schema in schemas.items() if "$ref" in schema]
    assert not aliases, f"components that are a bare $ref (generators duplicate the referenced model): {aliases}"
    nested = [f"#/components/schemas/{name}{path}" for name, schema in schemas.items()
              for path, node in _titled(schema) if path and (node.get("type") in ("object", ["object", "null"])
                                                             or "properties" in node or "enum" in node)]
    assert not nested, f"nested object or enumeration schemas with a title: {nested}"


def _unions(node, path=""):
    if isinstance(node, dict):
        for keyword in ("oneOf", "anyOf"):
            for i, branch in enumerate(node.get(keyword, ())):
                yield f"{path}/{keyword}/{i}", branch
        for key, value in node.items():
            if key not in ("examples", "example"):
                yield from _unions(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _unions(value, f"{path}/{i}")


def test_every_union_branch_is_a_whole_schema():
    """A ``oneOf`` of bare ``required`` lists (exactly one of two fields) is typed ``Any`` by
    openapi-python-client: each branch of a union states a type, an enumeration or a reference
    (the distribution body is a ``oneOf`` of its two forms)."""
    document = _document()
    partial = [path for root, node in (("#/paths", document["paths"]), ("#/components", document["components"]))
               for path, branch in _unions(node, root)
               if not ({"type", "$ref", "enum", "const"} & set(branch))]
    assert not partial, f"union branches that are not whole schemas: {partial}"


def test_the_server_is_the_quick_start_address():
    """A generated client's default base URL is where the README's quick start serves."""
    from specdec_service import gunicorn_conf

    servers = _document()["servers"]
    assert [server["url"] for server in servers] == ["http://localhost:8000"]
    assert all(server.get("description") for server in servers)
    if not os.environ.get("SPECDEC_BIND"):  # the default bind of `specdec-service serve`
        assert gunicorn_conf.bind == "127.0.0.1:8000"
    readme = (OPENAPI_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert "start the service on http://localhost:8000" in readme
