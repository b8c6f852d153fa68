"""Assignment suites: named, versioned, fixed sets of session configs that a student's program is run on.

A suite (``GET /v1/grade/suites/{name}``, ``specdec grade --exec``) is ``{"name", "version",
"covers", "description", "configs": [{"id", "config", "exercises"}]}``: each ``config`` is a full
session config (every setting of SPEC section 8, defaults filled in, as a trace echoes it), and
``exercises`` names the SPEC rules its reference trace exercises (:data:`EXERCISES`, computed by
:func:`exercises` from the reference trace, never written by hand).

**A suite is an assignment, and a published suite never changes.** Each rule family of the SPEC
(:data:`FAMILIES`: SPEC 1-8, sampling parameters, mode block, mode tree) has its own suites, and
``covers`` says which families a suite's configs and guarantees belong to: ``quick``,
``standard`` and ``full`` cover SPEC 1-8 only; ``sampling``, ``block`` and ``tree`` one family
each; ``all`` every family. A change of configs is a new ``version`` of the suite (or a new
name), appended to ``suites.json`` next to the versions already published: ``name`` means the
newest version, ``name@N`` exactly version N, forever (:func:`suite`). ``tests/golden/suites.json``
pins every published version's config ids and configs (``tests/test_grading_suites.py``).

The suites are data (``suites.json`` next to this module), written by the search script
:mod:`.suites_search`: it keeps every published version and appends a new one only when the
newest no longer meets its guarantee for the catalogue (:data:`.catalogue.CATALOGUE`) of the
day: every catalogued mistake of the families it covers fails at least one of its configs with a
diagnosis that names it, and every rule of those families that the candidate pool can exercise
is exercised.

Errors: :func:`suite` raises :class:`UnknownSuite` (HTTP 404) for a name or version that is not a suite.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..engine import Config, parse_config

SUITES_PATH = Path(__file__).with_name("suites.json")
"""The suite data, written by ``python -m specdec_service.grading.suites_search --write``."""

EXERCISES = {
    "first-position-rejection": "SPEC 4.2-4.3: the first proposal of a block is rejected and replaced by a correction token.",
    "later-rejection": "SPEC 4.2-4.3: a proposal after the first is rejected, after an accepted prefix.",
    "discarded-proposals": "SPEC 4.3: proposals after a rejection are discarded.",
    "certain-acceptance": "SPEC 4.2: a proposal with p(x) >= q(x) still uses its draw (ratio at least 1).",
    "bonus": "SPEC 4.4: every proposal is accepted below the limit and a bonus token is drawn from the target.",
    "no-bonus-at-limit": "SPEC 4.4: every proposal is accepted and the output reaches the limit: no bonus.",
    "limit-clips-width": "SPEC 4.1: the limit leaves room for fewer than width proposals (k = limit - L < w).",
    "eos-drafted": "SPEC 6: the draft proposes the EOS and stops drafting after it.",
    "eos-accepted": "SPEC 6: an accepted EOS stops verification (no bonus) and ends the session.",
    "eos-corrected": "SPEC 4.3 and 6: the correction token is the EOS and ends the session.",
    "greedy": "SPEC 5: mode greedy (argmax proposals and acceptance, no draws).",
    "greedy-mismatch": "SPEC 5: in mode greedy a proposal differs from the target's argmax, which replaces it.",
    "greedy-bonus": "SPEC 5: in mode greedy every proposal matches and the target's argmax is added as a bonus.",
    "argmax-tie": "SPEC 5: in mode greedy a row has two largest entries; the earliest token wins.",
    "autoregressive": "SPEC 5: mode autoregressive (one target sample per pass).",
    "custom-vocabulary": "SPEC 1: custom target and draft tables over their own vocabulary.",
    "block": "SPEC 10: mode block (weights, thresholds, all k eta draws, tau the last passing one).",
    "block-later-pass": "SPEC 10.4: in mode block a proposal whose own eta fails its threshold is committed, "
                        "because a later eta passes.",
    "block-scaled-correction": "SPEC 10.5: in mode block a correction after tau >= 1 proposals, from the residual "
                               "scaled by w_tau < 1.",
    "sampling": "SPEC 9: sampling parameters process every row before any rule reads it (the target's p', the draft's q').",
    "tree": "SPEC 11: mode tree (several draft chains verified depth by depth).",
    "tree-sibling-accepted": "SPEC 11.2: a candidate is accepted against the recursive residual after a sibling's rejection.",
    "tree-chain-left": "SPEC 11.2: a chain leaves the accepted path (its token at a depth is not the accepted one).",
    "tree-distinct-sibling": "SPEC 12.1.2, 12.3: a sibling drawn without replacement is tested against its law s_j after a rejection.",
    "tree-target-only": "SPEC 12.4: a node's children tested with one draw against the target's cumulative probability.",
    "tree-target-only-miss": "SPEC 12.4: every child of a node rejected, the correction drawn from p without them.",
    "tree-repeated-token": "SPEC 12.1.1: a token drafted by several chains tested once as one child of the trie.",
    "tree-lossy-threshold": "SPEC 12.4: a child accepted by a threshold below 1 that the lossless test would reject.",
}
"""The rules a config can exercise, each with the SPEC section and what happens."""


FAMILIES = {
    "core": "SPEC 1-8: modes speculative, greedy and autoregressive, the EOS, custom models",
    "sampling": "SPEC 9: sampling parameters (temperature, top-k, top-p, min-p) on the rows",
    "block": "SPEC 10: mode block (block verification)",
    "tree": "SPEC 11: mode tree (several draft chains)",
}
"""The rule families of the SPEC, each assigned by suites of its own (:attr:`Suite.covers`)."""


def config_family(config: dict) -> str:
    """The family of :data:`FAMILIES` a JSON config belongs to: ``sampling`` when it has
    sampling parameters (SPEC 9), else ``block`` or ``tree`` by its mode, else ``core``."""
    if config.get("sampling"):
        return "sampling"
    mode = config.get("mode", "speculative")
    return mode if mode in ("block", "tree") else "core"


def rule_family(rule: str) -> str:
    """The family of :data:`FAMILIES` a rule of :data:`EXERCISES` belongs to (by its name:
    ``block...``, ``tree...``, ``sampling``; every other rule is SPEC 1-8's)."""
    for family in ("sampling", "block", "tree"):
        if rule == family or rule.startswith(family + "-"):
            return family
    return "core"


class UnknownSuite(LookupError):
    """A suite name (or ``name@version``) that is not in :data:`SUITES_PATH` (HTTP 404)."""


@dataclass(frozen=True)
class SuiteConfig:
    """One config of a suite: ``id`` (kebab-case, unique in the suite), ``config`` (the full
    JSON form) and ``exercises`` (names from :data:`EXERCISES`)."""

    id: str
    config: dict
    exercises: tuple[str, ...]

    def to_json(self) -> dict:
        """``{"id", "config", "exercises"}``."""
        return {"id": self.id, "config": self.config, "exercises": list(self.exercises)}


@dataclass(frozen=True)
class Suite:
    """A published suite: ``name``, ``version`` (1, 2, ...: a change of configs is a new
    version), ``covers`` (the families of :data:`FAMILIES` its configs and guarantees belong
    to), ``description`` and its ``configs`` in order."""

    name: str
    version: int
    covers: tuple[str, ...]
    description: str
    configs: tuple[SuiteConfig, ...]

    @property
    def pinned(self) -> str:
        """``name@version``: the name that means this version forever."""
        return f"{self.name}@{self.version}"

    def to_json(self) -> dict:
        """``{"name", "version", "covers", "description", "configs": [...]}`` (``GET /v1/grade/suites/{name}``)."""
        return {"name": self.name, "version": self.version, "covers": list(self.covers),
                "description": self.description, "configs": [c.to_json() for c in self.configs]}

    def summary(self) -> dict:
        """``{"name", "version", "versions", "covers", "description", "count"}`` (an entry of
        ``GET /v1/grade/suites``: the newest version, and every version published)."""
        versions = [s.version for s in published() if s.name == self.name]
        return {"name": self.name, "version": self.version, "versions": versions, "covers": list(self.covers),
                "description": self.description, "count": len(self.configs)}


def suite_of_json(data: dict) -> Suite:
    """A :class:`Suite` from its JSON form (an entry of ``suites.json``)."""
    return Suite(data["name"], data["version"], tuple(data["covers"]), data["description"],
                 tuple(SuiteConfig(c["id"], c["config"], tuple(c["exercises"])) for c in data["configs"]))


@lru_cache(maxsize=1)
def published() -> tuple[Suite, ...]:
    """Every published version of every suite, in the file's order (read once)."""
    data = json.loads(SUITES_PATH.read_text(encoding="utf-8"))
    return tuple(suite_of_json(s) for s in data["suites"])


def suites() -> dict[str, Suite]:
    """The newest version of every suite, by name, in the order the names were first published."""
    newest: dict[str, Suite] = {}
    for s in published():
        if s.name not in newest or s.version > newest[s.name].version:
            newest[s.name] = s
    return newest


def suite(name: str) -> Suite:
    """The suite called ``name`` (its newest version) or ``name@N`` (exactly version N); raises
    :class:`UnknownSuite` naming the known suites (or the versions of that name)."""
    base, _, version = name.partition("@")
    found = suites().get(base)
    if found is None:
        raise UnknownSuite(f"no suite named {base!r}: the suites are {', '.join(suites())}")
    if not version:
        return found
    versions = {str(s.version): s for s in published() if s.name == base}
    if version not in versions:
        raise UnknownSuite(f"no version {version!r} of the {base} suite: its versions are "
                           f"{', '.join(base + '@' + v for v in versions)}")
    return versions[version]


def _block_exercises(block: dict) -> set:
    """The SPEC 10 rules a block of mode block exercises (read off its records)."""
    found = set()
    if any(v["accepted"] and not v["below_threshold"] for v in block["verification"]):
        found.add("block-later-pass")
    correction = block["correction"]
    if correction is not None and correction["index"] > 1 and correction["weight_exact"] != "1":
        found.add("block-scaled-correction")
    return found


def exercises(config: Config, trace: dict) -> tuple[str, ...]:
    """The names of :data:`EXERCISES` that the reference ``trace`` of ``config`` exercises, in
    :data:`EXERCISES` order. Every name is read off the trace's own blocks (its proposals,
    decisions, corrections and bonuses) and the config's settings."""
    eos = None if config.eos is None else config.vocab[config.eos]
    found: set[str] = set()
    if not isinstance(config.target.to_json(), str):
        found.add("custom-vocabulary")
    if config.mode in ("greedy", "autoregressive", "block", "tree"):
        found.add(config.mode)
    found |= _sampling_exercises(config)
    for block in trace["blocks"]:
        if block["mode"] == "block":
            found |= _block_exercises(block)
        elif block["mode"] == "tree":
            found |= _tree_exercises(block)
        if block["mode"] == "autoregressive":
            continue
        if config.limit - len(block["prefix"]) < config.width:
            found.add("limit-clips-width")
        found |= _eos_exercises(block, eos)
        correction, bonus = block["correction"], block["bonus"]
        if block["mode"] == "greedy":
            found |= _greedy_exercises(block)
            continue
        if block["mode"] != "block" and any(v.get("ratio") is not None and v["ratio"] >= 1 for v in block["verification"]):
            found.add("certain-acceptance")
        if correction is not None:
            found.add("first-position-rejection" if correction["index"] == 1 else "later-rejection")
            if correction["token"] == eos:
                found.add("eos-corrected")
        if block["discarded"]:
            found.add("discarded-proposals")
        if bonus is not None:
            found.add("bonus")
        if block["no_bonus"] == "limit":
            found.add("no-bonus-at-limit")
    return tuple(name for name in EXERCISES if name in found)


def _sampling_exercises(config: Config) -> set[str]:
    """What a config's sampling parameters exercise (SPEC 9): rows processed before any rule reads them."""
    sampling = config.sampling
    return set() if sampling is None or sampling.empty else {"sampling"}


def _eos_exercises(block: dict, eos) -> set[str]:
    """What a block exercises of SPEC 6: an EOS drafted; an EOS accepted."""
    if eos is None:
        return set()
    found = {"eos-drafted"} if eos in block["proposal"]["tokens"] else set()
    if any(v["accepted"] and v["token"] == eos for v in block["verification"]):
        found.add("eos-accepted")
    return found


def _greedy_exercises(block: dict) -> set[str]:
    """What a greedy block exercises (SPEC 5): an argmax tie; a mismatch, a bonus, or neither."""
    found: set[str] = set()
    rows = [s["q"] for s in block["proposal"]["steps"]] + [v["p"] for v in block["verification"]]
    if any(row.count(max(row)) > 1 for row in rows):
        found.add("argmax-tie")
    correction, bonus = block["correction"], block["bonus"]
    found.add("greedy-mismatch" if correction is not None else "greedy-bonus" if bonus is not None else "greedy")
    return found


def _tree_exercises(block: dict) -> set[str]:
    """What a tree block exercises (SPEC 11.2): a sibling accepted after a rejection at the same
    depth; a chain leaving the accepted path."""
    found: set[str] = set()
    tests = block["verification"]
    if tests and "alive" not in tests[0]:  # a SPEC 12 tree walked node by node
        return _node_exercises(block)
    for before, test in zip(tests, tests[1:]):
        if test["accepted"] and not before["accepted"] and before["depth"] == test["depth"]:
            found.add("tree-sibling-accepted")
    accepted = [t for t in tests if t["accepted"]]
    if accepted and len(accepted[-1]["alive"]) < len(block["proposal"]["chains"]):
        found.add("tree-chain-left")
    return found


def _node_exercises(block: dict) -> set[str]:
    """What a block of a SPEC 12 tree exercises (12.1-12.4): a distinct sibling tested after a
    rejection, a target-only test, one that rejects every child, a repeated chain token, a
    threshold below 1 accepting where the lossless test would not."""
    found: set[str] = set()
    tests = block["verification"]
    for before, test in zip(tests, tests[1:]):
        if "law" in test and not before["accepted"] and before["parent"] == test["parent"]:
            found.add("tree-distinct-sibling")
    for test in tests:
        if "u_acc" in test:
            found.add("tree-target-only")
            if test["by"] == "single" or (test["accepted"] and test["draw"]["u"] >= test["acc"]):
                found.add("tree-lossy-threshold")
    if tests and "u_acc" in tests[-1] and block["correction"] is not None:
        found.add("tree-target-only-miss")
    firsts = [chain[0] for chain in block["proposal"].get("chains", []) if chain]
    if len(set(firsts)) < len(firsts):
        found.add("tree-repeated-token")
    return found


def config_of(entry: SuiteConfig) -> Config:
    """The engine config of a suite entry."""
    return parse_config(entry.config)
