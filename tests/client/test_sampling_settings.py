"""Sampling parameters (SPEC section 9) in the SDK and the `specdec` command: `--temperature`,
`--top-k`, `--top-p`, `--min-p`, `--draft-rows`, and `sampling` in `Client.run`, sessions, replay
and analyze, against the real routes (``responses`` forwarding to the Flask app). The values are
SPEC 9's worked example: T = 0.5, top_k 2, top_p 0.8 on the toy and the biased draft give
p' = [25/34, 9/34, 0] and q' = [1, 0, 0] at the empty prefix; alpha = 25/34 processed, 301/340 raw."""

import json
from fractions import Fraction

import pytest
from specdec_client import Config, Sampling, cli
from specdec_client.errors import InvalidInput
from specdec_client.types import CONFIG_KEYS, SAMPLING_KEYS, Trace

from .service_backend import calls_to, specdec

WORKED = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}
P_PRIME = [25 / 34, 9 / 34, 0.0]  # SPEC 9: p' at the empty prefix
AFTER = {"A": [0.0, 1.0, 0.0], "B": [121 / 157, 0.0, 36 / 157], "C": [1 / 5, 0.0, 4 / 5]}  # p' after each token


pytestmark = pytest.mark.usefixtures("at_mock_url")


def rows_seen(trace: dict) -> dict:
    """Every target row the trace reports, by context (verification, correction-free)."""
    seen: dict = {}
    for block in trace["blocks"]:
        for v in block["verification"]:
            seen.setdefault(v["context"], v["p"])
        if block["bonus"] is not None:
            seen.setdefault(block["bonus"]["context"], block["bonus"]["p"])
    return seen


# ---------------------------------------------------------------- the command


def test_run_sends_the_sampling_parameters_and_shows_the_processed_rows(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--temperature", "0.5",
                               "--top-k", "2", "--top-p", "0.8")
    assert (status, err) == (0, "")
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)
    assert sent["config"]["sampling"] == WORKED
    lines = out.splitlines()
    assert lines[0] == ("specdec run  target toy · draft biased · mode speculative · width 3 · seed 1 · limit 8 · "
                        "sampling T 0.5, top-k 2, top-p 0.8")
    # the first proposal is drafted from q' = [1, 0, 0] and tested against p'(A) = 25/34
    verify = [line for line in lines if "(u " in line]
    assert "0.7353  1.0000   0.7353" in verify[0]


def test_run_json_reports_the_processed_rows_of_the_worked_example(service, capsys):
    status, out, _ = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--temperature", "0.5",
                             "--top-k", "2", "--top-p", "0.8", "--json")
    trace = json.loads(out)
    assert status == 0 and trace["config"]["sampling"] == WORKED
    first = trace["blocks"][0]
    assert first["proposal"]["steps"][0]["q"] == [1.0, 0.0, 0.0]  # q'
    assert first["verification"][0]["p"] == P_PRIME
    seen = rows_seen(trace)
    assert seen[None] == P_PRIME
    for context, row in AFTER.items():
        if context in seen:
            assert seen[context] == pytest.approx(row, abs=0, rel=1e-15)


def test_run_mode_block_with_the_raw_draft(service, capsys):
    status, out, err = specdec(capsys, "run", "--mode", "block", "--draft", "biased", "--seed", "4", "--width", "2",
                               "--temperature", "0.5", "--top-k", "2", "--top-p", "0.8", "--draft-rows", "raw", "--json")
    assert (status, err) == (0, "")
    trace = json.loads(out)
    assert trace["config"]["mode"] == "block"
    assert trace["config"]["sampling"] == {**WORKED, "draft": "raw"}
    first = trace["blocks"][0]
    assert first["proposal"]["steps"][0]["q"] == [0.8, 0.15, 0.05]  # the raw q
    assert first["verification"][0]["p"] == P_PRIME  # the target's rows are always processed
    status, out, _ = specdec(capsys, "run", "--mode", "block", "--draft", "biased", "--seed", "4", "--width", "2",
                             "--temperature", "0.5", "--top-k", "2", "--top-p", "0.8", "--draft-rows", "raw")
    assert out.splitlines()[0].endswith("· mode block · width 2 · seed 4 · limit 8 · "
                                        "sampling T 0.5, top-k 2, top-p 0.8, draft rows raw")


