"""specdec_client.cli: the `specdec` command, called in-process against the
real routes (``responses`` forwarding to the real Flask app); the
integration tests run it as a subprocess against gunicorn."""

import json
import socket
import subprocess
import sys

import pytest

from specdec_client import cli

from .service_backend import BASE, calls_to, run_body, specdec


pytestmark = pytest.mark.usefixtures("at_mock_url")


def test_run_prints_every_block(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "specdec run  target toy · draft biased · mode speculative · width 3 · seed 1 · limit 8"
    assert "  correction  after A: A 0.0000  B 0.7500  C 0.2500  u 0.7629 (pos 5) → C" in lines
    assert [line for line in lines if line.startswith("Block")] == [
        "Block 1   prefix ∅   position 0", "Block 2   prefix A C   position 6",
        "Block 3   prefix A C B A B   position 13", "Block 4   prefix A C B A B A B   position 19"]
    assert "  output      A C B A B A B B   (8 tokens)" in lines
    assert "\033[" not in out  # not a terminal: no colour
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)
    assert sent == {"config": {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "seed": 1,
                               "limit": 8, "eos": None}}


def test_run_json_prints_the_trace(service, capsys, tmp_path):
    saved = tmp_path / "t.json"
    status, out, _ = specdec(capsys, "run", "--draft", "aligned", "--seed", "2", "--width", "4", "--limit", "6",
                             "--mode", "speculative", "--json", "--save", str(saved))
    expected = run_body({"draft": "aligned", "seed": 2, "width": 4, "limit": 6})
    assert status == 0 and json.loads(out) == expected
    assert json.loads(saved.read_text()) == expected


