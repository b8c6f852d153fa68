"""The SDK and the `specdec` command against the real service under
gunicorn (the session-scoped ``live_url`` fixture of ``tests/conftest.py``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_client import (
    Client, Config, InvalidInput, PayloadTooLarge, SessionDone, load_trace, save_trace,
)

pytestmark = pytest.mark.server

BIASED1 = Config("biased", 1, width=3)


@pytest.fixture
def live(live_url):
    with Client(live_url, timeout=10) as client:
        yield client


def specdec(live_url, *argv, env=None):
    """Run the command as a subprocess; returns (status, stdout, stderr)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update({"SPECDEC_URL": live_url, **(env or {})})
    result = subprocess.run([sys.executable, "-m", "specdec_client", *argv], capture_output=True, text=True,
                            env=environ, timeout=60)
    return result.returncode, result.stdout, result.stderr


def test_health_and_models(live):
    assert live.health().status == "ok"
    toy = next(m for m in live.models() if m.name == "toy")
    assert toy.start == (0.5, 0.3, 0.2) and toy.next["A"] == (0.2, 0.6, 0.2)  # SPEC section 1


def test_a_session_driven_block_by_block_matches_the_runs_route(live):
    s = live.session(BIASED1)
    proposal = s.draft()
    assert proposal.tokens == ("A", "A", "C")  # SPEC section 4 worked example
    first = s.verify()
    assert first.committed == ("A", "C") and s.position == 6
    assert first.correction.distribution == (0.0, 0.75, 0.25)
    trace = s.run()
    reference = live.run(BIASED1)
    assert trace.to_dict() == reference.to_dict()
    assert s.done and s.done_reason == "limit" and s.output == reference.output
    with pytest.raises(SessionDone):
        s.step()


def test_iterating_a_session_with_another_setting(live):
    s = live.session(BIASED1)
    s.step()
    s.configure(draft="aligned", limit=5)
    blocks = list(s)
    assert blocks[0].prefix == () and all(v.accepted for b in blocks for v in b.verification)
    assert s.trace().to_dict() == live.run(draft="aligned", seed=1, limit=5).to_dict()


def test_replay_of_a_saved_trace(live, tmp_path):
    path = tmp_path / "biased1.json"
    save_trace(live.run(BIASED1), path)
    trace = load_trace(path)
    assert live.replay(trace).ok

    altered = trace.to_dict()
    altered["blocks"][1]["proposal"]["steps"][0]["draw"]["u"] = 0.5
    report = live.replay(altered)
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [
        (1, "blocks[1].proposal.steps[0].draw.u", 0.5, 0.877348686764173)]

    altered = trace.to_dict()
    altered["blocks"][0]["verification"][0]["accepted"] = False
    report = live.replay(altered)
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [
        (0, "blocks[0].verification[0].accepted", False, True)]


def test_replay_of_a_trace_with_a_caller_proposal(live):
    s = live.session(BIASED1)
    s.verify(["B", "A"])
    trace = s.run()
    assert not trace.blocks[0].proposal.drafted
    assert live.replay(trace).ok


def test_the_service_errors_arrive_typed(live):
    with pytest.raises(InvalidInput) as info:
        live.run(draft="biased", seed=1, width=99)
    assert [e.pointer for e in info.value.errors] == ["#/config/width"]
    with pytest.raises(PayloadTooLarge) as info:
        live.step({"config": {"draft": "x" * 300_000, "seed": 1}})
    assert info.value.status == 413


def test_specdec_run(live_url, live):
    status, out, err = specdec(live_url, "run", "--draft", "biased", "--seed", "1")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert "  correction  after A: A 0.0000  B 0.7500  C 0.2500  u 0.7629 (pos 5) → C" in lines
    assert "  output      A C B A B A B B   (8 tokens)" in lines
    status, out, _ = specdec(live_url, "run", "--draft", "biased", "--seed", "1", "--json")
    assert status == 0 and json.loads(out) == live.run(BIASED1).to_dict()


def test_specdec_draws_and_models(live_url):
    status, out, _ = specdec(live_url, "draws", "--seed", "1", "--count", "5")
    assert status == 0 and out.splitlines()[1].split() == ["0", "0.5665615751722809", "910a2dec89025cc1"]
    assert len(out.splitlines()) == 6
    status, out, _ = specdec(live_url, "models")
    assert status == 0 and "toy  (target)   vocab A B C" in out


def test_specdec_replay_exit_statuses(live_url, live, tmp_path):
    good = tmp_path / "good.json"
    save_trace(live.run(BIASED1), good)
    assert specdec(live_url, "replay", str(good))[0] == 0
    bad = tmp_path / "bad.json"
    data = json.loads(good.read_text())
    data["blocks"][0]["verification"][1]["accepted"] = True
    bad.write_text(json.dumps(data))
    status, out, _ = specdec(live_url, "replay", str(bad))
    assert status == 1
    assert out.splitlines()[1] == "  blocks[0].verification[1].accepted: the trace has true, the service gives false"


def test_specdec_errors_are_one_line(live_url, tmp_path):
    status, out, err = specdec(live_url, "run", "--draft", "nope", "--seed", "1")
    assert status == 4 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("specdec: error: HTTP 422 Invalid input")
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens there
    status, out, err = specdec(live_url, "replay", str(tmp_path / "none.json"), "--url", dead)
    assert status == 2 and err.count("\n") == 1 and "none.json" in err
    status, out, err = specdec(live_url, "models", "--url", dead)
    assert status == 3 and err.startswith(f"specdec: error: cannot reach the specdec service at {dead}/v1/models")
    assert err.count("\n") == 2 and "Traceback" not in err  # the error, and what to do about it
    assert err.splitlines()[1] == "specdec: start the service (specdec-service serve) or point --url / SPECDEC_URL at it"


GOLDEN = [path for path in sorted((Path(__file__).resolve().parents[1] / "golden").glob("*.json"))
          if json.loads(path.read_text()).get("format") == "specdec-trace/1"]  # not index.json


@pytest.mark.skipif(not GOLDEN, reason="no golden traces in tests/golden")
def test_every_golden_trace_replays(live):
    """The reference traces kept in tests/golden still match the service."""
    failures = {path.name: str(report) for path in GOLDEN if not (report := live.replay(load_trace(path))).ok}
    assert failures == {}
    assert len(GOLDEN) >= 60


def test_analyze_against_gunicorn(live, live_url):
    """Client.analyze and `specdec analyze` against the real service: the toy's exact values
    (alpha 7/10 at the empty prefix, the naive rule's tv 3/20) and the refusal of a config
    over the route's budget, answered at once with its cost."""
    from fractions import Fraction

    result = live.analyze(draft="biased", depth=1, draft_cost=0.05)
    assert result.contexts[0].alpha == Fraction(7, 10) and result.naive.tv == Fraction(3, 20)
    assert result.output.tv == 0 and result.best_width == 3
    status, out, err = specdec(live_url, "analyze", "--draft", "aligned", "--widths", "3", "--color", "never")
    assert (status, err) == (0, "")
    assert "  committed            8.0000  8" in out.splitlines()
    assert any(line.startswith("      3    4.0000") and line.endswith("◀ best") for line in out.splitlines())
    vocab = [f"t{i}" for i in range(64)]
    row = [1 / 64] * 64
    model = {"vocab": vocab, "start": row, "next": {v: row for v in vocab}}
    with pytest.raises(InvalidInput) as refused:
        live.analyze(target=model, draft=model, width=16, limit=256)
    assert refused.value.problem["cost"] > refused.value.problem["budget"]
