"""specdec_client.traces: load/save, the diff, and replay against the real
routes (``responses`` forwarding to the real Flask app)."""

import copy
import io
import json

import pytest

from specdec_client import MISSING, Divergence, TraceFormatError, diff, load_trace, save_trace
from specdec_client.traces import same

from .service_backend import calls_to, run_body

BIASED1 = {"draft": "biased", "seed": 1}


def saved(**config):
    return run_body(config or BIASED1)


# ---------------------------------------------------------------- files


def test_save_then_load_round_trips(tmp_path):
    body = saved()
    save_trace(body, tmp_path / "t.json")
    trace = load_trace(tmp_path / "t.json")
    assert trace.to_dict() == body
    buffer = io.StringIO()
    save_trace(trace, buffer)
    assert json.loads(buffer.getvalue()) == body
    assert load_trace(io.StringIO(buffer.getvalue())).to_dict() == body


@pytest.mark.parametrize("text, message", [
    ("{not json", "not JSON"),
    ("[1, 2]", "a trace is a JSON object, not a list"),
    ('{"format": "specdec-trace/1"}', "missing config, blocks, output, counters, position, done"),
    ('{"format": "specdec-trace/1", "ratio": NaN}', "NaN is not a JSON number"),  # Python's json.dumps writes it
    ('{"format": "specdec-trace/1", "ratio": -Infinity}', "-Infinity is not a JSON number"),
    ('{"format": "specdec-trace/1", "u": 1e999}', "1e999 is beyond the float64 range"),
])
def test_unreadable_traces(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceFormatError, match=message):
        load_trace(path)


def test_a_trace_of_another_format(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({**saved(), "format": "specdec-trace/0"}))
    with pytest.raises(TraceFormatError, match="specdec-trace/1"):
        load_trace(path)


def _set(path, value):
    def alter(trace):
        *parents, last = path
        target = trace
        for key in parents:
            target = target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
    return alter


@pytest.mark.parametrize("alter, message", [
    (_set(("blocks", 0), None), "blocks[0] must be an object, not null"),
    (_set(("counters",), None), "counters must be an object, not null"),
    (_set(("blocks",), {}), "blocks must be a list, not an object"),
    (_set(("blocks", 1, "proposal", "steps"), KeyError), "blocks[1].proposal.steps is missing"),
    (_set(("blocks", 1, "verification", 0, "draw"), [1]), "blocks[1].verification[0].draw must be an object, not a list"),
    (_set(("blocks", 0, "correction", "token"), KeyError), "blocks[0].correction.token is missing"),
    (_set(("blocks", 2, "counters"), "x"), "blocks[2].counters must be an object, not a string"),
])
def test_a_malformed_trace_names_the_field_and_the_source(tmp_path, alter, message):
    trace = saved()
    alter(trace)
    text = json.dumps(trace)
    with pytest.raises(TraceFormatError) as info:
        load_trace(io.StringIO(text))
    assert str(info.value) == f"<stream>: not a specdec-trace/1 trace ({message})"
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(TraceFormatError) as info:
        load_trace(path)
    assert str(info.value) == f"{path}: not a specdec-trace/1 trace ({message})"


@pytest.mark.parametrize("config", [{"draft": "biased", "seed": 3, "mode": "greedy"},
                                    {"draft": "aligned", "seed": 1, "mode": "autoregressive"},
                                    {"draft": "aligned", "seed": 1, "width": 5}])
def test_the_shape_check_accepts_every_mode(config):
    trace = saved(**config)
    assert load_trace(io.StringIO(json.dumps(trace))).to_dict() == trace


def test_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        load_trace(tmp_path / "nope.json")


# ---------------------------------------------------------------- diff


def test_diff_paths_and_missing_fields():
    expected = {"a": 1, "b": [1, {"u": 0.5}], "c": True, "gone": 1}
    got = {"a": 1, "b": [1, {"u": 0.25}, 3], "c": 1, "new": None}
    assert list(diff(expected, got, "t")) == [
        ("t.b[1].u", 0.5, 0.25), ("t.b[2]", MISSING, 3), ("t.c", True, 1), ("t.gone", 1, MISSING),
        ("t.new", MISSING, None),
    ]
    assert list(diff(expected, copy.deepcopy(expected))) == []


def test_same_is_exact_and_type_aware():
    assert same(1, 1.0) and same(None, None) and same("A", "A")
    assert not same(True, 1) and not same(0, False) and not same(0.1 + 0.2, 0.3) and not same("1", 1)


def test_divergence_text_and_json():
    d = Divergence(0, "blocks[0].bonus", MISSING, {"token": "B"})
    assert str(d) == 'blocks[0].bonus: the trace has {"token": "B"}, the service gives <missing>'
    assert d.to_dict() == {"block": 0, "path": "blocks[0].bonus", "expected": "<missing>", "got": {"token": "B"}}


# ---------------------------------------------------------------- replay