def test_run_with_an_invalid_setting_is_one_line(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--width", "99")
    assert (status, out) == (4, "")  # the service refused the request (HTTP 4xx)
    assert err.count("\n") == 1 and err.startswith("specdec: error: HTTP 422 Invalid input: ")
    assert "#/config/width" in err


def test_url_option_beats_the_environment(service, capsys, monkeypatch):
    monkeypatch.setenv("SPECDEC_URL", "http://elsewhere.invalid")
    assert specdec(capsys, "models", "--url", BASE)[0] == 0
    assert specdec(capsys, "--url", BASE, "health")[1].startswith("ok  version ")


def test_draws(service, capsys):
    status, out, _ = specdec(capsys, "draws", "--seed", "1", "--count", "4")
    assert status == 0
    assert [line.split() for line in out.splitlines()] == [
        ["position", "u", "hex"], ["0", "0.5665615751722809", "910a2dec89025cc1"],
        ["1", "0.7457817572627011", "beeb8da1658eec67"], ["2", "0.9710027535867962", "f893a2eefb32555e"],
        ["3", "0.4443592170557721", "71c18690ee42c90b"]]  # SPEC section 2 test vector
    status, out, _ = specdec(capsys, "draws", "--seed", "0", "--position", "2", "--count", "2", "--json")
    assert [d["u"] for d in json.loads(out)["draws"]] == [0.026433771592597743, 0.9708819781538285]


def test_models(service, capsys):
    status, out, _ = specdec(capsys, "models")
    assert status == 0
    assert "biased  (draft)   vocab A B C" in out
    assert "  after B  A 0.5500  B 0.1500  C 0.3000" in out
    status, out, _ = specdec(capsys, "models", "--json")
    assert [m["name"] for m in json.loads(out)["models"]] == ["toy", "aligned", "biased"]


def test_replay_exit_statuses(service, capsys, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(run_body({"draft": "biased", "seed": 1})))
    status, out, _ = specdec(capsys, "replay", str(good))
    assert (status, out) == (0, "replay: 4 blocks replayed, every field matches the service\n")

    bad = tmp_path / "bad.json"
    trace = run_body({"draft": "biased", "seed": 1})
    trace["blocks"][0]["verification"][1]["draw"]["u"] = 0.1
    bad.write_text(json.dumps(trace))
    status, out, _ = specdec(capsys, "replay", str(bad))
    assert status == 1
    assert out.splitlines() == ["replay: 4 blocks replayed, 1 divergence",
                                "  blocks[0].verification[1].draw.u: the trace has 0.1, the service gives 0.44426470082635805"]
    status, out, _ = specdec(capsys, "replay", str(bad), "--json")
    assert status == 1 and json.loads(out)["divergences"] == [
        {"block": 0, "path": "blocks[0].verification[1].draw.u", "expected": 0.44426470082635805, "got": 0.1}]


def test_replay_usage_errors_exit_2(service, capsys, tmp_path):
    status, _, err = specdec(capsys, "replay", str(tmp_path / "missing.json"))
    assert status == 2 and err == f"specdec: error: {tmp_path / 'missing.json'}: No such file or directory\n"
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    status, _, err = specdec(capsys, "replay", str(junk))
    assert status == 2 and err.startswith("specdec: error: ") and "not a specdec-trace/1 trace" in err
    with pytest.raises(SystemExit) as info:
        specdec(capsys, "replay")
    assert info.value.code == 2


def test_a_connection_failure_is_one_line(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    status, out, err = specdec(capsys, "models", "--url", f"http://127.0.0.1:{port}")
    assert (status, out) == (3, "")  # the service cannot be reached
    assert err == (f"specdec: error: cannot reach the specdec service at http://127.0.0.1:{port}/v1/models: "
                   "Connection refused (after 3 retries)\n"
                   "specdec: start the service (specdec-service serve) or point --url / SPECDEC_URL at it\n")


def test_a_bad_url_is_one_line(capsys):
    status, _, err = specdec(capsys, "health", "--url", "localhost:8000")
    assert status == 2 and err == "specdec: error: base_url must be an http:// or https:// URL, got 'localhost:8000'\n"


def test_no_command_prints_the_commands(capsys):
    status, out, err = specdec(capsys)
    assert (status, out) == (2, "")
    assert err.startswith("usage: specdec ")
    listed = [line.split()[0] for line in err.split("positional arguments:")[1].split("options:")[0].splitlines()[2:]
              if line.startswith("    ") and not line.startswith("     " * 2)]
    assert {"run", "draws", "replay", "models", "health", "grade"} <= set(listed)
    assert err == cli.build_parser().format_help()
    status, _, err2 = specdec(capsys, "--url", BASE)  # options but still no command
    assert (status, err2) == (2, err)


def test_grade_of_a_missing_file_says_it_is_missing(service, capsys, tmp_path):
    status, out, err = specdec(capsys, "grade", str(tmp_path / "missing.json"))
    assert (status, out) == (2, "")
    assert err == f"specdec: error: {tmp_path / 'missing.json'}: No such file or directory\n"


def test_usage_errors_exit_2(capsys):
    for argv in (["run", "--seed", "1"], ["run", "--draft", "biased", "--seed", "-1"],
                 ["draws", "--seed", "x"], ["frobnicate"]):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2
    capsys.readouterr()


def test_extensions_are_loaded_when_present(monkeypatch):
    import types
    module = types.ModuleType("specdec_ext_test")

    def add_parser(subparsers):
        p = subparsers.add_parser("hello")
        p.set_defaults(handler=lambda args, client: 7)
        return p

    module.add_parser = add_parser
    monkeypatch.setitem(sys.modules, "specdec_ext_test", module)
    monkeypatch.setattr(cli, "EXTENSIONS", ("specdec_ext_test", "specdec_not_installed_module"))
    assert cli.main(["hello"]) == 7


def test_a_bug_is_still_one_line_unless_debugging(monkeypatch, capsys):
    import types
    module = types.ModuleType("specdec_ext_bug")

    def broken(args, client):
        raise RuntimeError("boom")

    module.add_parser = lambda sub: sub.add_parser("boom").set_defaults(handler=broken)
    monkeypatch.setitem(sys.modules, "specdec_ext_bug", module)
    monkeypatch.setattr(cli, "EXTENSIONS", ("specdec_ext_bug",))
    monkeypatch.delenv("SPECDEC_DEBUG", raising=False)
    assert cli.main(["boom"]) == 70  # EX_SOFTWARE
    assert capsys.readouterr().err == (
        "specdec: error: internal error: RuntimeError: boom (set SPECDEC_DEBUG=1 for the traceback)\n")
    monkeypatch.setenv("SPECDEC_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["boom"])


def test_the_package_imports_without_flask_or_the_service():
    """The SDK must install and run where neither Flask nor specdec_service
    exists: import every module with both made unimportable."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('flask', 'specdec_service', 'werkzeug', 'marshmallow'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import specdec_client, specdec_client.cli, specdec_client.traces, specdec_client.render\n"
        "import specdec_client.session, specdec_client.types, specdec_client.errors\n"
        "assert not [m for m in sys.modules if m.startswith(('flask', 'specdec_service'))]\n"
        "sys.argv = ['specdec', '--help']\n"
        "specdec_client.cli.main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: specdec" in result.stdout and "replay" in result.stdout


CUSTOM_TARGET = {"vocab": ["the", "cat", "sat", "<eos>"], "start": [0.7, 0.2, 0.1, 0],
                 "next": {"the": [0, 0.8, 0.1, 0.1], "cat": [0.1, 0, 0.7, 0.2], "sat": [0.3, 0, 0, 0.7],
                          "<eos>": [0.25, 0.25, 0.25, 0.25]}}
CUSTOM_DRAFT = {"vocab": ["the", "cat", "sat", "<eos>"], "start": [0.4, 0.3, 0.2, 0.1],
                "next": {"the": [0.1, 0.5, 0.3, 0.1], "cat": [0.25, 0.25, 0.25, 0.25],
                         "sat": [0.25, 0.25, 0.25, 0.25], "<eos>": [0.25, 0.25, 0.25, 0.25]}}


def test_run_with_custom_models_from_files(service, capsys, tmp_path):
    (tmp_path / "t.json").write_text(json.dumps(CUSTOM_TARGET))
    (tmp_path / "d.json").write_text(json.dumps(CUSTOM_DRAFT))
    status, out, _ = specdec(capsys, "run", "--target", f"@{tmp_path / 't.json'}", "--draft",
                             f"@{tmp_path / 'd.json'}", "--seed", "3", "--eos", "<eos>", "--limit", "10")
    assert status == 0
    # residual after "sat": max(p - q, 0) = (0.05, 0, 0, 0.45) / 0.5 (SPEC section 4.3)
    assert ("  correction  after sat: the 0.1000  cat 0.0000  sat 0.0000  <eos> 0.9000  u 0.1351 (pos 6) → <eos>"
            in out.splitlines())
    assert "Session   done (eos) after 1 block, position 7" in out
    assert not calls_to(service, "/v1/models")  # a custom vocabulary needs no lookup
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)["config"]
    assert sent["target"] == CUSTOM_TARGET and sent["draft"] == CUSTOM_DRAFT


def test_a_model_file_that_is_not_json(service, capsys, tmp_path):
    (tmp_path / "bad.json").write_text("{")
    status, _, err = specdec(capsys, "run", "--draft", f"@{tmp_path / 'bad.json'}", "--seed", "1")
    assert status == 2 and err.startswith(f"specdec: error: {tmp_path / 'bad.json'}: not JSON")


@pytest.fixture
def not_specdec():
    """A real HTTP server that is not specdec: ``http.server`` answers every request 501 with
    its multi-line HTML error page."""
    import http.server
    import threading

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command, route", [(["run", "--draft", "biased", "--seed", "1"], "/v1/runs"),
                                            (["replay", "TRACE"], "/v1/step"),
                                            (["grade", "TRACE"], "/v1/grade")])
def test_a_server_that_is_not_specdec_is_one_line(not_specdec, capsys, tmp_path, command, route):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(run_body({"draft": "biased", "seed": 1})))
    argv = [str(trace) if a == "TRACE" else a for a in command]
    status, out, err = specdec(capsys, *argv, "--url", not_specdec)
    assert (status, out) == (5, "")  # an HTTP 5xx answer
    # status, reason phrase, the page's text without its tags (100 characters at most), the URL
    assert err == ("specdec: error: HTTP 501 Not Implemented: Error response Error code: 501 Message: "
                   "Unsupported method ('POST'). Error code explanation: 501... "
                   f"(POST {not_specdec}{route})\n")


def test_run_mode_block_shows_weights_thresholds_and_tau(service, capsys):
    """SPEC 10's worked example: A fails its own threshold (eta 0.8591 >= 4/9) but B passes h_2 = 1,
    so tau = 2 and A B are committed with the bonus A."""
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "4", "--width", "2", "--mode", "block")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "specdec run  target toy · draft biased · mode block · width 2 · seed 4 · limit 8"
    verify = [line for line in lines if "(eta " in line]
    # A's own eta fails: no check mark beside a failing condition, but why A is kept
    assert verify[0].endswith("kept:  a later eta passes (eta ≥ h 4/9, w 5/8)") and "✓" not in verify[0]
    assert verify[1].endswith("(eta < h 1, w 1)") and "✓ accept" in verify[1]
    assert "  tau         2: the last i with eta_i < h_i (SPEC 10), d_1..d_tau committed" in lines
    assert "  committed   A B A" in lines
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)
    assert sent["config"]["mode"] == "block"
