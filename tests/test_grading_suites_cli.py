"""Suites per assignment from the command line and the SDK: versions (``NAME@N``), ``--modes``
for trace grading as for sample grading, seeds that do not depend on ``--modes``, ``--gradescope``
checked before anything runs, readable errors for unreadable files, the P-RAW / P-HOLM columns,
``grade_distribution`` without a seed, progress per batch of samples; and every command and
config id the docs name exists (docs/grading.md, README.md). The SDK's real ``Client`` talks to
the real Flask app through a ``responses`` callback (no network)."""

import json
import random
import re
import shlex
import sys
from pathlib import Path

import pytest
import responses

from specdec_client import Client
from specdec_client.cli import build_parser, main
from specdec_service.engine import parse_config, run
from specdec_service.grading.suites import published, suite
from client.service_backend import forward_to_app

ROOT = Path(__file__).resolve().parents[1]
BASE = "http://suites.test"
STUDENT = f"{sys.executable} {ROOT / 'tests' / 'students' / 'student.py'}"
TOY = {"target": "toy", "draft": "biased", "limit": 8}
TOY_ROWS = {None: [0.5, 0.3, 0.2], "A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}


@pytest.fixture
def service():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for method in ("GET", "POST"):
            mock.add_callback(method, re.compile(re.escape(BASE) + r"/.*"), callback=forward_to_app)
        yield mock


def toy_session(rng: random.Random, limit: int = 8) -> list[str]:
    """A session of the toy target sampled directly (its law is the target's)."""
    out: list[str] = []
    while len(out) < limit:
        out.append(rng.choices("ABC", TOY_ROWS[out[-1] if out else None])[0])
    return out


def target_sampler(target, draft, width, limit, eos, rng, mode="speculative", drafts=1, sampling=None):
    """A sampler of any mode that samples the target directly (the output law every mode must have)."""
    out: list[str] = []
    while len(out) < limit and (not out or out[-1] != eos):
        row = target(out)
        out.append(rng.choices(target.vocab, row)[0])
    return out


# ---------------------------------------------------------------- versions


def test_a_suite_version_is_served_and_named_in_the_run_it_alone_line(service, capsys):
    assert main(["suite", "standard@1", "--config", "eos-speculative-w2-s2-l6", "--url", BASE]) == 0
    assert json.loads(capsys.readouterr().out) == next(c.config for c in suite("standard@1").configs
                                                       if c.id == "eos-speculative-w2-s2-l6")
    assert main(["suite", "standard@7", "--url", BASE]) == 4
    assert "no version '7' of the standard suite: its versions are standard@1, standard@2, standard@3" \
        in capsys.readouterr().err
    assert main(["grade", "--exec", f"{STUDENT} --plant no-bonus", "--suite", "quick", "--url", BASE]) == 1
    out = capsys.readouterr().out
    assert f"Run it alone: specdec suite quick@3 --config toy-biased-speculative-w2-s2-l8 | {STUDENT} --plant no-bonus" in out


def test_the_suite_listing_names_versions_and_families(service, capsys):
    assert main(["suite", "--json", "--url", BASE]) == 0
    listed = {s["name"]: s for s in json.loads(capsys.readouterr().out)["suites"]}
    assert list(listed) == ["quick", "standard", "full", "sampling", "block", "tree", "all"]
    assert listed["standard"]["version"] == 3 and listed["standard"]["versions"] == [1, 2, 3]
    assert listed["standard"]["covers"] == ["core"] and listed["all"]["covers"] == ["core", "sampling", "block", "tree"]
    with Client(BASE) as client:
        assert client.suite("tree@1").pinned == "tree@1" and client.suite("tree").covers == ("tree",)


# ---------------------------------------------------------------- --modes for traces


def test_modes_keep_the_suites_configs_of_those_modes_for_a_program(service, capsys):
    # all@1: the SPEC 1-11 assignment this student program implements (all@2 adds SPEC 12 trees)
    assert main(["grade", "--exec", STUDENT, "--suite", "all@1", "--modes", "greedy,block", "--json", "--url", BASE]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == [c.id for c in suite("all@1").configs if c.config["mode"] in ("greedy", "block")]
    assert len(rows) == 4 and all(r["passed"] for r in rows)
    assert main(["grade", "--exec", STUDENT, "--modes", "tree", "--url", BASE]) == 2  # standard has no tree config
    assert "no config of mode tree to grade" in capsys.readouterr().err
    assert main(["grade", "--exec", STUDENT, "--modes", "beam", "--url", BASE]) == 2
    assert "modes must be among speculative, greedy, autoregressive, block, tree, not beam" in capsys.readouterr().err


def test_modes_keep_the_trace_files_of_those_modes(service, tmp_path, capsys):
    files = []
    for mode in ("speculative", "greedy", "block"):
        path = tmp_path / f"{mode}.json"
        path.write_text(json.dumps(run(parse_config({"draft": "biased", "seed": 1, "mode": mode}))))
        files.append(str(path))
    (tmp_path / "junk.json").write_text("not json")
    files.append(str(tmp_path / "junk.json"))
    assert main(["grade", *files, "--modes", "speculative,block", "--url", BASE]) == 1  # the junk file fails
    out = capsys.readouterr().out
    graded = [line.split()[0] for line in out.splitlines()[1:] if line.endswith(".json") or ".json " in line]
    assert [Path(g).name for g in graded] == ["speculative.json", "block.json", "junk.json"]
    assert "2/3 passed" in out and "1 file(s) of other modes left out (--modes speculative,block)" in out
    assert main(["grade", files[0], "--modes", "tree", "--url", BASE]) == 2
    assert "no trace file of mode tree to grade" in capsys.readouterr().err


# ---------------------------------------------------------------- seeds, --suite for samples


def test_a_configs_seed_does_not_depend_on_modes(service):
    with Client(BASE) as client:
        every = client.grade_sampler(target_sampler, suite="all@1", samples=20)
        blocks = client.grade_sampler(target_sampler, suite="all@1", samples=20, modes=["block", "tree"])
    seeds = {t.id: t.seed for t in every}
    assert [t.id for t in every] == [i for i, _ in _sample_ids("all@1")]
    assert len(blocks) == 4 and {t.id: t.seed for t in blocks} == {t.id: seeds[t.id] for t in blocks}
    assert sorted(seeds.values()) == list(range(len(seeds)))  # seed + the place among the suite's sample configs
    # the function saw exactly those seeds: its samples are the same with and without the filter
    assert all(t.samples == next(e for e in every if e.id == t.id).samples for t in blocks)


def _sample_ids(name):
    seen = {}
    for c in suite(name).configs:
        if c.config["mode"] != "greedy":
            seen.setdefault(json.dumps({k: v for k, v in c.config.items() if k != "seed"}, sort_keys=True), c.id)
    return [(i, None) for i in seen.values()]


def test_suite_works_for_sample_grading_sampling_configs_included(service, capsys):
    from specdec_client.sampler_grading import sample_configs

    with Client(BASE) as client:
        configs = sample_configs(client, "sampling")
    assert [i for i, _ in configs] == ["toy-biased-speculative-w2-s0-l8-p0.8"] and configs[0][1]["sampling"] == {"top_p": 0.8}
    with Client(BASE) as client:
        assert [i for i, _ in sample_configs(client, "block@1")] == ["flat-block-w3-s21-l8", "flat-block-w4-s12-l8"]


# ---------------------------------------------------------------- --gradescope, unreadable files


GRADESCOPE_PATHS = {
    "a directory": (lambda tmp: tmp, "is a directory; give the results file's path"),
    "a missing directory": (lambda tmp: tmp / "no" / "results.json", "no does not exist"),
    "a file as directory": (lambda tmp: tmp / "file" / "results.json", "file is not a directory"),
    "a read-only file system": (lambda tmp: "/sys/results.json", "cannot be written"),
    "a file the kernel refuses": (lambda tmp: "/proc/version", "cannot be written"),
}


@pytest.mark.parametrize("where", list(GRADESCOPE_PATHS))
def test_gradescope_path_is_checked_before_anything_runs(service, tmp_path, capsys, where):
    """Every kind of path the results cannot be written to is a usage error naming it, before any
    program runs, for trace and sample grading alike (root included: the file is opened, not
    judged by its permission bits)."""
    (tmp_path / "file").write_text("")
    marker = tmp_path / "ran"
    make, says = GRADESCOPE_PATHS[where]
    path = str(make(tmp_path))
    command = f"touch {marker}; {STUDENT}"
    for extra in (["--exec", command], ["--exec", command, "--samples", "10"]):
        assert main(["grade", *extra, "--suite", "quick", "--gradescope", path, "--url", BASE]) == 2
        err = capsys.readouterr().err
        assert f"--gradescope {path}" in err and says in err, err
        assert not marker.exists()  # nothing ran


def test_a_writable_gradescope_path_is_not_left_behind_by_the_check(tmp_path):
    from specdec_client.grading import gradescope_problem

    path = tmp_path / "results.json"
    assert gradescope_problem(str(path)) is None and not path.exists()
    path.write_text("kept")
    assert gradescope_problem(str(path)) is None and path.read_text() == "kept"


def test_unreadable_files_are_told_in_words(service, tmp_path, capsys):
    assert main(["grade", "--samples-from", str(tmp_path / "nofile"), "--config", json.dumps(TOY), "--url", BASE]) == 2
    err = capsys.readouterr().err
    assert f"--samples-from {tmp_path / 'nofile'}: there is no such file" in err and "Errno" not in err
    assert main(["grade", "--samples-from", str(tmp_path), "--config", json.dumps(TOY), "--url", BASE]) == 2
    assert "it is a directory, not a file" in capsys.readouterr().err
    (tmp_path / "s.jsonl").write_text('["A"]\n')
    assert main(["grade", "--samples-from", str(tmp_path / "s.jsonl"), "--config", "@nothere.json", "--url", BASE]) == 2
    err = capsys.readouterr().err
    assert "--config @nothere.json: there is no such file" in err and "Errno" not in err


# ---------------------------------------------------------------- the table's p-values


def test_the_table_shows_the_raw_and_the_holm_adjusted_p_value(service, tmp_path, capsys):
    rng = random.Random(3)
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(toy_session(rng)) + "\n" for _ in range(2000)))
    args = ["grade", "--samples-from", str(samples), "--config", json.dumps(TOY), "--url", BASE]
    assert main(args + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)[0]["report"]
    assert main(args) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert header.split() == ["CONFIG", "RESULT", "SAMPLES", "P-RAW", "P-HOLM", "MISTAKE"]
    raw, holm = report["most_deviating"]["p_value"], report["p_value"]
    assert row.split()[:5] == ["samples.jsonl", "pass", "2000", f"{raw:.3g}", f"{holm:.3g}"]
    assert raw < holm <= 1  # Holm multiplies the smallest p-value by the family's size (capped at 1)