def test_replay_of_an_untouched_trace_matches(service, client):
    report = client.replay(saved())
    assert report.ok and report.blocks == 4 and report.divergences == ()
    assert str(report) == "replay: 4 blocks replayed, every field matches the service"
    steps = calls_to(service, "/v1/step")
    assert len(steps) == 4
    # each block is replayed from its own saved starting point
    sent = [json.loads(c.request.body) for c in steps]
    assert [(s["committed"], s["position"]) for s in sent] == [
        ([], 0), (["A", "C"], 6), (["A", "C", "B", "A", "B"], 13), (["A", "C", "B", "A", "B", "A", "B"], 19)]
    assert sent[1]["counters"] == saved()["blocks"][0]["counters"]


@pytest.mark.parametrize("config", [{"draft": "aligned", "seed": 7, "width": 4, "limit": 12},
                                    {"draft": "biased", "seed": 3, "mode": "greedy"},
                                    {"draft": "biased", "seed": 3, "mode": "autoregressive", "limit": 3}])
def test_replay_matches_in_every_mode(service, client, config):
    assert client.replay(saved(**config)).ok


def test_an_altered_draw_is_reported_exactly(service, client):
    trace = saved()
    trace["blocks"][0]["verification"][1]["draw"]["u"] = 0.1
    report = client.replay(trace)
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [
        (0, "blocks[0].verification[1].draw.u", 0.1, 0.44426470082635805)]


def test_an_altered_decision_is_reported_exactly(service, client):
    trace = saved()
    trace["blocks"][1]["verification"][2]["accepted"] = True
    report = client.replay(trace)
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [
        (1, "blocks[1].verification[2].accepted", True, False)]
    assert str(report).splitlines() == [
        "replay: 4 blocks replayed, 1 divergence",
        "  blocks[1].verification[2].accepted: the trace has true, the service gives false"]


def test_a_dropped_bonus_and_the_totals(service, client):
    trace = saved(draft="aligned", seed=1)  # every block ends with a bonus
    block = trace["blocks"][0]
    bonus = block["bonus"]
    block["bonus"], block["no_bonus"] = None, "limit"
    paths = [d.path for d in client.replay(trace).divergences]
    assert paths == ["blocks[0].bonus", "blocks[0].no_bonus"]
    assert client.replay(saved(draft="aligned", seed=1)).ok and bonus is not None


def test_altered_totals_are_reported(service, client):
    trace = saved()
    trace["output"][-1] = "C"
    trace["counters"]["draws"] += 1
    trace["done"] = None
    report = client.replay(trace)
    assert [(d.block, d.path) for d in report.divergences] == [
        (None, "output[7]"), (None, "counters.draws"), (None, "done")]


@pytest.mark.parametrize("block", [0, 2])
def test_a_refused_start_that_does_not_join_up_is_reported_once(service, client, block):
    trace = saved()
    trace["blocks"][block]["position"] = 2 ** 53 - 1  # the service refuses to draw from there (422)
    report = client.replay(trace)
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [
        (block, f"blocks[{block}].position", 2 ** 53 - 1, [0, 6, 13, 19][block])]
    # refused from its saved start, the block was replayed from where the block before ended
    sent = [json.loads(c.request.body)["position"] for c in calls_to(service, "/v1/step")]
    assert sent.count(2 ** 53 - 1) == 1 and len(sent) == 5


def test_an_invalid_config_is_reported_once_not_per_block(service, client):
    trace = saved()
    trace["config"]["width"] = 99  # every block would be refused (422) at #/config/width
    report = client.replay(trace)
    assert [(d.block, d.path, d.got) for d in report.divergences] == [(None, "config.width", 99)]
    assert report.divergences[0].expected == "refused: must be an integer from 1 to 16"
    assert len(calls_to(service, "/v1/step")) == 1  # the first refusal ends the replay
    assert str(report).splitlines()[1] == ('  config.width: the trace has 99, the service gives '
                                           '"refused: must be an integer from 1 to 16"')


def test_blocks_that_do_not_join_up(service, client):
    trace = saved()
    trace["blocks"][2]["position"] = 12
    report = client.replay(trace)
    # replayed from where block 1 ended, block 2 is the saved one: its start is the one difference
    assert [(d.block, d.path, d.got, d.expected) for d in report.divergences] == [(2, "blocks[2].position", 12, 13)]
    assert report.consequences == ()


EVERY_MODE = [{"mode": "speculative"}, {"mode": "greedy"}, {"mode": "autoregressive"}, {"mode": "block"},
              {"mode": "tree", "drafts": 2},
              *({"mode": "tree", "drafts": 2, "tree": {"shape": shape, "verify": verify}}
                for shape, verify in (("chains", "target_only"), ("distinct", "residual"), ("distinct", "target_only"),
                                      ("beam", "target_only")))]
"""Every mode, and in mode tree every shape x verifier (SPEC 4-5, 10-12)."""


def _other(token):
    return "A" if token != "A" else "B"


