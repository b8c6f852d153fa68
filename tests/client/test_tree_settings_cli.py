"""The setting `tree` (SPEC section 12) through the SDK and the `specdec` command, in-process
against the real routes: the options send the `tree` object, `Client.run(..., tree=Tree(...))`,
typed records of every shape and verifier, a rendering a reader can follow, and a saved trace of
every mode and setting replayed by `specdec replay` (and read by `load_trace`)."""

import json

import pytest

from specdec_client import Client, Config, InvalidInput, ResidualTest, TargetOnlyTest, Tree, TreeNode, cli, load_trace

from .service_backend import BASE, calls_to, run_body, specdec

pytestmark = pytest.mark.usefixtures("at_mock_url")

EXAMPLE = {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": 16}
EVERY_SETTING = [
    ["--mode", "speculative"], ["--mode", "greedy"], ["--mode", "autoregressive"], ["--mode", "block"],
    ["--mode", "tree", "--drafts", "2"],
    ["--mode", "tree", "--drafts", "2", "--tree-verify", "target_only"],
    ["--mode", "tree", "--drafts", "3", "--tree-shape", "distinct"],
    ["--mode", "tree", "--drafts", "2", "--tree-shape", "distinct", "--branching", "2,1,3", "--tree-verify",
     "target_only"],
    ["--mode", "tree", "--drafts", "2", "--tree-shape", "beam", "--tree-verify", "target_only"],
    ["--mode", "tree", "--drafts", "2", "--tree-shape", "beam", "--tree-verify", "target_only", "--threshold-acc",
     "0.5", "--threshold-single", "0.3", "--temperature", "0.7", "--eos", "C"],
]
"""Every mode, and in mode tree every shape x verifier, a branching list, thresholds, sampling."""


@pytest.mark.parametrize("options", EVERY_SETTING, ids=" ".join)
def test_a_saved_trace_of_every_mode_and_setting_replays(service, capsys, tmp_path, options):
    path = tmp_path / "t.json"
    status, _, err = specdec(capsys, "run", "--draft", "biased", "--seed", "3", "--width", "3", *options,
                             "--save", str(path))
    assert (status, err) == (0, "")
    trace = load_trace(path)
    assert trace.config.mode == options[1]
    status, out, err = specdec(capsys, "replay", str(path))
    assert (status, err) == (0, ""), out
    assert out.endswith("every field matches the service\n")


def test_the_options_send_the_tree_object(service, capsys):
    status, out, _ = specdec(capsys, "run", "--draft", "biased", "--seed", "16", "--mode", "tree", "--drafts", "2",
                             "--width", "2", "--tree-shape", "distinct", "--branching", "2,1", "--color", "never")
    assert status == 0
    sent = json.loads(calls_to(service, "/v1/runs")[0].request.body)
    assert sent["config"]["tree"] == {"shape": "distinct", "branching": [2, 1]}
    assert "tree shape distinct, branching [2, 1]" in out.splitlines()[0]
    # the tree by depth, then each test with the numbers it compared (SPEC 12.6's example)
    assert "              #2 (0) B  law 0.7500  u 0.0795 (pos 1)" in out
    assert "u*s(y) 0.5151 ≥ r(y) 0.5000; r becomes 0.0000 0.5000 0.5000" in out
    assert "u*s(y) 0.1731 < r(y) 0.5000" in out


def test_a_bad_branching_option_is_a_usage_error(service, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--draft", "biased", "--seed", "1", "--mode", "tree", "--branching", "2,x"])
    assert exit_.value.code == 2
    assert "not a comma-separated list of integers: '2,x'" in capsys.readouterr().err


def test_a_refused_tree_names_the_field(service, capsys):
    status, out, err = specdec(capsys, "run", "--draft", "biased", "--seed", "1", "--mode", "tree", "--branching",
                               "2,1")
    assert status == 4 and "config/tree/branching" in err


BEAM_FIX = ("specdec: error: --tree-shape beam needs --tree-verify target_only (SPEC 12: a beam tree has no draft "
            "law, so the residual verifier, the default, is refused)\n")


@pytest.mark.parametrize("command", [["run", "--seed", "1"], ["analyze", "--widths", "2"]], ids=" ".join)
@pytest.mark.parametrize("verify", [[], ["--tree-verify", "residual"]], ids=" ".join)
def test_beam_without_target_only_names_the_fix_in_one_line(service, capsys, command, verify):
    """SPEC 12 refuses "residual" (the default verifier) with "beam": every command that takes
    session settings says, before any request, which option fixes it; the SDK leaves the
    refusal to the service, whose 422 names the field and the fix."""
    status, out, err = specdec(capsys, *command, "--draft", "biased", "--mode", "tree", "--tree-shape", "beam",
                               *verify)
    assert (status, out, err) == (2, "", BEAM_FIX)
    assert not service.calls
    status, _, err = specdec(capsys, *command, "--draft", "biased", "--mode", "tree", "--tree-shape", "beam",
                             "--tree-verify", "target_only", "--limit", "3")
    assert (status, err) == (0, "")
    with pytest.raises(InvalidInput) as refused:
        Client(BASE).run(Config(draft="biased", seed=1, mode="tree", tree=Tree(shape="beam")))
    assert refused.value.errors[0].pointer == "#/config/tree/verify"
    assert 'must be "target_only" with shape "beam"' in refused.value.errors[0].detail


def test_client_run_takes_a_tree(service):
    client = Client(BASE)
    trace = client.run(Config(**EXAMPLE), tree=Tree(shape="beam", verify="target_only"))
    assert trace.to_dict() == run_body({**EXAMPLE, "tree": {"shape": "beam", "verify": "target_only"}})
    assert trace.config.tree == Tree(shape="beam", verify="target_only")
    block = trace.blocks[0]
    assert block.proposal.nodes is not None and all(isinstance(n, TreeNode) for n in block.proposal.nodes)
    assert [n.score for n in block.proposal.nodes] == [0.8, 0.15, 0.64, 0.12]
    assert all(isinstance(t, TargetOnlyTest) for t in block.verification)
    residual = client.run(dict(EXAMPLE), tree={"shape": "distinct"}).blocks[0]
    assert all(isinstance(t, ResidualTest) for t in residual.verification)
    assert residual.committed == ("B", "A", "A")


def test_a_tree_config_round_trips():
    config = Config(**EXAMPLE, tree={"verify": "target_only", "threshold_acc": 0.5})
    assert config.tree == Tree(verify="target_only", threshold_acc=0.5)
    assert config.to_dict()["tree"] == {"verify": "target_only", "threshold_acc": 0.5}
    assert Config(**EXAMPLE).to_dict().get("tree") is None
    with pytest.raises(ValueError, match="unknown tree settings"):
        Tree.from_dict({"depth": 2})


@pytest.mark.parametrize("tree", [Tree(shape="distinct"), Tree(shape="beam", verify="target_only"),
                                  Tree(shape="chains", verify="target_only"), None], ids=str)
def test_a_sessions_draft_then_verify_works_for_every_tree_shape(service, tree):
    """draft() then verify() (docs/sdk.md) is the block step() gives, for every shape: distinct
    and beam trees are drafted by the service, so their pending proposal is verified through
    /v1/step (the same draws draft the same tree)."""
    settings = {"draft": "biased", "seed": 3, "width": 2, "mode": "tree", "drafts": 2, "tree": tree}
    with Client(BASE) as client:
        one, other = client.session(**settings), client.session(**settings)
        one.draft()
        verified = one.verify()
        stepped = other.step()
    assert verified.to_dict() == stepped.to_dict()
    assert one.state.position == other.state.position and one.output == other.output
