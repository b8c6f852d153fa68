"""docker-compose.yml and the Dockerfile (no Docker engine runs here, so
the compose file is validated against the Compose Specification's JSON
Schema, vendored at ``tests/schemas/compose-spec.json``: Apache-2.0, from the
compose-spec project, source and licence in ``tests/schemas/README.md``)."""

import hashlib
import json
import re
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


def test_edge_on_port_8000_in_front_of_three_replicas(compose):
    """nginx publishes port 8000 with deploy/nginx/edge.conf (the configuration
    deploy/local.py runs and tests/test_edge.py tests) and compose's two include
    files where edge.conf's relative includes find them (/etc/nginx); the service
    runs 3 replicas with no published port, each health-checked."""
    edge, service = compose["services"]["edge"], compose["services"]["specdec"]
    assert edge["ports"] == ["8000:8000"] and "ports" not in service
    image, tag = edge["image"].split(":")
    assert image == "nginx" and tuple(int(n) for n in tag.split("-")[0].split(".")[:2]) >= (1, 27)  # resolve
    mounts = dict(volume.rsplit(":", 1)[0].split(":") for volume in edge["volumes"])
    assert mounts == {
        "./deploy/nginx/edge.conf": "/etc/nginx/conf.d/default.conf",
        "./deploy/nginx/compose/specdec-upstream.conf": "/etc/nginx/specdec-upstream.conf",
        "./deploy/nginx/compose/specdec-server.conf": "/etc/nginx/specdec-server.conf",
        "./deploy/nginx/compose/specdec-checker.conf": "/etc/nginx/specdec-checker.conf",
    }
    assert all(volume.endswith(":ro") for volume in edge["volumes"])
    edge_conf = (ROOT / "deploy" / "nginx" / "edge.conf").read_text(encoding="utf-8")
    for source in mounts:
        assert (ROOT / source).is_file(), source
    assert "include specdec-upstream.conf;" in edge_conf and "include specdec-server.conf;" in edge_conf
    assert "include specdec-checker.conf;" in edge_conf
    assert edge["depends_on"]["specdec"]["condition"] == "service_healthy"
    assert "http://127.0.0.1:8000/health" in " ".join(edge["healthcheck"]["test"])
    assert edge["stop_signal"] == "SIGQUIT"  # nginx's graceful stop

    assert service["deploy"]["replicas"] == 3 and service["expose"] == ["8000"]
    assert service["build"]["context"] == "."
    assert service["environment"]["SPECDEC_BIND"] == "0.0.0.0:8000"
    assert service["healthcheck"]["test"][0] == "CMD"
    assert "http://127.0.0.1:8000/health" in " ".join(service["healthcheck"]["test"])
    assert service["stop_signal"] == "SIGTERM" and service["stop_grace_period"] == "15s"  # > graceful_timeout 10 s
    assert service["read_only"] is True


def test_compose_upstream_resolves_every_replica():
    """The upstream names the compose service: Docker's DNS answers one address
    per replica, and ``resolve`` follows scaling and restarts."""
    upstream = (ROOT / "deploy" / "nginx" / "compose" / "specdec-upstream.conf").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in upstream.splitlines() if line.split("#")[0].strip()]
    assert "resolver 127.0.0.11 valid=5s ipv6=off;" in lines
    assert "zone specdec 64k;" in lines
    assert "server specdec:8000 resolve max_fails=1 fail_timeout=5s;" in lines
    server = (ROOT / "deploy" / "nginx" / "compose" / "specdec-server.conf").read_text(encoding="utf-8")
    assert "listen 8000;" in server and "access_log /dev/stdout specdec;" in server


def test_dockerfile_slim_base_non_root_gunicorn():
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert re.fullmatch(r"FROM python:3\.\d+-slim@sha256:[0-9a-f]{64}", lines[0])  # pinned by digest
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("EXPOSE 8000") for line in lines)
    assert lines[-1] == 'CMD ["gunicorn", "--config", "gunicorn.conf.py"]'
    copied = " ".join(line for line in lines if line.startswith("COPY "))
    for needed in ("requirements.lock", "pyproject.toml", "README.md", "LICENSE", "service", "gunicorn.conf.py",
                   "openapi.yaml"):
        assert needed in copied


def test_dockerignore_keeps_the_build_context_small():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".git", "tests", "client", "bench", "docs"} <= ignored
    assert not ignored & {"service", "pyproject.toml", "README.md", "LICENSE", "gunicorn.conf.py", "openapi.yaml",
                          "requirements.lock"}


def dockerfile_instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (keyword, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dependencies_are_installed_from_the_lock_before_the_code_is_copied():
    """Issue 22: a change of the code must not reinstall numpy and scipy. The lock is copied
    alone and installed (hashes required, wheels only) before anything of the package is copied;
    the package is then installed without resolving its dependencies again."""
    steps = dockerfile_instructions()
    copies = [(i, args) for i, (keyword, args) in enumerate(steps) if keyword == "COPY"]
    runs = [(i, args) for i, (keyword, args) in enumerate(steps) if keyword == "RUN"]
    assert copies[0][1] == "requirements.lock ./"
    (locked, install), = [(i, args) for i, args in runs if "-r requirements.lock" in args]
    assert install.split()[:2] == ["pip", "install"]
    assert "--require-hashes" in install.split() and "--only-binary :all:" in install
    assert copies[0][0] < locked < copies[1][0]  # nothing else copied before the dependencies' layer
    (code, package), = [(i, args) for i, args in runs if re.search(r"pip install [^&]*\.(\s|$)", args)]
    assert "--no-deps" in package.split() and "pip check" in package
    assert max(i for i, args in copies if "service" in args.split()) < code


def lock_pins() -> dict[str, tuple[str, int]]:
    """requirements.lock's pins: name -> (version, number of hashes)."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    pins = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        match = re.match(r"([A-Za-z0-9._-]+)==([^ \\\n]+)", block)
        if match:
            pins[canonicalize_name(match[1])] = (match[2], len(re.findall(r"--hash=sha256:[0-9a-f]{64}", block)))
    return pins


def test_the_lock_pins_every_dependency_with_hashes_for_the_image_python():
    """requirements.lock is made by the command in its header (docs/deploy.md, "The image") for
    the image's Python, and pins every dependency of pyproject.toml within its range, with hashes."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    command = re.search(r"^#\s+(uv pip compile .*)$", text, re.M)[1]
    assert command.split()[3] == "pyproject.toml" and "--generate-hashes" in command
    image_python = re.match(r"python:(3\.\d+)-slim@", dockerfile_instructions()[0][1])
    assert f"--python-version {image_python[1]}" in command
    assert command in (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    pins = lock_pins()
    assert len(pins) >= 20 and all(hashes >= 1 for _, hashes in pins.values())
    for line in metadata.requires("specdec-service"):  # pyproject.toml's, as installed
        requirement = Requirement(line)
        if requirement.marker is not None:  # an extra's (tests, docs): not in the image
            continue
        version, _ = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version), (line, version)