def test_min_p_is_sent_and_applied(service, capsys):
    status, out, _ = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--min-p", "0.5", "--json")
    trace = json.loads(out)
    assert status == 0 and trace["config"]["sampling"] == {"min_p": 0.5}
    assert trace["blocks"][0]["verification"][0]["p"] == [5 / 8, 3 / 8, 0.0]  # 0.2 < 0.5 * 0.5 is dropped


def test_no_sampling_option_sends_no_sampling(service, capsys):
    status, out, _ = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--json")
    assert status == 0 and "sampling" not in json.loads(out)["config"]
    assert "sampling" not in json.loads(calls_to(service, "/v1/runs")[0].request.body)["config"]


@pytest.mark.parametrize("option, value, field", [
    ("--temperature", "0.01", "temperature"), ("--temperature", "21", "temperature"), ("--top-k", "65", "top_k"),
    ("--top-k", "0", "top_k"), ("--top-p", "0", "top_p"), ("--top-p", "1.5", "top_p"), ("--min-p", "-0.1", "min_p"),
])
def test_a_value_out_of_bounds_is_refused_by_the_service(service, capsys, option, value, field):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1", option, value)
    assert (status, out) == (4, "")  # the service refused the request (HTTP 4xx)
    assert err.count("\n") == 1 and err.startswith("specdec: error: HTTP 422 Invalid input: ")
    assert f"#/config/sampling/{field}" in err


@pytest.mark.parametrize("argv", [
    ("--top-k", "2.5"), ("--temperature", "hot"), ("--top-p", "nan"), ("--min-p", "inf"), ("--draft-rows", "cooked"),
])
def test_a_value_that_is_not_a_number_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--draft", "biased", "--seed", "1", *argv])
    assert stop.value.code == 2
    assert argv[0] in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--temperature", "--top-p", "--min-p", "--threshold-single", "--threshold-acc"])
@pytest.mark.parametrize("written, sent", [("1e-400", "0.0"), ("-1e-400", "-0.0"),
                                           ("0.1000000000000000055511151231257827", "0.1"), ("2.00000000000000001", "2.0")])
def test_a_decimal_that_float64_would_change_is_a_usage_error(capsys, option, written, sent):
    """The service reads the decimal written (SPEC 1, 9): the command never sends another one in its
    place (1e-400 as 0.0 would be greedy decoding); it names the decimal that would be sent."""
    tree = ["--mode", "tree", "--tree-verify", "target_only"] if option.startswith("--threshold") else []
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--draft", "biased", "--seed", "1", *tree, f"{option}={written}"])
    assert stop.value.code == 2
    assert f"{written} is not a float64's decimal: it would be sent as {sent}" in capsys.readouterr().err


