"""Client.analyze and `specdec analyze` against the real route (``responses`` forwarding to
the Flask app): typed exact values, the report, the sweep table, errors."""

import json
from fractions import Fraction

import pytest

from specdec_client import Analysis, InvalidInput, InvalidSettings, cli
from specdec_client.analyze import bar, widths_arg
from specdec_client.render import Style

from .service_backend import calls_to, specdec


pytestmark = pytest.mark.usefixtures("at_mock_url")


def test_analyze_returns_exact_fractions(service, client):
    result = client.analyze(draft="biased", depth=1, draft_cost="0.05")
    assert isinstance(result, Analysis)
    assert [c.alpha for c in result.contexts] == [Fraction(7, 10), Fraction(2, 5), Fraction(3, 4), Fraction(9, 20)]
    assert result.contexts[0].context is None and result.contexts[0].residual == (0, Fraction(1, 2), Fraction(1, 2))
    assert result.naive.tv == Fraction(3, 20)
    assert result.naive.distribution[("A",)] == Fraction(13, 20)
    assert result.output.tv == 0 and result.output.target == {("A",): Fraction(1, 2), ("B",): Fraction(3, 10),
                                                              ("C",): Fraction(1, 5)}
    assert result.draft_cost == Fraction(1, 20)
    assert result.expected.counters["committed"] == 8
    assert float(result.expected.counters["target_passes"]) == result.raw["expected"]["counters"]["target_passes"]
    assert result.best_width == 3 and [s.width for s in result.sweep] == list(range(1, 9))
    assert result.to_dict() == result.raw
    sent = json.loads(calls_to(service, "/v1/analysis")[0].request.body)
    assert sent == {"config": {"draft": "biased"}, "depth": 1, "draft_cost": 0.05}


def test_analyze_aligned_four_tokens_per_pass(service, client):
    result = client.analyze({"draft": "aligned", "seed": 3}, widths=[3])
    assert result.expected.committed_per_pass == 4
    assert result.leviathan.tokens_per_pass == 4.0
    assert result.config == {"target": "toy", "draft": "aligned", "mode": "speculative", "width": 3, "limit": 8,
                              "eos": None}


def test_analyze_needs_a_draft_and_known_settings(client):
    with pytest.raises(InvalidSettings, match="draft"):
        client.analyze(width=3)
    with pytest.raises(InvalidSettings, match="colour"):
        client.analyze(draft="biased", colour=1)


def test_over_budget_is_an_invalid_input_naming_the_cost(service, client):
    vocab = [f"t{i}" for i in range(64)]
    row = [1 / 64] * 64
    model = {"vocab": vocab, "start": row, "next": {v: row for v in vocab}}
    with pytest.raises(InvalidInput) as caught:
        client.analyze(target=model, draft=model, width=16, limit=256)
    problem = caught.value.problem
    assert problem["type"].endswith("over-budget") and problem["cost"] > problem["budget"]


def test_cli_report(service, capsys):
    status, out, err = specdec(capsys, "analyze", "--draft", "biased", "--draft-cost", "0.05", "--depth", "1")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Analysis of target toy, draft biased, speculative, width 3, limit 8; draft cost 0.05")
    assert "  ∅            0.7000  7/10         0 1/2 1/2" in lines
    assert "  C            0.4500  9/20         0 2/11 9/11" in lines
    assert "  committed            8.0000  8" in lines
    assert any(line.startswith("  tokens per pass            1.8684     2.0390") for line in lines)
    sweep = [line for line in lines if line[:7].strip().isdigit()]
    assert len(sweep) == 8
    best = [line for line in sweep if line.endswith("◀ best")]
    assert len(best) == 1 and best[0].split()[0] == "3"
    assert best[0].count("█") == 32  # the best width has the longest bar
    assert "  naive rule (correction from p): total variation 3/20 = 0.1500" in lines
    assert "  total variation to the target: 0 (the target's distribution exactly)" in lines


def test_cli_json_is_the_answer(service, capsys):
    status, out, _ = specdec(capsys, "analyze", "--draft", "aligned", "--widths", "1-3,8", "--json")
    body = json.loads(out)
    assert status == 0 and [s["width"] for s in body["sweep"]] == [1, 2, 3, 8]
    assert body["expected"]["committed_per_pass_exact"] == "4"