# ---------------------------------------------------------------- the SDK


def test_grade_distribution_takes_a_config_without_seed(service):
    rng = random.Random(5)
    with Client(BASE) as client:
        report = client.grade_distribution(config=TOY, m=1, samples=[toy_session(rng) for _ in range(500)])
    assert report.passed and report.p_value > 0.001


def test_progress_moves_per_batch_of_samples(service):
    calls = []
    with Client(BASE) as client:
        client.grade_sampler(target_sampler, configs=[("a", {**TOY, "seed": 0}), ("b", {**TOY, "seed": 0, "limit": 4})],
                             samples=120, progress=lambda *call: calls.append(call))
    drawn = [(done, total) for stage, done, total in calls if stage == "sample"]
    assert drawn == [(0, 240), (50, 240), (100, 240), (120, 240), (120, 240), (170, 240), (220, 240), (240, 240),
                     (240, 240)]
    assert [c[0] for c in calls].index("samples") > len(drawn) - 1  # grading comes after every sample is drawn


# ---------------------------------------------------------------- the docs


DOCS = [ROOT / "docs" / "grading.md", ROOT / "README.md"]
ID = re.compile(r"`((?:toy-aligned|toy-biased|eos|ties|flat)-(?:speculative|greedy|autoregressive|block|tree)-[a-z0-9.-]*[a-z0-9])`")
PLACEHOLDERS = [(r'"CMD"', '"python3 sd.py"'), (r"\bCMD\b", '"python3 sd.py"'), (r"MODE,\.\.\.", "speculative"),
                (r"\bFILE\.\.\.", "t.json"), (r"\bFILE\b", "t.json"), (r"--config CONFIG", "--config {}"),
                (r"--config ID", "--config eos-speculative-w2-s2-l6"), (r"\bNAME\b", "standard"),
                (r"--samples N", "--samples 2000"), (r"--jobs N", "--jobs 2"), (r"\$SPECDEC_URL", "http://x"),
                (r"\[\.\.\.\]", ""), (r"\|(?:greedy|autoregressive|block|tree|zsh)", "")]


