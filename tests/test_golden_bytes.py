"""The service's JSON for the golden configs is byte-identical to the recorded digests.

``tests/golden/service-sha256.json`` holds, for every golden config (``tests/golden/index.json``),
the SHA-256 of the exact bytes the service returns on each route: ``POST /v1/runs``; the chain
of ``POST /v1/draft``, ``POST /v1/verify`` (of the drafted tokens) and ``POST /v1/step`` over every
block of the session; ``POST /v1/grade`` of the golden trace and, for the speculative configs, of
every catalogued mistake's trace (the faulty variant's trace bytes and its report, diagnosis
included); ``POST /v1/grade/distribution`` of the output with the trace's counters (the exact
expected acceptance rate). A refactoring of the engine or the grader must leave every byte as it
was; a deliberate change of behaviour regenerates the file and says why in its commit:

    .venv/bin/python tests/test_golden_bytes.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
DIGESTS = GOLDEN / "service-sha256.json"
INDEX = json.loads((GOLDEN / "index.json").read_text(encoding="utf-8"))
_RECORDED = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}
J = {"Content-Type": "application/json"}


def _sha(parts: list[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def _post(client, path: str, body) -> bytes:
    response = client.post(path, data=json.dumps(body), headers=J)
    assert response.status_code == 200, (path, response.get_data(as_text=True)[:300])
    return response.get_data()


def digests(client, name: str, config: dict, mistake_ids=None) -> dict:
    """Route -> SHA-256 of the bodies the service returns for golden config ``name``.

    ``mistake_ids``: the catalogued mistakes whose traces are graded (default: all of them)."""
    from specdec_service.engine import parse_config
    from specdec_service.grading import BY_ID, CATALOGUE, faulty_run

    out: dict[str, str] = {}
    runs = _post(client, "/v1/runs", {"config": config})
    out["runs"] = _sha([runs])
    trace = json.loads(runs)
    state: dict = {"config": config}
    drafts, verifies, steps = [], [], []
    while True:
        drafts.append(_post(client, "/v1/draft", state))
        tokens = json.loads(drafts[-1])["tokens"]
        verifies.append(_post(client, "/v1/verify", {"state": state, "proposal": {"tokens": tokens}}))
        steps.append(_post(client, "/v1/step", state))
        answer = json.loads(steps[-1])
        if answer["done"] is not None:
            break
        state = answer["state"]
    out["draft"], out["verify"], out["step"] = _sha(drafts), _sha(verifies), _sha(steps)
    out["grade"] = _sha([_post(client, "/v1/grade", trace)])
    mode = config.get("mode", "speculative")
    if mode != "greedy":
        samples = [trace["output"][:2]] * 20
        body = {"config": config, "m": 2, "samples": samples, "counters": trace["counters"]}
        out["grade/distribution"] = _sha([_post(client, "/v1/grade/distribution", body)])
    if mode == "speculative":
        parsed = parse_config(config)
        ids = [m.id for m in CATALOGUE] if mistake_ids is None else mistake_ids
        for mistake_id in ids:
            try:
                faulty = faulty_run(parsed, BY_ID[mistake_id].rules)
            except ValueError as error:  # the mistake makes a rule undefined for this config
                out[f"mistake/{mistake_id}"] = f"undefined: {error}"
                continue
            encoded = json.dumps(faulty).encode()
            out[f"mistake/{mistake_id}"] = _sha([encoded, _post(client, "/v1/grade", faulty)])
    return out


@pytest.mark.parametrize("name", sorted(INDEX))
def test_service_bytes_are_unchanged_for_golden_config(client, name):
    recorded = _RECORDED[name]
    mistakes = sorted(key.split("/", 1)[1] for key in recorded if key.startswith("mistake/"))
    got = digests(client, name, INDEX[name], mistakes)
    changed = sorted(route for route in recorded if got.get(route) != recorded[route])
    assert not changed, f"{name}: the bytes of {changed} changed"
    assert set(got) == set(recorded)


def test_every_golden_config_has_recorded_digests():
    assert set(_RECORDED) == set(INDEX) and len(INDEX) == 66
    assert all(len(v) >= 5 for v in _RECORDED.values())  # greedy has no grade/distribution


def main(argv) -> int:
    sys.path.insert(0, str(HERE.parent / "service"))
    from specdec_service import create_app

    client = create_app({"TESTING": True}).test_client()
    table = {name: digests(client, name, INDEX[name]) for name in sorted(INDEX)}
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if "--write" in argv:
        DIGESTS.write_text(text, encoding="utf-8")
        print(f"wrote {DIGESTS}")
        return 0
    return 0 if DIGESTS.is_file() and DIGESTS.read_text(encoding="utf-8") == text else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
