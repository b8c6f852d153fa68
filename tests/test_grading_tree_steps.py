"""Trace grading of every SPEC 12 tree names the first broken rule, and only it.

Each wrong trace is made by one wrong rule: a catalogued SPEC 12 mistake (grading/faulty_tree.py)
or a planted single-rule fault below (a correct shape or node verifier with one method changed).
For every shape x verifier it applies to, the grade of such a trace fails exactly the check of
that rule, at the field the rule owns, and a catalogued mistake is named exactly; later
consequences (a correction drawn after a wrong test, tests of a wrong tree) are judged from the
trace's own records (grading/tree_steps.py) and not reported again. A correct trace has no fault.
"""

import json
from dataclasses import dataclass, replace
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings

from specdec_service.engine import InvalidInput, parse_config, run
from specdec_service.engine.shapes import BeamShape, ChainsShape, DistinctShape
from specdec_service.engine.decoders import TREE
from specdec_service.engine.trees import TREE_DECODERS
from specdec_service.engine.verifiers.tokenwise import SampledBonus
from specdec_service.engine.verifiers.tree_residual import ResidualNode
from specdec_service.engine.verifiers.tree_target_only import TargetOnlyNode
from specdec_service.engine.verifiers.walk import NodeOutcome
from specdec_service.grading import BY_ID, faulty_run, grade
from specdec_service.grading.faulty_tree import tree_decoder
from test_grading_fuzz import mutated


# ---------------------------------------------------------------- planted single-rule faults


@dataclass(frozen=True)
class CorrectionFromP:
    """SPEC 12.2 broken: when every child is rejected the correction is drawn from p, not from r
    (the last residual, or p without the children)."""

    rule: object = None

    @property
    def name(self):
        return self.rule.name

    def choose(self, node, p, stream, config, records):
        outcome = self.rule.choose(node, p, stream, config, records)
        return outcome if outcome.child is not None else NodeOutcome(None, p)


@dataclass(frozen=True)
class PreviousAcc(TargetOnlyNode):
    """SPEC 12.4 broken: u * threshold_acc compared with acc_(j-1), the mass before y_j, not acc_j."""

    def accepted_by(self, u_acc, acc, py, single):
        return super().accepted_by(u_acc, acc - py, py, single)


@dataclass(frozen=True)
class OneHotDraft(ResidualNode):
    """SPEC 12.3 broken: each sibling tested (and subtracted) as if the draft had given it
    probability 1 (accept iff u < r(y)), not against its proposal law s_j: the compared u * s(y)
    is u."""

    def tested_law(self, node, child):
        from specdec_service.engine.distributions import Dist
        return Dist.of_weights([int(y == child.token) for y in range(len(child.law.weights))])


@dataclass(frozen=True)
class UnscaledCoin(TargetOnlyNode):
    """SPEC 12.4 broken: u itself compared with acc_j, not u * threshold_acc (the threshold left
    out of the compared quantity)."""

    def choose(self, node, p, stream, config, records):
        unscaled = replace(config, tree=replace(config.tree, threshold_acc=Fraction(1)))
        return super().choose(node, p, stream, unscaled, records)


class DraftRowBonus(SampledBonus):
    """SPEC 4.4 broken: the bonus drawn from the draft's row after the last accepted token."""

    def row(self, rows, last):
        return rows.draft(last)


@dataclass(frozen=True)
class DepthFirst(DistinctShape):
    """SPEC 12.1.2 broken: the tree drafted depth first (a node's subtree before its next
    sibling's), not in level order: the draws go to other nodes, so node tokens and parents differ."""

    def draft(self, state, rows, stream, tokens=None):
        from specdec_service.engine.shapes.nodes import DraftedNodes
        cfg, committed = state.config, state.committed
        depth = self.room(cfg, len(committed))
        tree = DraftedNodes(committed[-1] if committed else None)

        def grow(node, i):
            if i < depth and (node is tree.root or node.token != cfg.eos):
                for child in self._siblings(tree, node, rows, stream, cfg.tree.branching_at(i + 1, cfg.drafts), cfg.vocab):
                    grow(child, i + 1)
        grow(tree.root, 0)
        return tree


@dataclass(frozen=True)
class LaterParentBeam(BeamShape):
    """SPEC 12.1.3 broken: ties between offers broken by the later parent: a wrong node parent."""

    @staticmethod
    def rank(offer):
        return (-offer[0], -offer[1], offer[2])


@dataclass(frozen=True)
class UnmergedTrie(ChainsShape):
    """SPEC 12.1.1 broken: each chain is its own path (a token two chains drafted is two nodes), not
    merged into a trie: a wrong node token (and parent) where chains share a prefix."""

    @staticmethod
    def child(tree, node, token, q):
        return tree.add(node, token, q)


