"""The ``specdec`` command's exit statuses (one row of the table in docs/sdk.md and
specdec_client.exits per test case), ``--json`` on every command, and ``--version`` of both
commands. In-process, against the real routes (``responses`` forwarding to the Flask app) or
mocked answers."""

import argparse
import json
import socket
import subprocess
import sys

import pytest
import requests

from specdec_client import cli, exits

from .service_backend import BASE, forward_to_app, run_body, specdec

PROBLEM = "application/problem+json"


pytestmark = pytest.mark.usefixtures("at_mock_url")


def trace_file(tmp_path, altered=False):
    trace = run_body({"draft": "biased", "seed": 1})
    if altered:
        trace["blocks"][0]["verification"][1]["draw"]["u"] = 0.1
    path = tmp_path / ("bad.json" if altered else "good.json")
    path.write_text(json.dumps(trace))
    return str(path)


def test_the_table_has_distinct_statuses():
    table = {name: getattr(exits, name) for name in
             ("OK", "FAILED", "USAGE", "UNREACHABLE", "REFUSED", "SERVICE_ERROR", "TIMED_OUT", "INTERNAL",
              "INTERRUPTED")}
    assert table == {"OK": 0, "FAILED": 1, "USAGE": 2, "UNREACHABLE": 3, "REFUSED": 4, "SERVICE_ERROR": 5,
                     "TIMED_OUT": 6, "INTERNAL": 70, "INTERRUPTED": 130}


# ---------------------------------------------------------------- 0 and 1


def test_0_success(service, capsys, tmp_path):
    assert specdec(capsys, "health")[0] == 0
    assert specdec(capsys, "replay", trace_file(tmp_path))[0] == 0
    assert specdec(capsys, "grade", trace_file(tmp_path))[0] == 0


def test_1_the_check_failed(service, capsys, tmp_path):
    status, out, err = specdec(capsys, "replay", trace_file(tmp_path, altered=True))
    assert (status, err) == (1, "") and "1 divergence" in out
    status, out, err = specdec(capsys, "grade", trace_file(tmp_path, altered=True))
    assert (status, err) == (1, "") and "0/1 passed" in out


# ---------------------------------------------------------------- 2: usage


@pytest.mark.parametrize("argv", [["run", "--seed", "1"], ["draws", "--seed", "-1"], ["nope"],
                                  ["completion", "fish"], ["health", "--timeout", "0"]])
def test_2_argparse_usage_errors(capsys, argv):
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == exits.USAGE
    assert "usage: specdec" in capsys.readouterr().err


def test_2_usage_and_unusable_inputs(service, capsys, tmp_path):
    assert specdec(capsys)[0] == 2  # no command: the commands are listed
    status, _, err = specdec(capsys, "replay", str(tmp_path / "missing.json"))
    assert status == 2 and "No such file or directory" in err
    (tmp_path / "list.json").write_text("[]")
    status, _, err = specdec(capsys, "replay", str(tmp_path / "list.json"))
    assert status == 2 and "a trace is a JSON object, not a list" in err
    status, _, err = specdec(capsys, "health", "--url", "localhost:8000")
    assert status == 2 and "base_url must be an http:// or https:// URL" in err
    status, _, err = specdec(capsys, "grade", trace_file(tmp_path), "--exec", "true")
    assert status == 2 and "not both" in err
    status, _, err = specdec(capsys, "suite", "quick", "--config", "nope")
    assert status == 2 and "no config 'nope'" in err


# ---------------------------------------------------------------- 3: cannot reach the service