def documented_commands() -> list[str]:
    """Every ``specdec`` command of the docs' code blocks and inline code, placeholders filled in,
    optional parts (``[--x y]``) included, comments and "(or ...)" left out, an option named in
    prose (``specdec grade --exec``) not taken for a command."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        lines = [line for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S) for line in block.splitlines()]
        lines += re.findall(r"`(specdec [^`]+)`", text.replace("\n", " "))
        for line in lines:
            line = re.sub(r"\s+(#|\(or ).*$", "", line.strip())
            if not line.startswith("specdec ") or "·" in line or re.search(r" --[a-z-]+$", line):
                continue  # not a command (an output line) or an option named in prose (`specdec grade --exec`)
            for pattern, value in PLACEHOLDERS:
                line = re.sub(pattern, value, line)
            found.append(re.sub(r"\[([^\[\]]*)\]", r"\1", line))
    return sorted(set(found))


COMMANDS = documented_commands()


def test_every_config_the_docs_name_exists():
    ids = {c.id for s in published() for c in s.configs}
    named = {i for path in DOCS for i in ID.findall(path.read_text(encoding="utf-8"))}
    assert "toy-aligned-speculative-w2-s0-l2" in named and "eos-speculative-w2-s2-l6" in named
    assert named <= ids, f"the docs name configs in no suite: {sorted(named - ids)}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_documented_command_is_valid(command):
    words = shlex.split(command)[1:]
    try:
        args = build_parser().parse_args(words)
    except SystemExit as error:
        pytest.fail(f"`{command}` is not a valid command: exit {error.code}")
    name = getattr(args, "suite", None) or (getattr(args, "name", None) if words[0] == "suite" else None)
    if name is not None:
        suite(name)  # a suite (and version) that exists


SUITE_COMMANDS = [c for c in COMMANDS if c.startswith("specdec suite")]


@pytest.mark.parametrize("command", SUITE_COMMANDS)
def test_every_documented_suite_command_runs(service, command, capsys):
    assert len(SUITE_COMMANDS) >= 4
    assert main(shlex.split(command)[1:] + ["--url", BASE]) == 0
    assert capsys.readouterr().out
