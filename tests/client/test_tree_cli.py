"""Mode tree (SPEC 11) through the SDK and the `specdec` command, in-process against the real
routes: run --mode tree --drafts 3, sessions with a caller's chains, replay, analyze, grade."""

import json

import pytest

from specdec_client import Client, Config
from specdec_client.types import Proposal, TreeTest

from .service_backend import BASE, calls_to, run_body, specdec

EXAMPLE = {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": 16}


pytestmark = pytest.mark.usefixtures("at_mock_url")


def test_run_mode_tree_with_three_drafts(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "16", "--mode", "tree", "--drafts", "3")
    assert (status, err) == (0, "")
    assert out.splitlines()[0].endswith("seed 16 · limit 8 · drafts 3")
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)
    assert sent["config"]["mode"] == "tree" and sent["config"]["drafts"] == 3
    assert "  verify  depth chain" in out
    status, out, _ = specdec(capsys, "run", "--draft", "biased", "--seed", "16", "--mode", "tree", "--drafts", "3",
                             "--json")
    assert json.loads(out) == run_body({"draft": "biased", "seed": 16, "mode": "tree", "drafts": 3})


def test_the_worked_example_in_a_session_with_chains(service, client):
    session = client.session(Config(**EXAMPLE))
    proposal = session.draft()
    assert proposal.chains == (("A", "A"), ("B", "A"))
    block = session.verify()
    assert block.committed == ("B", "A", "A") and block.next_position == 8
    assert all(isinstance(t, TreeTest) for t in block.verification)
    other = client.session(Config(**EXAMPLE)).verify([["B"], ["C", "C"]])
    assert other.proposal.chains == (("B",), ("C", "C"))


def test_replay_of_a_tree_trace_with_supplied_chains(service, client):
    session = client.session(Config(**{**EXAMPLE, "limit": 4}))
    session.verify([["B"], ["C", "C"]])
    trace = session.run()
    report = client.replay(trace)
    assert report.ok, str(report)


def test_analyze_mode_tree(service, capsys):
    status, out, _ = specdec(capsys, "analyze", "--draft", "biased", "--mode", "tree", "--drafts", "2", "--width", "2",
                             "--widths", "2", "--depth", "2")
    assert status == 0
    assert "Several drafts: committed per pass" in out
    lines = out.splitlines()
    assert "    1   2.0350" in lines and "    2   2.1841" in lines  # 407/200, 349449/160000
    result = Client(BASE).analyze({**EXAMPLE, "seed": 0}, widths=[2], depth=2)
    assert result.tree_sweep is not None and str(result.tree_sweep[1].committed_per_pass) == "349449/160000"


def test_grade_a_tree_trace(service, capsys, tmp_path):
    path = tmp_path / "tree.json"
    trace = run_body(EXAMPLE)
    path.write_text(json.dumps(trace))
    status, out, _ = specdec(capsys, "grade", str(path), "--json")
    assert status == 0 and json.loads(out)[0]["report"]["passed"] is True
    trace["blocks"][0]["verification"][1]["r"] = [0.5, 0.3, 0.2]
    path.write_text(json.dumps(trace))
    status, out, _ = specdec(capsys, "grade", str(path), "--json")
    assert status == 1 and json.loads(out)[0]["report"]["first_divergence"]["path"] == "#/blocks/0/verification/1/r/0"


def test_proposal_body_keeps_chains():
    from specdec_client.types import proposal_body
    assert proposal_body([["A"], ["B", "C"]]) == {"chains": [["A"], ["B", "C"]]}
    assert proposal_body(["A", "B"]) == {"tokens": ["A", "B"]}
    assert proposal_body(Proposal(("A", "B"), (), (("A",), ("B",)))) == {"chains": [["A"], ["B"]]}
