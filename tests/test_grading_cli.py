"""``specdec grade``: the table, exit statuses, batches with malformed files, Gradescope results.

The SDK's real ``Client`` talks to the real Flask app through a ``responses`` callback (no network).
"""

import json

import pytest
import responses

from specdec_client.cli import main
from specdec_service.engine import parse_config, run
from specdec_service.grading import BY_ID, CHECKS, faulty_run
from client.service_backend import forward_to_app

BASE = "http://grading.test"


@pytest.fixture
def service():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback("POST", BASE + "/v1/grade", callback=forward_to_app)
        yield mock


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # files are named as given on the command line

    def write(name, value):
        (tmp_path / name).write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
        return name

    mistake = BY_ID["no-bonus"]
    broken = run(parse_config({"draft": "biased", "seed": 2}))
    broken["blocks"][0]["position"] = "zero"
    return {
        "good": write("good.json", run(parse_config({"draft": "biased", "seed": 1}))),
        "good2": write("good2.json", run(parse_config({"draft": "aligned", "seed": 3, "width": 5}))),
        "nobonus": write("nobonus.json", faulty_run(parse_config(mistake.example), mistake.rules)),
        "broken": write("broken.json", broken),
        "notjson": write("notjson.json", "{"),
    }


def test_all_pass_exits_0(service, files, capsys):
    assert main(["grade", files["good"], files["good2"], "--url", BASE]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["FILE", "RESULT", "SCORE"]
    assert [line.split()[1:3] for line in out[1:3]] == [["pass", "1.00"], ["pass", "1.00"]]
    assert out[-1] == "2/2 passed"


def test_failures_and_malformed_files_exit_1_and_are_isolated(service, files, capsys, tmp_path):
    results = tmp_path / "results.json"
    status = main(["grade", files["good"], files["nobonus"], files["broken"], files["notjson"], "--url", BASE,
                   "--gradescope", str(results), "--batch", "10"])
    assert status == 1
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines[1:-1]}
    assert rows["good.json"].split()[1:3] == ["pass", "1.00"]
    assert rows["nobonus.json"].split()[1:3] == ["FAIL", "0.90"]
    assert "#/blocks/0/bonus (bonus)" in rows["nobonus.json"] and rows["nobonus.json"].endswith("no-bonus")
    assert rows["broken.json"].split()[1] == "malformed" and "#/blocks/0/position" in rows["broken.json"]
    assert rows["notjson.json"].split()[1] == "malformed" and "not JSON" in rows["notjson.json"]
    assert lines[-1] == "1/4 passed"

    gradescope = json.loads(results.read_text(encoding="utf-8"))
    tests = gradescope["tests"]
    assert len(tests) == 2 * len(CHECKS) + 2
    for test in tests:
        assert set(test) == {"name", "score", "max_score", "status", "output"}
        assert test["status"] in ("passed", "failed")
    bonus = next(t for t in tests if t["name"] == "nobonus.json: bonus")
    assert bonus["status"] == "failed" and bonus["score"] == 0 and bonus["max_score"] == pytest.approx(1.0)
    assert "SPEC section 4.4" in bonus["output"] and "#/blocks/0/bonus" in bonus["output"]
    assert gradescope["score"] == pytest.approx(10 + 9)
    assert "no-bonus" in gradescope["output"] and "Hint:" in gradescope["output"]


def test_points_scale_the_gradescope_scores(service, files, tmp_path):
    results = tmp_path / "r.json"
    assert main(["grade", files["nobonus"], "--url", BASE, "--gradescope", str(results), "--points", "50"]) == 1
    assert json.loads(results.read_text())["score"] == pytest.approx(45)