# ---------------------------------------------------------------- the class walked

CHAINS_R = ("chains", "residual")  # SPEC 11 exactly: read after its own chains by grading/tree_checks.py
CHAINS_TO = ("chains", "target_only")
DISTINCT_R = ("distinct", "residual")
DISTINCT_TO = ("distinct", "target_only")
BEAM_TO = ("beam", "target_only")
COMBOS = (CHAINS_TO, DISTINCT_R, DISTINCT_TO, BEAM_TO)


def _rule(combo):
    return TREE_DECODERS[combo].verifier.rule


def _with_rule(combo, rule):
    return tree_decoder(*combo, rule=rule)


def _with_bonus(combo):
    decoder = TREE_DECODERS[combo] if combo != CHAINS_R else TREE
    return replace(decoder, verifier=replace(decoder.verifier, bonus=DraftRowBonus()))


def _with_shape(combo, shape):
    return replace(TREE_DECODERS[combo], proposal=shape)


PLANTED = {  # name -> (combos it applies to, decoder of a combo, the one check that owns the rule)
    "correction-from-p": (COMBOS, lambda c: _with_rule(c, CorrectionFromP(_rule(c))), "correction"),
    "acc-of-the-children-before": ((CHAINS_TO, DISTINCT_TO, BEAM_TO), lambda c: _with_rule(c, PreviousAcc()), "acceptance"),
    "u-not-scaled-by-threshold-acc": ((CHAINS_TO, DISTINCT_TO, BEAM_TO), lambda c: _with_rule(c, UnscaledCoin()), "acceptance"),
    "draft-taken-as-one-hot": ((DISTINCT_R,), lambda c: _with_rule(c, OneHotDraft()), "acceptance"),
    "bonus-from-the-draft-row": ((CHAINS_R, *COMBOS), _with_bonus, "bonus"),
    "distinct-drafted-depth-first": ((DISTINCT_R, DISTINCT_TO), lambda c: _with_shape(c, DepthFirst()), "proposal"),
    "beam-tie-to-the-later-parent": ((BEAM_TO,), lambda c: _with_shape(c, LaterParentBeam()), "proposal"),
    "chains-not-merged": ((CHAINS_TO,), lambda c: _with_shape(c, UnmergedTrie()), "proposal"),
}


def _settings(combo, seed, width=3, drafts=2, **tree):
    setting = {"shape": combo[0], "verify": combo[1], **tree}
    if combo[0] == "distinct":
        setting.setdefault("branching", [2, 2])
    return {"target": "toy", "draft": "biased", "mode": "tree", "width": width, "drafts": drafts, "seed": seed,
            "limit": 8, "eos": None, "tree": setting}


SETTINGS = {"u-not-scaled-by-threshold-acc": {"threshold_acc": 0.5}}
"""The tree settings a planted rule needs to show (the others: the defaults)."""


def _differing(combo, decoder, **more):
    """The first (config, wrong trace) of seeds 0..59 where ``decoder``'s trace is not the engine's."""
    for seed in range(60):
        cfg = parse_config(_settings(combo, seed, **more))
        wrong = json.loads(json.dumps(faulty_run(cfg, decoder)))
        if wrong != json.loads(json.dumps(run(cfg))):
            return cfg, wrong
    raise AssertionError("no seed shows the fault")


CASES = [(name, combo) for name, (combos, _, _) in PLANTED.items() for combo in combos]


@pytest.mark.parametrize("name, combo", CASES, ids=[f"{n}-{s}-{v}" for n, (s, v) in CASES])
def test_planted_fault_fails_its_check_alone(name, combo):
    _, make, check = PLANTED[name]
    _, wrong = _differing(combo, make(combo), **SETTINGS.get(name, {}))
    report = grade(wrong)
    failing = [c for c in report["checks"] if not c["passed"]]
    assert [c["name"] for c in failing] == [check]
    assert report["first_divergence"]["check"] == check
    assert failing[0]["first_failure"]["pointer"] == report["first_divergence"]["path"]
    assert report["score"] == pytest.approx(0.9)
    # the rule named is SPEC 12's: the shape's for a proposal, the verifier's for the rest (SPEC 11's for its tree)
    rule = report["first_divergence"]["rule"]
    if combo == CHAINS_R:  # SPEC 11's tree, which SPEC 12 keeps exactly
        assert rule.startswith("SPEC section 11")
    elif check == "proposal":
        assert rule.startswith(f"SPEC section 12.1.{('chains', 'distinct', 'beam').index(combo[0]) + 1}")
    else:
        assert rule.startswith("SPEC sections 12.2-12.3" if combo[1] == "residual" else "SPEC sections 12.2 and 12.4")


