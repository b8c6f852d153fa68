"""Shell completion of ``specdec`` (argcomplete, the ``cli`` extra): ``specdec completion
bash|zsh`` prints the script, the command answers argcomplete's protocol (environment
``_ARGCOMPLETE``, ``COMP_LINE``, ``COMP_POINT``; answers written to
``_ARGCOMPLETE_STDOUT_FILENAME``), and bash completes through the printed script. Without
argcomplete the subcommand says what to install."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_client import cli

argcomplete = pytest.importorskip("argcomplete")
SPECDEC = Path(sys.executable).with_name("specdec")
COMMANDS = {"run", "draws", "replay", "models", "health", "analyze", "grade", "suite", "completion"}


def complete(line, tmp_path, shell="bash"):
    """The completions ``specdec`` answers for the command line ``line`` (cursor at its end)."""
    out = tmp_path / "completions"
    env = {**os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": shell, "COMP_LINE": line,
           "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(out), "_ARGCOMPLETE_IFS": "\n"}
    result = subprocess.run([str(SPECDEC)], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [c.strip() for c in out.read_text().split("\n") if c]


@pytest.mark.parametrize("shell, marks", [("bash", ["complete -o nospace", "_python_argcomplete specdec"]),
                                          ("zsh", ["compdef _python_argcomplete specdec"])])
def test_completion_prints_the_shells_script(capsys, shell, marks):
    assert cli.main(["completion", shell]) == 0
    script, err = capsys.readouterr()
    assert err == "" and all(mark in script for mark in marks)


def test_completion_without_argcomplete_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "argcomplete", None)
    assert cli.main(["completion", "bash"]) == 2
    assert capsys.readouterr() == ("", "specdec: error: shell completion needs argcomplete: "
                                       "pip install './client[cli]' (from the repository's root)\n")


needs_script = pytest.mark.skipif(not SPECDEC.exists(), reason="the specdec console script is not installed")


@needs_script
def test_the_protocol_completes_commands_options_and_choices(tmp_path):
    assert set(complete("specdec ", tmp_path)) >= COMMANDS | {"--url", "--version"}
    assert complete("specdec he", tmp_path) == ["health"]
    assert complete("specdec run --mo", tmp_path) == ["--mode"]
    assert complete("specdec run --mode ", tmp_path) == ["speculative", "greedy", "autoregressive", "block", "tree"]
    assert complete("specdec completion ", tmp_path)[-2:] == ["bash", "zsh"]
    assert "--json" in complete("specdec health --", tmp_path)
    # zsh is answered "word:description" pairs
    answer, = complete("specdec he", tmp_path, shell="zsh")
    assert answer.split(":")[0].strip() == "health"


@needs_script
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_through_the_printed_script(tmp_path):
    line = "specdec run --mode g"
    script = (f'source <("{SPECDEC}" completion bash); COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; '
              '_python_argcomplete specdec; printf "%s\\n" "${COMPREPLY[@]}"')
    env = {**os.environ, "PATH": f"{SPECDEC.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n")[0].strip() == "greedy", result.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_the_zsh_script_parses(tmp_path):
    script = tmp_path / "_specdec"
    script.write_text(argcomplete.shellcode(["specdec"], shell="zsh"))
    result = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@needs_script
def test_built_in_models_and_suites_complete(tmp_path):
    from specdec_service.engine.models import BUILTIN_DRAFTS, BUILTIN_TARGETS
    from specdec_service.grading.suites import suites

    assert complete("specdec run --draft ", tmp_path) == sorted(BUILTIN_DRAFTS)
    assert complete("specdec analyze --draft biased --target ", tmp_path) == sorted(BUILTIN_TARGETS)
    assert complete("specdec grade --exec x --suite ", tmp_path) == list(suites())
    assert complete("specdec suite st", tmp_path) == ["standard"]
