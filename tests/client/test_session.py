"""specdec_client.session: client-side sessions against the real routes
(``responses`` forwarding to the real Flask app, see service_backend)."""

import pytest

from specdec_client import Counters, InvalidInput, SessionDone

from .service_backend import body_of, calls_to, run_body


def test_draft_does_not_move_the_session(service, client):
    s = client.session(draft="biased", seed=1, width=3)
    proposal = s.draft()
    assert proposal.tokens == ("A", "A", "C")  # SPEC section 4 worked example
    assert s.draft() is proposal and len(calls_to(service, "/v1/draft")) == 1
    assert (s.output, s.position, s.blocks, s.done) == ((), 0, (), False)
    assert s.proposal is proposal


def test_verify_commits_the_drafted_proposal(service, client):
    s = client.session(draft="biased", seed=1)
    s.draft()
    block = s.verify()
    assert block.committed == ("A", "C") and s.output == ("A", "C") and s.position == 6
    assert s.counters == Counters(1, 3, 1, 1, 1, 0, 2, 6)
    assert s.proposal is None
    sent = body_of(calls_to(service, "/v1/verify")[0])
    assert sent["proposal"] == {"tokens": ["A", "A", "C"]}
    assert sent["state"]["committed"] == [] and sent["state"]["position"] == 0


def test_commit_is_verify_and_drafts_when_needed(service, client):
    s = client.session(draft="biased", seed=1)
    assert s.commit().committed == ("A", "C")
    assert len(calls_to(service, "/v1/draft")) == 1


def test_verify_a_caller_proposal(service, client):
    s = client.session(draft="biased", seed=1)
    block = s.verify(["B"])
    assert block.proposal.tokens == ("B",) and not block.proposal.drafted
    assert s.output == block.committed


def test_a_refused_proposal_leaves_the_session_alone(service, client):
    s = client.session(draft="biased", seed=1, width=2)
    with pytest.raises(InvalidInput) as info:
        s.verify(["A", "A", "A"])
    assert [e.pointer for e in info.value.errors] == ["#/proposal/tokens"]
    assert (s.output, s.position, s.blocks) == ((), 0, ())


def test_each_step_sends_back_the_state_it_got(service, client):
    s = client.session(draft="biased", seed=1)
    s.step()
    first_state = s.state.to_dict()
    s.step()
    sent = [body_of(c) for c in calls_to(service, "/v1/step")]
    assert sent[1] == first_state
    assert sent[1]["committed"] == ["A", "C"] and sent[1]["position"] == 6


def test_run_matches_the_runs_route(service, client):
    s = client.session(draft="biased", seed=1, width=3)
    trace = s.run()
    assert trace.to_dict() == run_body({"draft": "biased", "seed": 1, "width": 3})
    assert s.done and s.done_reason == "limit"
    assert [len(b.committed) for b in s.blocks] == [2, 3, 2, 1]


def test_a_step_after_the_end_is_a_409(service, client):
    s = client.session(draft="aligned", seed=0, limit=1)
    s.run()
    with pytest.raises(SessionDone) as info:
        s.step()
    assert info.value.status == 409 and "done" in info.value.detail


def test_iterating_yields_every_block(service, client):
    s = client.session(draft="aligned", seed=4, limit=6)
    first = s.step()
    blocks = list(s)
    assert blocks[0] is first and len(blocks) == len(s.blocks) and s.done
    assert [t for b in blocks for t in b.committed] == list(s.output)
    assert list(s) == blocks  # a done session yields what it has


@pytest.mark.parametrize("change", [{"draft": "aligned"}, {"width": 2}, {"seed": 2}, {"mode": "greedy"},
                                    {"target": "toy"}, {"limit": 4}, {"eos": "C"}])
def test_changing_a_setting_starts_a_new_session(service, client, change):
    s = client.session(draft="biased", seed=1)
    s.step()
    s.draft()
    s.configure(**change)
    assert (s.output, s.position, s.blocks, s.proposal, s.done) == ((), 0, (), None, False)
    assert s.counters == Counters()
    assert s.state.committed == ()
    block = s.step()
    assert block.prefix == () and block.position == 0
    name, value = next(iter(change.items()))
    assert s.config.to_dict()[name] == value


def test_setting_properties_reset_too(service, client):
    s = client.session(draft="biased", seed=1)
    s.step()
    s.width = 1
    assert s.width == 1 and s.output == ()
    assert s.step().proposal.tokens == ("A",)
    s.draft_model = "aligned"
    assert s.draft_model == "aligned" and s.blocks == ()


def test_greedy_and_autoregressive_sessions(service, client):
    greedy = client.session(draft="biased", seed=9, mode="greedy")
    greedy.run()
    assert greedy.position == 0 and greedy.counters.draws == 0  # SPEC section 5: no draws
    auto = client.session(draft="biased", seed=1, mode="autoregressive", limit=3)
    blocks = list(auto)
    assert [b.sample.draw.position for b in blocks] == [0, 1, 2]
    assert auto.counters.target_passes == 3


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("settings", [{"draft": "biased", "width": 2}, {"draft": "aligned", "width": 5, "limit": 12},
                                      {"draft": "biased", "mode": "greedy", "width": 4}])
def test_sessions_match_the_runs_route_and_replay(service, client, seed, settings):
    s = client.session(seed=seed, **settings)
    trace = s.run()
    assert trace.to_dict() == run_body({"seed": seed, **settings})
    assert sum(len(b.committed) for b in s.blocks) == len(s.output) == s.config.limit
    assert client.replay(trace).ok


def test_a_session_ends_at_a_committed_eos(service, client):
    model = {"vocab": ["a", "b", "<eos>"], "start": [0.5, 0.25, 0.25],
             "next": {"a": [0.25, 0.25, 0.5], "b": [0.5, 0.0, 0.5], "<eos>": [0.5, 0.25, 0.25]}}
    s = client.session(target=model, draft=model, seed=3, eos="<eos>", limit=50)
    trace = s.run()
    assert s.done_reason == "eos" and s.output[-1] == "<eos>" and "<eos>" not in s.output[:-1]
    assert trace.done == "eos" and client.replay(trace).ok


def test_mode_block_through_sessions_run_replay_and_grade(service, client):
    """Mode block (SPEC 10) through the SDK: a session stepped block by block is the run, a saved
    run replays clean, grades as passing, and the first-failing-eta mistake is named."""
    settings = {"draft": "biased", "seed": 4, "width": 2, "mode": "block"}
    trace = client.run(**settings)
    first = trace.blocks[0]
    assert first.tau == 2 and first.committed == ("A", "B", "A")
    assert [(v.weight_exact, v.threshold_exact, v.below_threshold) for v in first.verification] == [
        ("5/8", "4/9", False), ("1", "1", True)]
    s = client.session(**settings)
    while not s.done:
        s.commit()
    assert s.output == trace.output and s.counters == trace.counters
    assert client.replay(trace).ok
    assert client.grade(trace).passed
    wrong = trace.to_dict()
    wrong["blocks"][0]["verification"][0]["accepted"] = False
    report = client.grade(wrong)
    assert not report.passed and report.first_divergence.path == "#/blocks/0/verification/0/accepted"