FIELDS = {  # what each planted rule gets wrong first: the last key of the field the report names
    "correction-from-p": "distribution", "acc-of-the-children-before": "accepted", "u-not-scaled-by-threshold-acc": "u_acc", "draft-taken-as-one-hot": "law",
    "bonus-from-the-draft-row": "p", "distinct-drafted-depth-first": "tokens", "beam-tie-to-the-later-parent": "tokens",
    "chains-not-merged": "parent",
}


@pytest.mark.parametrize("name, combo", CASES, ids=[f"{n}-{s}-{v}" for n, (s, v) in CASES])
def test_planted_fault_is_named_at_the_field_of_its_rule(name, combo):
    _, make, _ = PLANTED[name]
    _, wrong = _differing(combo, make(combo), **SETTINGS.get(name, {}))
    path = grade(wrong)["first_divergence"]["path"].split("/")
    assert FIELDS[name] in path


SPEC12_MISTAKES = {  # catalogue id -> the field its first divergence is in, the one check it fails
    "tree-distinct-tested-against-q": ("law", "acceptance"),
    "tree-distinct-residual-not-updated": ("residual", "acceptance"),
    "tree-repeated-child-tested-twice": ("verification", "acceptance"),
}


@pytest.mark.parametrize("mistake_id", sorted(SPEC12_MISTAKES))
@pytest.mark.parametrize("width, branching", [(2, [2, 1]), (3, [2, 2])])
def test_catalogued_mistake_is_named_first_and_alone(mistake_id, width, branching):
    mistake = BY_ID[mistake_id]
    combo = (mistake.example["tree"]["shape"], mistake.example["tree"]["verify"])
    more = {"branching": branching} if combo[0] == "distinct" else {}
    cfg, wrong = _differing(combo, mistake.rules, width=width, **more)
    report = grade(wrong)
    field, check = SPEC12_MISTAKES[mistake_id]
    assert [c["name"] for c in report["checks"] if not c["passed"]] == [check]
    assert field in report["first_divergence"]["path"].split("/")
    assert mistake_id in [d["id"] for d in report["diagnosis"] if d["exact"]]


CORRECT = [(combo, tree) for combo in COMBOS
           for tree in ([{}, {"threshold_acc": 0.5}, {"threshold_single": 0.25}] if combo[1] == "target_only" else [{}])]


@pytest.mark.parametrize("combo, tree", CORRECT, ids=[f"{'-'.join(c)}-{sorted(t)}" for c, t in CORRECT])
def test_correct_trace_has_no_fault(combo, tree):
    for seed in range(3):
        cfg = parse_config(_settings(combo, seed, **tree))
        report = grade(json.loads(json.dumps(run(cfg))))
        assert report["passed"] is True and report["score"] == 1


@pytest.mark.parametrize("combo", [CHAINS_TO, DISTINCT_TO, BEAM_TO], ids=["-".join(c) for c in [CHAINS_TO, DISTINCT_TO, BEAM_TO]])
def test_lossy_thresholds_are_judged_from_the_own_records(combo):
    """With threshold_acc 3/4, a wrong correction law is still the correction check's alone."""
    decoder = _with_rule(combo, CorrectionFromP(_rule(combo)))
    _, wrong = _differing(combo, decoder, threshold_acc=0.75)
    report = grade(wrong)
    assert [c["name"] for c in report["checks"] if not c["passed"]] == ["correction"]


def test_an_unreadable_tree_is_judged_against_the_engine_block():
    """A node whose parent is not an earlier node is no tree: the checks compare with the engine."""
    cfg = parse_config(_settings(BEAM_TO, 0))
    trace = json.loads(json.dumps(run(cfg)))
    trace["blocks"][0]["proposal"]["nodes"][0]["parent"] = 7
    report = grade(trace)
    assert report["first_divergence"]["path"] == "#/blocks/0/proposal/nodes/0/parent"
    assert [c["name"] for c in report["checks"] if not c["passed"]] == ["proposal"]


TREE_TRACES = {"-".join(combo): json.loads(json.dumps(run(parse_config(_settings(combo, 1, threshold_acc=0.75)
                                                                         if combo[1] == "target_only" else
                                                                         _settings(combo, 1)))))
               for combo in COMBOS}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated(TREE_TRACES, lambda path: len(path) > 2 and path[0] == "blocks"))
def test_a_mutated_spec_12_trace_is_graded_or_refused_never_crashes(trace):
    """Reading a tree block's own records never fails on records that are no tree: it is graded
    (a failing check names a pointer) or refused with the fields at fault."""
    try:
        report = grade(trace)
    except InvalidInput as error:
        assert error.faults
        return
    assert (report["score"] == 1.0) == report["passed"]
    assert all(c["first_failure"]["pointer"].startswith("#/") for c in report["checks"] if not c["passed"])
