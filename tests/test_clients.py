"""Clients generated from the contract run against the live service (issue 22).

``openapi.yaml`` is what a user hands to a client generator. Each test generates a client
from it into a temporary directory (never committed), as docs/service.md tells a user to,
then runs a program written against that client (tests/clients/) on the real service under
gunicorn (``live_url``): it steps the README's session ``{"config": {"draft": "biased",
"seed": 1}}`` to its end, runs it whole, grades that trace alone and in a batch, grades a
sampler by its prefix counts and analyses the config. Every answer, as the generated client
read it, must equal the service's own (the Flask test client, in process), and the session
must be SPEC section 4's worked example (the README's figures).

- Python: openapi-python-client (the test extra), with its default settings: it must report
  no problem but the one it cannot help (``GET /openapi.yaml`` answers YAML, which it does
  not parse) and generate a function for every ``operationId``; ``mypy --strict`` checks
  tests/clients/python_session.py against it, then python runs it.
- TypeScript: openapi-typescript writes the types (``--default-non-nullable false``: a request
  field with a default stays optional), openapi-fetch calls the service, ``tsc --strict``
  compiles tests/clients/ts/session.ts, node runs it. The npm packages are pinned in
  tests/clients/ts/package-lock.json and installed by ``npm ci`` here when
  ``node_modules`` does not hold them (the npm registry, the first time).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from specdec_service import create_app

pytestmark = [pytest.mark.server, pytest.mark.clients]

ROOT = Path(__file__).resolve().parents[1]
OPENAPI = ROOT / "openapi.yaml"
CLIENTS = ROOT / "tests" / "clients"
TS = CLIENTS / "ts"
BIN = Path(sys.executable).parent
CONFIG = {"draft": "biased", "seed": 1}
COUNTS = {"config": {"draft": "biased", "seed": 0}, "m": 1, "counters": {"accepted": 1500, "draft_steps": 2700},
          "counts": [{"prefix": ["A"], "count": 497}, {"prefix": ["B"], "count": 305}, {"prefix": ["C"], "count": 198}]}
"""The distribution body of tests/clients/python_session.py and session.ts."""
README_RUN = {"output": ["A", "C", "B", "A", "B", "A", "B", "B"], "done": "limit", "position": 21,
              "counters": {"target_passes": 4, "draft_steps": 10, "accepted": 5, "rejected": 3, "discarded": 2,
                           "bonus_tokens": 0, "committed": 8, "draws": 21}}
"""The biased seed-1 session as the README's curl section shows it (SPEC section 4's example, run to the limit 8)."""


def operation_ids() -> list[str]:
    document = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    return [op["operationId"] for item in document["paths"].values() for op in item.values()]


def snake(name: str) -> str:
    """``stepSession`` -> ``step_session`` (the module openapi-python-client writes for it)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.fixture(scope="module")
def expected() -> dict:
    """The answers of the service itself (in process) to the programs' requests."""
    client = create_app({"TESTING": True}).test_client()

    def post(path: str, body) -> dict:
        response = client.post(path, json=body)
        assert response.status_code == 200, (path, response.get_json())
        return response.get_json()

    steps, state = [], {"config": CONFIG}
    while True:
        steps.append(post("/v1/step", state))
        if steps[-1]["done"] is not None:
            break
        state = steps[-1]["state"]
    trace = post("/v1/runs", {"config": CONFIG})
    return {"health": client.get("/health").get_json(), "steps": steps, "run": trace,
            "grade": post("/v1/grade", trace), "batch": post("/v1/grade", {"traces": [trace, trace]}),
            "distribution": post("/v1/grade/distribution", COUNTS),
            "analysis": post("/v1/analysis", {"config": {"draft": "biased"}})}


def run(command: list, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``command`` in ``cwd``; a non-zero exit fails the test with its output."""
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, command))} exited {result.returncode}:\n" \
                                   f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result


def check_answers(answers: dict, expected: dict) -> None:
    """The program's answers are the service's, and the session is the README's."""
    for key, answer in expected.items():
        assert answers[key] == answer, f"{key}: the generated client read another answer than the service's"
    steps = answers["steps"]
    assert [step["done"] for step in steps] == [None] * (len(steps) - 1) + ["limit"]
    assert [token for step in steps for token in step["block"]["committed"]] == README_RUN["output"]
    assert len(steps) == len(answers["run"]["blocks"]) == 4
    assert {key: answers["run"][key] for key in README_RUN} == README_RUN
    assert steps[-1]["state"]["committed"] == README_RUN["output"]
    assert (answers["grade"]["passed"], answers["grade"]["score"]) == (True, 1.0)
    assert answers["batch"]["summary"] == {"count": 2, "passed": 2, "failed": 0, "mean_score": 1.0}
    assert answers["distribution"]["passed"] is True


def test_the_generated_python_client_runs_a_session_a_grade_and_an_analysis(tmp_path, live_url, expected):
    generator = BIN / "openapi-python-client"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hooks
    generated = run([generator, "generate", "--path", OPENAPI, "--output-path", tmp_path / "client"], tmp_path, env)
    output = generated.stdout + generated.stderr
    problems = [line for line in output.splitlines() if line.startswith("WARNING")]
    assert problems == ["WARNING parsing GET /openapi.yaml within service."], output[-4000:]
    assert "Unsupported content_type application/yaml" in output
    package = tmp_path / "client" / "specdec_api_client"  # named after info.title: not the SDK's specdec_client
    functions = {path.stem for path in (package / "api").rglob("*.py")}
    assert {snake(name) for name in operation_ids()} <= functions

    run([sys.executable, "-m", "mypy", "--strict", "--no-color-output", "--cache-dir", tmp_path / "mypy",
         CLIENTS / "python_session.py"], tmp_path, {**env, "MYPYPATH": str(tmp_path / "client")})
    program = run([sys.executable, CLIENTS / "python_session.py", live_url], tmp_path,
                  {**env, "PYTHONPATH": str(tmp_path / "client")})
    check_answers(json.loads(program.stdout), expected)


def npm_ci() -> None:
    """``npm ci`` in tests/clients/ts unless its ``node_modules`` holds exactly the locked packages."""
    lock = json.loads((TS / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    installed = TS / "node_modules" / ".package-lock.json"
    if installed.is_file() and json.loads(installed.read_text(encoding="utf-8"))["packages"] == \
            {name: entry for name, entry in lock.items() if name}:
        return
    run(["npm", "ci", "--no-audit", "--no-fund"], TS)


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                    reason="node and npm are not installed (bash .ci/run installs them): no TypeScript client")
def test_the_generated_typescript_client_runs_a_session_a_grade_and_an_analysis(tmp_path, live_url, expected):
    npm_ci()
    for name in ("session.ts", "tsconfig.json", "package.json"):
        shutil.copy(TS / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to(TS / "node_modules", target_is_directory=True)
    tools = TS / "node_modules" / ".bin"
    run([tools / "openapi-typescript", OPENAPI, "--default-non-nullable", "false", "-o", tmp_path / "specdec.d.ts"],
        tmp_path)
    types = (tmp_path / "specdec.d.ts").read_text(encoding="utf-8")
    missing = [name for name in operation_ids() if f"\n    {name}: {{" not in types]
    assert not missing, f"operations the generated types lack: {missing}"

    run([tools / "tsc", "-p", tmp_path], tmp_path)  # tsconfig.json: strict
    program = run(["node", tmp_path / "session.js", live_url], tmp_path)
    check_answers(json.loads(program.stdout), expected)