def test_3_connection_refused(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    status, out, err = specdec(capsys, "health", "--url", f"http://127.0.0.1:{port}")
    assert (status, out) == (3, "") and "cannot reach the specdec service" in err


def test_6_no_answer_within_the_timeout_is_not_unreachable(rsps, capsys):
    """A slow answer is its own status, with the hint to wait longer (not "start the service")."""
    rsps.get(f"{BASE}/health", body=requests.exceptions.ReadTimeout("read timed out"))
    status, out, err = specdec(capsys, "health", "--timeout", "2")
    assert (status, out) == (6, "")
    assert err == (f"specdec: error: the specdec service at {BASE}/health did not answer within 2 s\n"
                   "specdec: the service may still be working on it: give it more time with --timeout SECONDS "
                   "(this run waited 2 s)\n")


def test_6_analyze_waits_60_s_by_default(rsps, capsys):
    """``specdec analyze`` waits 60 s by default (an exact block analysis may take 10 s on a loaded
    machine); ``--timeout`` still wins."""
    rsps.post(f"{BASE}/v1/analysis", body=requests.exceptions.ReadTimeout("read timed out"))
    status, _, err = specdec(capsys, "analyze", "--draft", "biased", "--mode", "block")
    assert status == 6 and "did not answer within 60 s" in err
    status, _, err = specdec(capsys, "analyze", "--draft", "biased", "--timeout", "5")
    assert status == 6 and "did not answer within 5 s" in err


# ---------------------------------------------------------------- 4: the service refused the request


def test_4_the_service_refused_the_request(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--width", "99")
    assert (status, out) == (4, "") and err.startswith("specdec: error: HTTP 422 ") and "#/config/width" in err
    service.add_callback("GET", f"{BASE}/v1/grade/suites/nope", callback=forward_to_app)
    status, out, err = specdec(capsys, "suite", "nope")
    assert (status, out) == (4, "") and err.startswith("specdec: error: HTTP 404 ")


@pytest.mark.parametrize("code", [400, 409, 413, 415, 429])
def test_4_every_4xx(rsps, capsys, code):
    rsps.get(f"{BASE}/v1/models", status=code, json={"title": "Refused", "status": code}, content_type=PROBLEM)
    status, out, err = specdec(capsys, "models")
    assert (status, out) == (4, "") and err.startswith(f"specdec: error: HTTP {code} Refused")


# ---------------------------------------------------------------- 5: the service failed


@pytest.mark.parametrize("code", [500, 501])
def test_5_a_server_error(rsps, capsys, code):
    rsps.get(f"{BASE}/v1/models", status=code, json={"title": "Broken", "status": code}, content_type=PROBLEM)
    status, out, err = specdec(capsys, "models")
    assert (status, out) == (5, "") and err.startswith(f"specdec: error: HTTP {code} Broken")


def test_5_an_answer_that_is_not_the_api(rsps, capsys):
    rsps.get(f"{BASE}/health", status=200, body="<html>a login page</html>", content_type="text/html")
    status, out, err = specdec(capsys, "health")
    assert (status, out) == (5, "") and err.startswith(f"specdec: error: unexpected answer from {BASE}/health")


# ---------------------------------------------------------------- 70 and 130


@pytest.mark.parametrize("raised, expected", [(RuntimeError("boom"), 70), (KeyboardInterrupt(), 130)])
def test_70_a_bug_and_130_interrupted(monkeypatch, capsys, raised, expected):
    monkeypatch.delenv("SPECDEC_DEBUG", raising=False)

    def handler(args, client):
        raise raised

    monkeypatch.setattr(cli, "cmd_health", handler)
    status, out, err = specdec(capsys, "health")
    assert (status, out) == (expected, "") and err.count("\n") == 1


# ---------------------------------------------------------------- --json everywhere, --version


def subcommands():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_every_command_but_completion_has_json():
    commands = subcommands()
    assert set(commands) >= {"run", "draws", "replay", "models", "health", "analyze", "grade", "suite", "completion"}
    without = [name for name, parser in commands.items()
               if name != "completion" and "--json" not in parser._option_string_actions]
    assert without == []


def test_health_json(service, capsys):
    status, out, err = specdec(capsys, "health", "--json")
    body = json.loads(out)
    assert (status, err) == (0, "") and body["status"] == "ok" and isinstance(body["version"], str)


def test_suite_json(service, capsys):
    status, out, _ = specdec(capsys, "suite", "--json")
    suites = json.loads(out)["suites"]
    assert status == 0 and [s["name"] for s in suites] == ["quick", "standard", "full", "sampling", "block", "tree", "all"]
    assert all(set(s) >= {"name", "description", "count"} for s in suites)

    status, out, _ = specdec(capsys, "suite", "quick", "--json")
    suite = json.loads(out)
    assert status == 0 and suite["name"] == "quick" and len(suite["configs"]) == suites[0]["count"]
    first = suite["configs"][0]

    status, out, _ = specdec(capsys, "suite", "quick", "--config", first["id"], "--json")
    assert status == 0 and json.loads(out) == first["config"]
    status, out, _ = specdec(capsys, "suite", "quick", "--config", first["id"])  # the text form: one line
    assert json.loads(out) == first["config"] and out.count("\n") == 1


@pytest.mark.parametrize("command, name", [("specdec_client", "specdec-client"),
                                           ("specdec_service.cli", "specdec-service")])
def test_version(command, name):
    import specdec_client
    import specdec_service

    version = (specdec_client if name == "specdec-client" else specdec_service).__version__
    code = (f"import sys; from {command.split('.')[0]} import cli; "
            f"sys.argv = ['{name}', '--version']; sys.exit(cli.main())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{name} {version}\n", "")


def test_drafts_outside_mode_tree_is_sent_with_a_warning(service, capsys):
    """``--drafts`` is read only in mode tree (SPEC 11), and the service accepts it in every mode
    (SPEC 12 refuses ``tree`` outside mode tree, not ``drafts``): every command that takes session
    settings sends it as the API would and warns on stderr that the mode ignores it."""
    warning = "specdec: warning: --drafts is read only in mode tree (SPEC 11): mode {} ignores it\n"
    for mode in ("speculative", "greedy", "autoregressive", "block"):
        for command in (["run", "--seed", "1"], ["analyze", "--widths", "2", "--limit", "3"]):
            status, _, err = specdec(capsys, *command, "--draft", "biased", "--mode", mode, "--drafts", "3", "--json")
            assert (status, err) == (0, warning.format(mode))
            sent = json.loads(service.calls[-1].request.body)
            assert sent["config"]["drafts"] == 3 and sent["config"]["mode"] == mode
    status, _, err = specdec(capsys, "run", "--seed", "1", "--draft", "biased", "--drafts", "3", "--json")
    assert (status, err) == (0, warning.format("speculative"))  # the default mode
    status, _, err = specdec(capsys, "run", "--seed", "1", "--draft", "biased", "--mode", "tree", "--drafts", "3")
    assert (status, err) == (0, "")