def test_help_lists_the_sampling_options(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = capsys.readouterr().out
    for option in ("--temperature", "--top-k", "--top-p", "--min-p", "--draft-rows"):
        assert option in text
    assert "sampling parameters (SPEC section 9)" in text


def test_analyze_takes_the_sampling_options(service, capsys):
    status, _, err = specdec(capsys, "analyze", "--draft", "biased", "--temperature", "0.5", "--top-k", "2",
                               "--top-p", "0.8", "--json")
    assert (status, err) == (0, "")
    sent = json.loads(calls_to(service, "/v1/analysis")[0].request.body)
    assert sent["config"]["sampling"] == WORKED


# ---------------------------------------------------------------- the SDK


def test_client_run_takes_sampling_as_a_record_a_mapping_or_in_a_config(service, client):
    by_record = client.run(draft="biased", seed=1, sampling=Sampling(temperature=0.5, top_k=2, top_p=0.8))
    by_mapping = client.run({"draft": "biased", "seed": 1, "sampling": WORKED})
    by_config = client.run(Config(draft="biased", seed=1, sampling=Sampling(**WORKED)))
    assert by_record.to_dict() == by_mapping.to_dict() == by_config.to_dict()
    sampling = by_record.config.sampling
    assert isinstance(sampling, Sampling)
    assert (sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p, sampling.draft) == (0.5, 2, 0.8, None, None)
    assert by_record.blocks[0].verification[0].p == tuple(P_PRIME)
    assert by_record.blocks[0].proposal.steps[0].q == (1.0, 0.0, 0.0)
    sent = [json.loads(c.request.body)["config"] for c in calls_to(service, "/v1/runs")]
    assert [s["sampling"] for s in sent] == [WORKED] * 3


def test_a_config_without_sampling_sends_none():
    assert "sampling" not in Config(draft="biased", seed=1).to_dict()
    assert Config(draft="biased", seed=1, sampling={"top_p": 0.8}).to_dict()["sampling"] == {"top_p": 0.8}
    assert Sampling(top_k=2, draft="raw").to_dict() == {"top_k": 2, "draft": "raw"}
    assert Config(draft="biased", seed=1).replace(sampling=Sampling(min_p=0.1)).to_dict()["sampling"] == {"min_p": 0.1}
    assert "sampling" in CONFIG_KEYS and SAMPLING_KEYS == ("temperature", "top_k", "top_p", "min_p", "draft")


def test_an_unknown_sampling_parameter_is_refused_when_read():
    with pytest.raises(ValueError, match="unknown sampling parameters \\['top_a'\\]"):
        Config.from_dict({"draft": "biased", "seed": 1, "sampling": {"top_a": 2}})


def test_the_service_refuses_bad_values_from_the_sdk(service, client):
    with pytest.raises(InvalidInput) as refused:
        client.run(draft="biased", seed=1, sampling={"top_k": 99, "draft": "cooked"})
    assert {e.pointer for e in refused.value.errors} >= {"#/config/sampling/top_k", "#/config/sampling/draft"}


def test_a_session_with_sampling_steps_through_the_worked_example(service, client):
    session = client.session(draft="biased", seed=1, sampling=Sampling(**WORKED))
    proposal = session.draft()
    assert proposal.steps[0].q == (1.0, 0.0, 0.0)  # q': the draft proposes A
    block = session.verify()
    assert block.verification[0].p == tuple(P_PRIME)
    whole = session.run()
    assert whole.to_dict() == client.run(draft="biased", seed=1, sampling=WORKED).to_dict()
    session.sampling = Sampling(**WORKED, draft="raw")  # a new session (SPEC 8)
    assert session.blocks == () and session.position == 0
    assert session.draft().steps[0].q == (0.8, 0.15, 0.05)
    assert session.config.sampling == Sampling(**WORKED, draft="raw")


def test_replay_of_a_sampling_trace(service, client):
    trace = client.run(draft="biased", seed=2, sampling={**WORKED, "draft": "raw"})
    assert client.replay(trace).ok
    changed = trace.to_dict()
    changed["blocks"][0]["verification"][0]["p"] = [0.5, 0.3, 0.2]  # the raw p: not what the service reports
    report = client.replay(Trace.from_dict(changed))
    assert not report.ok
    assert report.divergences[0].path == "blocks[0].verification[0].p[0]"
    assert report.divergences[0].expected == 25 / 34


def test_analyze_with_sampling_gives_alpha_on_the_processed_rows(service, client):
    processed = client.analyze(draft="biased", sampling=Sampling(**WORKED))
    raw = client.analyze(draft="biased", sampling=Sampling(**WORKED, draft="raw"))
    first = {c.context: c for c in processed.contexts}[None]
    assert first.alpha == Fraction(25, 34)
    assert {c.context: c for c in raw.contexts}[None].alpha == Fraction(301, 340)
    assert first.p == tuple(P_PRIME)


def test_a_sampling_that_is_not_an_object_is_malformed():
    with pytest.raises(TypeError):  # the transport turns it into InvalidResponse
        Config.from_dict({"draft": "biased", "seed": 1, "sampling": [0.5]})


@pytest.mark.parametrize("mistake_id", ["sampling-target-left-raw", "sampling-raw-q-in-ratio",
                                        "sampling-top-p-float-test"])
def test_specdec_grade_names_each_sampling_mistake(service, capsys, tmp_path, mistake_id):
    """A trace written with one of SPEC 9's public faults (grading/faulty_sampling.py) fails, and the
    grader's diagnosis names the fault."""
    from specdec_service.engine import parse_config
    from specdec_service.grading import BY_ID, faulty_run

    mistake = BY_ID[mistake_id]
    path = tmp_path / "student.json"
    path.write_text(json.dumps(faulty_run(parse_config({**mistake.example, "seed": 4}), mistake.rules)))
    status, out, _ = specdec(capsys, "grade", str(path), "--json")
    assert status == 1
    report = json.loads(out)[0]["report"]
    assert report["passed"] is False
    assert [(d["id"], d["exact"]) for d in report["diagnosis"]] == [(mistake_id, True)]