def test_cli_greedy_is_not_the_target(service, capsys):
    status, out, _ = specdec(capsys, "analyze", "--draft", "biased", "--mode", "greedy", "--depth", "1")
    assert status == 0
    assert "  total variation to the target: 1/2 (not the target's distribution)" in out.splitlines()


def test_cli_errors_are_one_line(service, capsys):
    status, out, err = specdec(capsys, "analyze", "--draft", "biased", "--depth", "9")
    assert (status, out) == (4, "") and err.count("\n") == 1 and "#/depth" in err  # HTTP 422: depth 1-8
    with pytest.raises(SystemExit):
        cli.main(["analyze", "--draft", "biased", "--widths", "2,2"])
    with pytest.raises(SystemExit):
        cli.main(["analyze", "--draft", "biased", "--draft-cost", "-1"])


def test_widths_and_bars():
    assert widths_arg("1-4") == [1, 2, 3, 4]
    assert widths_arg("1,2,4,8") == [1, 2, 4, 8]
    assert bar(1.0, 2.0, Style()) == "█" * 16
    assert bar(1.0 + 1 / 64, 2.0, Style()) == "█" * 16 + "▎"
    assert bar(1.0, 2.0, Style(unicode=False)) == "#" * 16


def test_docs_report_is_the_commands_output(service, capsys):
    """docs/analysis.md shows `specdec analyze`'s report verbatim: the block after the
    `analyze-report` marker is what the command prints now."""
    from pathlib import Path
    import re
    import shlex

    text = (Path(__file__).resolve().parents[2] / "docs" / "analysis.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- analyze-report: specdec (.*?) -->\n```text\n(.*?)```", text, re.S)
    assert found, "docs/analysis.md lost its analyze-report block"
    status, out, err = specdec(capsys, *shlex.split(found.group(1)))
    assert (status, err) == (0, "")
    assert out == found.group(2)


def test_analyze_mode_block_compares_with_token_wise(service, client):
    """SPEC 10: expected accepted proposals per block 219/200 (block) against 207/200 (token-wise)
    at width 2, 1381/1000 against 483/400 at width 3; the output is the target's (tv 0)."""
    result = client.analyze(draft="biased", mode="block", width=2, widths=[2, 3], depth=2)
    assert result.block_comparison == {2: {"block": Fraction(219, 200), "token_wise": Fraction(207, 200)},
                                       3: {"block": Fraction(1381, 1000), "token_wise": Fraction(483, 400)}}
    assert result.output.tv == 0 and result.naive is None
    assert client.analyze(draft="biased", depth=1).block_comparison is None


def test_cli_mode_block_compares_with_token_wise(service, capsys):
    status, out, err = specdec(capsys, "analyze", "--draft", "biased", "--mode", "block", "--width", "2",
                               "--widths", "2-3", "--depth", "2")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert "      2          219/200          207/200" in lines
    assert "      3        1381/1000          483/400" in lines
    assert "  total variation to the target: 0 (the target's distribution exactly)" in lines


TREES = [["--tree-shape", "chains", "--tree-verify", "residual"], ["--tree-shape", "distinct"],
         ["--tree-verify", "target_only"], ["--tree-shape", "distinct", "--tree-verify", "target_only"],
         ["--tree-shape", "beam", "--tree-verify", "target_only"],
         ["--tree-shape", "beam", "--tree-verify", "target_only", "--threshold-acc", "0.5"],
         ["--tree-shape", "distinct", "--branching", "2,1", "--tree-verify", "target_only", "--threshold-single", "0.5"]]
"""Every shape x verifier of SPEC 12 through the tree options, a branching list and both lossy thresholds."""