def test_json_output(service, files, capsys):
    assert main(["grade", files["good"], "--json", "--url", BASE]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["report"]["passed"] is True and entry["malformed"] is None


def test_unreachable_service_exits_3(files, capsys):
    with responses.RequestsMock():  # no route registered: the request fails
        assert main(["grade", files["good"], "--url", BASE, "--timeout", "1"]) == 3
    assert "specdec: error:" in capsys.readouterr().err


def test_bad_batch_size_is_a_usage_error(files):
    with pytest.raises(SystemExit) as exit_:
        main(["grade", files["good"], "--batch", "0"])
    assert exit_.value.code == 2


def test_gradescope_scores_have_no_float_noise(service, files, tmp_path):
    # 10 checks of 0.3 point: summed as floats they give 5.699999999999998 and 5.999999999999998
    results = tmp_path / "r.json"
    assert main(["grade", files["good"], files["nobonus"], "--url", BASE, "--gradescope", str(results),
                 "--points", "3"]) == 1
    gradescope = json.loads(results.read_text())
    tests = gradescope["tests"]
    assert gradescope["score"] == 5.7
    assert [t["max_score"] for t in tests] == [0.3] * 20
    assert round(sum(t["score"] for t in tests), 6) == gradescope["score"]
    assert round(sum(t["max_score"] for t in tests), 6) == 6.0


def test_points_that_do_not_divide_evenly_still_add_up():
    from specdec_client.grading import Row, gradescope, shares

    assert shares(1, 3) == [333334, 333333, 333333] and shares(3, 10) == [300000] * 10
    assert sum(shares(2.5, 7)) == 2500000
    checks = [{"name": f"c{i}", "rule": "r", "passed": i != 1, "blocks": [], "first_failure": None}
              for i in range(3)]
    result = gradescope([Row("a.json", report={"passed": False, "score": 2 / 3, "checks": checks}),
                         Row("b.json", malformed="not JSON")], points=1)
    assert [(t["score"], t["max_score"]) for t in result["tests"]] == [
        (0.333334, 0.333334), (0.0, 0.333333), (0.333333, 0.333333), (0.0, 1.0)]
    assert result["score"] == 0.666667 == round(sum(t["score"] for t in result["tests"]), 6)


def test_a_batch_over_the_work_budget_is_split_in_halves(service, files, capsys, monkeypatch):
    import dataclasses

    from specdec_service.grading import grader

    # A budget that holds every reference and one failing trace, not two: the batch of four is
    # refused (422 over-budget) and split in halves, one failing trace each.
    traces = [json.loads(open(files[name]).read()) for name in ("nobonus", "good", "good2")]
    configs = [parse_config(t["config"]) for t in traces]
    limit = sum(map(grader.reference_cost, configs)) + grader.trace_cost(configs[0], len(traces[0]["blocks"]))
    monkeypatch.setattr(grader, "GRADE_BUDGET", dataclasses.replace(grader.GRADE_BUDGET, limit=limit))
    names = [files["nobonus"], files["good"], files["nobonus"], files["good2"]]
    assert main(["grade", *names, "--url", BASE, "--batch", "4"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in out[1:5]] == ["FAIL", "pass", "FAIL", "pass"]
    assert out[-1] == "2/4 passed"
    sizes = [len(json.loads(call.request.body)["traces"]) for call in service.calls]
    assert sizes == [4, 2, 2]  # the four together cost two failing traces: halves of one each


@pytest.mark.parametrize("text, kind", [("[1, 2]", "a list"), ("[[1, 2]]", "a list"), ('"str"', "a string"),
                                        ("null", "null"), ("5", "a number"), ('{"ratio": NaN}', None)])
def test_a_file_that_is_not_a_trace_object_is_one_malformed_row(service, files, capsys, tmp_path, text, kind):
    """Not a crash of the whole command: the file is a malformed row, the others are graded."""
    (tmp_path / "odd.json").write_text(text, encoding="utf-8")
    assert main(["grade", "odd.json", files["good"], "--url", BASE]) == 1
    out = capsys.readouterr().out.splitlines()
    odd = next(line for line in out if line.startswith("odd.json"))
    assert "malformed" in odd
    assert (f"a trace is a JSON object, not {kind}" if kind else "NaN is not a JSON number") in odd
    assert next(line for line in out if line.startswith(files["good"])).split()[1] == "pass"
    assert out[-1] == "1/2 passed"


def test_a_batch_over_the_body_size_is_split_in_halves(service, files, capsys, monkeypatch):
    """A 413 (the batch's body over the grading routes' size limit) splits the batch as an
    over-budget one does; a single trace still too large is a malformed row."""
    from specdec_service.api import grading as grading_api

    one = len(open(files["good"], "rb").read())
    monkeypatch.setattr(grading_api, "GRADE_MAX_BODY_BYTES", 2 * one + 200)  # two traces fit, not three
    names = [files["good"], files["good"], files["good"], files["good"]]
    assert main(["grade", *names, "--url", BASE, "--batch", "4"]) == 0
    sizes = [len(json.loads(call.request.body)["traces"]) for call in service.calls]
    assert sizes == [4, 2, 2]
    monkeypatch.setattr(grading_api, "GRADE_MAX_BODY_BYTES", 100)
    assert main(["grade", files["good"], "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert "too large for the service" in out
