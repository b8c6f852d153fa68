"""Sample grading from the SDK and the CLI covers modes block and tree and configs with
``sampling`` (issue 20 with issues 23 and SPEC 9/10/11): the function receives ``mode``,
``drafts`` and ``sampling`` when it takes them, a function that cannot receive a config's mode
fails that config with a sentence, ``--config`` grades any config, and a planted tree mistake
whose law differs from the target's is named. Fixed seeds, N = 2000, alpha 0.001."""

import json
import sys
from pathlib import Path

import pytest
from specdec_client import Client
from specdec_client.cli import main
from specdec_client.sampler_grading import sample_configs, sampler_arguments

from test_grading_samples_cli import BASE, service  # noqa: F401  (the fixture)

STUDENTS = Path(__file__).resolve().parent / "students"
MODES = STUDENTS / "modes_sampler.py"
PROGRAM = f"{sys.executable} {MODES}"
N = "2000"
SAMPLING = {"temperature": 0.5, "top_k": 2}
TREE = {"target": "toy", "draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "limit": 8, "eos": None}
BLOCK = {"target": "toy", "draft": "biased", "mode": "block", "width": 2, "limit": 8, "eos": None}


def old_style(target, draft, width, limit, eos, rng):
    return []


def new_style(target, draft, width, limit, eos, rng, mode="speculative", drafts=1, sampling=None):
    return []


def any_keywords(target, draft, rng, **settings):
    return []


def test_the_function_receives_mode_drafts_and_sampling_only_when_it_takes_them():
    config = {**TREE, "drafts": 3, "sampling": SAMPLING}
    assert sampler_arguments(new_style, config) == (
        {"width": 2, "limit": 8, "eos": None, "mode": "tree", "drafts": 3, "sampling": SAMPLING}, None)
    assert sampler_arguments(any_keywords, config)[0] == {**sampler_arguments(new_style, config)[0], "tree": None}
    assert sampler_arguments(old_style, {**TREE, "mode": "speculative", "width": 3}) == (
        {"width": 3, "limit": 8, "eos": None}, None)
    assert sampler_arguments(new_style, {"mode": "autoregressive", "limit": 2})[0] == {
        "width": 0, "limit": 2, "eos": None, "mode": "autoregressive", "drafts": 1, "sampling": None}


@pytest.mark.parametrize("config, missing", [(TREE, "'mode' or 'drafts'"), (BLOCK, "'mode'"),
                                             ({**BLOCK, "mode": "speculative", "sampling": SAMPLING}, "'sampling'")])
def test_a_config_the_function_cannot_receive_fails_with_a_sentence(config, missing):
    _, problem = sampler_arguments(old_style, config)
    assert problem is not None and f"takes no {missing} parameter" in problem
    assert f"mode {config['mode']!r}" in problem and "not graded as another mode" in problem
    hint = "grade only the modes it implements: --modes speculative,autoregressive"
    assert (hint in problem) == ("mode" in missing)  # not for sampling parameters: --modes keeps them


def test_a_correct_function_for_every_mode_passes_the_all_suite(service):  # noqa: F811
    """``all@1`` (SPEC 1-11: the modes this sampler implements; ``all@2`` adds SPEC 12 trees) has sample
    configs of modes block and tree (with drafts 3) and sampling
    parameters."""
    sys.path.insert(0, str(STUDENTS))
    import modes_sampler
    import sampler

    modes_sampler.MISTAKE = ""
    client = Client(BASE)
    configs = sample_configs(client, "all@1")
    assert {c["mode"] for _, c in configs} == {"speculative", "autoregressive", "block", "tree"}
    assert any(c.get("sampling") for _, c in configs)
    tests = client.grade_sampler(modes_sampler.decode, suite="all@1", samples=int(N))
    assert [(t.id, t.passed) for t in tests] == [(i, True) for i, _ in configs], [t.message() for t in tests]
    # a function without the extra parameters: its block and tree configs fail with the reason, the others pass
    old = client.grade_sampler(sampler.speculative_decode, suite="all@1", samples=500)
    for test in old:
        if test.config["mode"] in ("block", "tree"):
            assert not test.passed and "takes no 'mode'" in (test.problem or "") and test.samples == []
        elif test.config.get("sampling"):  # the suite's config with sampling parameters
            assert not test.passed and "takes no 'sampling'" in (test.problem or "")
        else:
            assert test.passed, test.message()


@pytest.mark.parametrize("config", [TREE, {**TREE, "drafts": 3, "sampling": SAMPLING}, {**BLOCK, "sampling": SAMPLING},
                                    {**BLOCK, "sampling": {**SAMPLING, "draft": "raw"}}])
def test_any_config_by_the_command_line_python_and_exec(service, capsys, config):  # noqa: F811
    text = json.dumps(config)
    for how in (["--python", f"{MODES}:decode"], ["--exec", PROGRAM]):
        assert main(["grade", *how, "--samples", N, "--config", text, "--json", "--url", BASE]) == 0
        [test] = json.loads(capsys.readouterr().out)
        assert test["passed"] and test["samples"] == 2000 and test["config"] == config


@pytest.mark.parametrize("how", ["python", "exec"])
def test_a_planted_tree_mistake_is_named(service, capsys, monkeypatch, tmp_path, how):  # noqa: F811
    """Every candidate tested against p (the residual not updated after a rejected sibling):
    its law differs from the target's, and the grader names it (toy/biased, width 2, drafts 2)."""
    monkeypatch.setenv("SAMPLER_MISTAKE", "tree-residual-not-updated")
    config = tmp_path / "tree.json"
    config.write_text(json.dumps(TREE))
    args = ["--python", f"{MODES}:decode"] if how == "python" else ["--exec", PROGRAM]
    assert main(["grade", *args, "--samples", N, "--config", f"@{config}", "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "tree-residual-not-updated" in out and "0/1 configs passed" in out
    assert "[tree-residual-not-updated]" in out and "Evidence: ln L(mistake) - ln L(target) = " in out


def test_the_exec_program_reads_mode_drafts_and_sampling_from_the_whole_config(service, capsys):  # noqa: F811
    """--exec sends the suite's config unchanged: the tree configs carry ``drafts``."""
    assert main(["grade", "--exec", PROGRAM, "--samples", "500", "--suite", "all@1", "--json", "--url", BASE]) == 0
    tests = json.loads(capsys.readouterr().out)
    trees = [t for t in tests if t["config"]["mode"] == "tree"]
    assert trees and all(t["config"]["drafts"] == 3 and t["passed"] for t in trees)
    assert any(t["config"]["mode"] == "block" and t["passed"] for t in tests)


def test_modes_keeps_only_the_configs_a_speculative_exercise_implements(service, capsys):  # noqa: F811
    """A sampler of SPEC 4 alone (tests/students/sampler.py, no ``mode`` parameter) passes the
    suite's speculative and autoregressive configs with ``--modes``; a mode outside the four, or
    none left, is a usage error (exit 2)."""
    sampler = f"{STUDENTS / 'sampler.py'}:speculative_decode"
    assert main(["grade", "--python", sampler, "--samples", "500", "--modes", "speculative,autoregressive", "--json",
                 "--suite", "all@1", "--url", BASE]) == 1  # the SPEC 4 sampler takes no sampling: all's SPEC 9 config fails
    tests = json.loads(capsys.readouterr().out)
    assert sorted({t["config"]["mode"] for t in tests}) == ["autoregressive", "speculative"]
    assert len(tests) == sum(c["mode"] in ("speculative", "autoregressive") for _, c in sample_configs(Client(BASE), "all@1"))
    assert [t["passed"] for t in tests] == [not t["config"].get("sampling") for t in tests]
    assert len(tests) >= 3
    assert main(["grade", "--python", sampler, "--samples", "500", "--modes", "greedy", "--url", BASE]) == 2
    assert "modes must be among speculative, autoregressive, block, tree, not greedy" in capsys.readouterr().err
    assert main(["grade", "--exec", PROGRAM, "--samples", "500", "--modes", "tree", "--config", json.dumps(BLOCK),
                 "--url", BASE]) == 2
    assert "no config of mode tree to grade" in capsys.readouterr().err