@pytest.mark.parametrize("options", TREES, ids=" ".join)
def test_cli_analyze_of_every_tree_at_the_default_widths(service, capsys, options):
    """With no --widths, every tree is analysed (the service fits its defaults to its budget and
    the report names the widths analysed and how to ask for more); the report names the shape,
    the verifier, the branching and the thresholds, and prints what applies to the verifier:
    SPEC 4's alpha and residual under "residual", each node's acceptance p(children) and no alpha
    under "target_only"; "lossy" when the thresholds make it so."""
    argv = ["analyze", "--draft", "biased", "--mode", "tree", "--drafts", "2", *options, "--color", "never"]
    status, out, err = specdec(capsys, *argv, "--json")
    assert (status, err) == (0, "")
    answer = json.loads(out)
    status, out, err = specdec(capsys, *argv)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    tree = answer["tree"]
    assert lines[0].startswith("Analysis of target toy, draft biased, tree, width 3, drafts 2, limit 8;")
    expected = [f"shape {tree['shape']}"]
    if tree["branching"] is not None:
        expected.append("branching " + ",".join(str(b) for b in tree["branching"]))
    expected.append(f"verify {tree['verify']}")
    if tree["verify"] == "target_only":
        expected += [f"threshold_single {tree['threshold_single_exact']}", f"threshold_acc {tree['threshold_acc_exact']}"]
    assert lines[1] == "Tree: " + ", ".join(expected) + f" ({tree['verdict']})"
    assert ("--threshold-acc" in options or "--threshold-single" in options) == (tree["verdict"] == "lossy")
    fitted = answer.get("fitted")
    if fitted is not None:
        widths = fitted["widths"]
        span = f"{widths[0]}-{widths[-1]}" if len(widths) > 1 else str(widths[0])
        assert lines[2].startswith(f"Analysed widths {span}, D 1-{fitted['drafts'][-1]} in the sweep over drafts: "
                                   f"widths 1-8, D 1-8 would cost {fitted['default_cost']:,} analysis units, over the "
                                   f"service's budget of {fitted['budget']:,}; ")
        assert ("--widths" in lines[2]) == (len(widths) < 8)
        assert [s["width"] for s in answer["sweep"]] == widths
    if tree["verify"] == "target_only":
        assert "alpha" not in out and "residual" not in out.replace("verify residual", "")
        at = lines.index(next(line for line in lines if line.startswith("Acceptance per node")))
        assert lines[at + 2:at + 6] == [f"  {'∅' if n['context'] is None else n['context']:<10} "
                                        f"{n['accept']:>8.4f}  {n['accept_exact']}" for n in tree["nodes"]]
    else:
        at = lines.index(next(line for line in lines if line.startswith("Acceptance per context")))
        assert [line.split()[3] for line in lines[at + 2:at + 6]] == [f"{n['accept']:.4f}" for n in tree["nodes"]]
    assert "Leviathan" not in out and "  tokens per pass" in out
    assert f"Several drafts ({tree['shape']}, {tree['verify']}): committed per pass" in out
    verdict = "lossy: not the target's distribution" if tree["verdict"] == "lossy" else "the target's distribution exactly"
    assert f"  total variation to the target: {answer['output']['tv_exact']} ({verdict})" in lines


def test_the_sdk_reads_the_tree_and_what_was_fitted(service, client):
    result = client.analyze({"draft": "biased", "mode": "tree", "drafts": 2,
                             "tree": {"shape": "chains", "verify": "target_only"}})
    fitted = result.fitted
    assert (fitted.widths, fitted.drafts, fitted.default_widths) == (tuple(range(1, 8)), (1, 2), tuple(range(1, 9)))
    assert fitted.cost <= fitted.budget < fitted.default_cost == 96_220_224
    tree = result.tree
    assert (tree.shape, tree.verify, tree.branching, tree.threshold_single, tree.threshold_acc, tree.lossy) == (
        "chains", "target_only", None, 1, 1, False)
    # two chains from q = [4/5, 3/20, 1/20]: E[p(children)] = sum p(y) (1 - (1 - q(y))^2)
    q, p = [Fraction(4, 5), Fraction(3, 20), Fraction(1, 20)], [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]
    assert tree.nodes[0].context is None
    assert tree.nodes[0].accept == sum(py * (1 - (1 - qy) ** 2) for py, qy in zip(p, q)) == Fraction(2331, 4000)
    plain = client.analyze(draft="biased", widths=[2])
    assert plain.tree is None and plain.fitted is None
