"""docker-compose.yml and the Dockerfile (no Docker engine runs here, so
the compose file is validated against the Compose Specification's JSON
Schema, vendored at ``tests/schemas/compose-spec.json``: Apache-2.0, from the
compose-spec project, source and licence in ``tests/schemas/README.md``)."""

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_SCHEMA = ROOT / "tests" / "schemas" / "compose-spec.json"
COMPOSE_SCHEMA_SHA256 = "1f91e091f16b2dd50ab8860e02bb391d22df553d91c145eacedb1b6eff9c3f0e"
"""The vendored copy's hash (tests/schemas/README.md): a changed copy is a deliberate update."""


def compose_schema() -> dict:
    """The Compose Specification schema (draft-07; its ``$schema`` URI lacks
    the trailing ``#``, so the validator class is named explicitly)."""
    schema = json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return schema


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def test_the_vendored_schema_is_the_recorded_copy():
    assert hashlib.sha256(COMPOSE_SCHEMA.read_bytes()).hexdigest() == COMPOSE_SCHEMA_SHA256
    notes = (COMPOSE_SCHEMA.parent / "README.md").read_text(encoding="utf-8")
    assert COMPOSE_SCHEMA_SHA256 in notes and "https://github.com/compose-spec/compose-spec" in notes
    assert "Apache License" in (COMPOSE_SCHEMA.parent / "LICENSE-compose-spec").read_text(encoding="utf-8")


def test_compose_file_follows_the_compose_spec(compose):
    jsonschema.Draft7Validator(compose_schema()).validate(compose)


def test_schema_check_rejects_a_broken_file():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(compose_schema()).validate(
            {"services": {"specdec": {"ports": "8000:8000", "healthcheck": {"test": 1}}}})


def test_service_on_port_8000_with_a_health_check(compose):
    service = compose["services"]["specdec"]
    assert "8000:8000" in service["ports"]
    assert service["build"]["context"] == "."
    assert service["environment"]["SPECDEC_BIND"] == "0.0.0.0:8000"
    check = " ".join(service["healthcheck"]["test"])
    assert service["healthcheck"]["test"][0] == "CMD"
    assert "http://127.0.0.1:8000/health" in check


def test_dockerfile_slim_base_non_root_gunicorn():
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0].startswith("FROM python:") and lines[0].endswith("-slim")
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("EXPOSE 8000") for line in lines)
    assert lines[-1] == 'CMD ["gunicorn", "--config", "gunicorn.conf.py"]'
    copied = " ".join(line for line in lines if line.startswith("COPY "))
    for needed in ("pyproject.toml", "README.md", "service", "gunicorn.conf.py", "openapi.yaml"):
        assert needed in copied


def test_dockerignore_keeps_the_build_context_small():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", "tests", "client", "bench", "docs"} <= ignored
    assert not ignored & {"service", "pyproject.toml", "README.md", "gunicorn.conf.py", "openapi.yaml"}