def _committed_token(trace, consistent):
    """Block 0's first committed token altered; ``consistent``: the trace's output altered alike."""
    token = trace["blocks"][0]["committed"][0]
    trace["blocks"][0]["committed"][0] = _other(token)
    if consistent:
        trace["output"][0] = _other(token)
    return "blocks[0].committed[0]", _other(token), token


def _next_position(trace, consistent):
    """Block 0's next_position altered (``consistent``: and the trace's position, for a one-block trace)."""
    position = trace["blocks"][0]["next_position"]
    trace["blocks"][0]["next_position"] = position + 1
    if consistent and len(trace["blocks"]) == 1:
        trace["position"] = position + 1
    return "blocks[0].next_position", position + 1, position


def _start_position(trace, consistent):
    """Block 1's position (its start) altered."""
    position = trace["blocks"][1]["position"]
    trace["blocks"][1]["position"] = position + 1
    return "blocks[1].position", position + 1, position


def _start_prefix(trace, consistent):
    """Block 1's first prefix token altered."""
    token = trace["blocks"][1]["prefix"][0]
    trace["blocks"][1]["prefix"][0] = _other(token)
    return "blocks[1].prefix[0]", _other(token), token


@pytest.mark.parametrize("edit", [_committed_token, _next_position, _start_position, _start_prefix],
                         ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("consistent", [False, True], ids=["alone", "with the totals"])
@pytest.mark.parametrize("config", EVERY_MODE, ids=lambda c: " ".join(str(v) for v in c.values()))
def test_one_altered_value_is_one_divergence_in_every_mode(service, client, config, edit, consistent):
    """One altered value of a block is the first and only divergence, in every mode and tree;
    what the trace derives from it (the next block's start, the output) is a consequence, named
    apart and not counted."""
    trace = saved(draft="biased", seed=3, **config)
    assert len(trace["blocks"]) > 1
    path, got, expected = edit(trace, consistent)
    report = client.replay(trace)
    assert [(d.path, d.got, d.expected) for d in report.divergences] == [(path, got, expected)]
    assert report.first == report.divergences[0] and not report.ok
    text = str(report).splitlines()
    assert text[:2] == ["replay: 3 blocks replayed, 1 divergence".replace("3", str(len(trace["blocks"]))),
                        f"  {report.first}"]
    if report.consequences:
        assert text[2] == "  later differences follow from it, not counted: " + ", ".join(
            d.path for d in report.consequences)


def test_consequences_are_named_apart(service, client):
    trace = saved()
    trace["blocks"][0]["committed"][0] = "B"  # the service commits A
    report = client.replay(trace)
    assert [d.path for d in report.divergences] == ["blocks[0].committed[0]"]
    # block 1 starts where the service's block 0 ends, not where the altered one does; the
    # trace's output is the service's, not its blocks' joined
    assert [(d.path, d.got, d.expected) for d in report.consequences] == [
        ("blocks[1].prefix[0]", "A", "B"), ("output[0]", "A", "B")]
    assert report.to_dict()["consequences"][0] == {"block": 1, "path": "blocks[1].prefix[0]", "expected": "B",
                                                   "got": "A"}
    assert "consequences" not in client.replay(saved()).to_dict()



def test_a_missing_block_is_reported(service, client):
    trace = saved()
    del trace["blocks"][3]
    report = client.replay(trace)
    assert [(d.path, d.got) for d in report.divergences] == [
        ("output[7]", "B"), ("counters.target_passes", 4),
        ("counters.draft_steps", 10), ("counters.accepted", 5), ("counters.committed", 8),
        ("counters.draws", 21), ("position", 21), ("done", "limit")]


def test_a_block_the_service_refuses(service, client):
    trace = saved()
    extra = copy.deepcopy(trace["blocks"][-1])  # a block after the end: 409
    extra["prefix"], extra["position"] = trace["output"], trace["position"]
    trace["blocks"].append(extra)
    report = client.replay(trace)
    first = report.divergences[0]
    assert (first.block, first.path, first.got) == (4, "blocks[4]", "a block")
    assert first.expected.startswith("no block: HTTP 409: the session is done")
    assert [d.path for d in report.divergences[1:]] == ["output[8]", "counters.target_passes",
                                                        "counters.draft_steps", "counters.accepted",
                                                        "counters.committed", "counters.draws"]


def test_a_caller_proposal_is_replayed_with_verify(service, client):
    s = client.session(draft="biased", seed=1)
    s.verify(["B", "A"])
    trace = s.run().to_dict()
    assert client.replay(trace).ok
    verified = calls_to(service, "/v1/verify")
    assert json.loads(verified[-1].request.body)["proposal"] == {"tokens": ["B", "A"]}
    trace["blocks"][0]["proposal"]["tokens"][1] = "C"
    paths = [d.path for d in client.replay(trace).divergences]
    assert "blocks[0].proposal.tokens[1]" not in paths  # the altered tokens were sent, so they echo back
    assert paths[0].startswith("blocks[0].")


def test_replay_refuses_a_non_trace(client):
    with pytest.raises(TraceFormatError):
        client.replay({"format": "specdec-trace/1"})
