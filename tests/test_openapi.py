"""The OpenAPI contract: up to date, valid OpenAPI 3.1, served byte for
byte, and obeyed by the app (schemathesis, every check, bounded examples)."""

import re
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

OPENAPI_PATH = Path(__file__).resolve().parents[1] / "openapi.yaml"

# The schema can state structure and bounds but neither the engine's rules (a
# row sums to 1, target and draft share a vocabulary, a token is in it, the
# prefix fits the limit, ...) nor a body's size in bytes (a schema-valid trace
# batch for POST /v1/grade can exceed the grading routes' 8 MiB), so data that
# is valid by the schema may still be a documented 422 or 413; a GET with
# `If-None-Match: *` (or the current ETag) is a documented 304; every other
# check runs with its defaults.
CONFIG = SchemathesisConfig.from_dict({
    "seed": 20261130,
    "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "304", "409", "413", "422"]}},
    "generation": {"max-examples": 40},
})
schema = schemathesis.openapi.from_path(OPENAPI_PATH, config=CONFIG)
# The grading routes take whole traces: their coverage phase alone builds
# thousands of multi-megabyte cases (half a minute before any test runs), so
# they are fuzzed by the generation phases only, with fewer examples.
GRADING = "^/v1/grade"
grading_schema = schemathesis.openapi.from_path(OPENAPI_PATH, config=SchemathesisConfig.from_dict({
    "seed": 20261130,
    "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "409", "413", "422"]}},
    "phases": {"coverage": {"enabled": False}},
}))
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
    assert declared == ["service", "models", "draws", "sessions", "runs", "grading", "analysis", "inspector"]
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


@schema.exclude(path_regex=GRADING).parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_app_conforms_to_the_contract(case):
    case.call_and_validate(app=APP)


@grading_schema.include(path_regex=GRADING).parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_grading_routes_conform_to_the_contract(case):
    """Fewer examples: a generated batch of traces is megabytes of JSON."""
    case.call_and_validate(app=APP)
