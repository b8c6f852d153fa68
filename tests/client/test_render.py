"""specdec_client.render: the text `specdec run` prints (4 decimals,
aligned columns, decisions, correction distribution, colour rules)."""

import io
import re

import pytest

from specdec_client import Trace
from specdec_client.render import Renderer, Style, can_encode, use_color

from .service_backend import run_body

VOCAB = ("A", "B", "C")


def lines_of(config, style=Style()):
    return Renderer(VOCAB, style).trace(Trace.from_dict(run_body(config)))


def test_the_worked_example_block():
    lines = lines_of({"draft": "biased", "seed": 1})
    assert lines[0] == "specdec run  target toy · draft biased · mode speculative · width 3 · seed 1 · limit 8"
    block1 = lines[2:lines.index("", 2)]
    assert block1[0] == "Block 1   prefix ∅   position 0"
    # draft: token, q of the token, u, position of the draw (SPEC section 4 worked example)
    assert block1[2].split() == ["1", "∅", "A", "0.8000", "0.5666", "0"]
    assert block1[4].split() == ["3", "A", "C", "0.0500", "0.9710", "2"]
    # verify: p, q, ratio, u, position, decision
    assert block1[6].split() == ["1", "∅", "A", "0.5000", "0.8000", "0.6250", "0.4444", "3", "✓", "accept", "(u", "<",
                                 "ratio)"]
    assert block1[7].split()[:10] == ["2", "A", "A", "0.2000", "0.8000", "0.2500", "0.4443", "4", "✗", "reject"]
    assert block1[8] == "  correction  after A: A 0.0000  B 0.7500  C 0.2500  u 0.7629 (pos 5) → C"
    assert block1[9:13] == ["  discarded   C", "  bonus       none (rejection)", "  committed   A C",
                            "  output      A C"]
    assert block1[13].split() == ["counters", "target_passes", "1", "draft_steps", "3", "accepted", "1", "rejected",
                                  "1"]
    assert block1[15] == "  position    0 → 6"


def test_columns_line_up():
    lines = lines_of({"draft": "biased", "seed": 1})
    for table in ("draft", "verify"):
        header = next(line for line in lines if line.lstrip().startswith(table))
        row = lines[lines.index(header) + 1]
        heads = [(m.start(), m.end()) for m in re.finditer(r"\S+", header)][1:]  # skip the table's name
        cells = [(m.start(), m.end()) for m in re.finditer(r"\S+", row)][:len(heads)]
        # i and the numbers are right-aligned, context and token left-aligned
        assert [h[1] for h in heads[:1] + heads[3:]] == [c[1] for c in cells[:1] + cells[3:]]
        assert [h[0] for h in heads[1:3]] == [c[0] for c in cells[1:3]]


def test_bonus_and_totals():
    lines = lines_of({"draft": "aligned", "seed": 1, "limit": 5})
    assert "  bonus       p after C: A 0.2500  B 0.2500  C 0.5000  u 0.8773 (pos 6) → C" in lines
    assert "  bonus       none (limit)" in lines
    assert lines[-5] == "Session   done (limit) after 2 blocks, position 9"
    assert lines[-4] == "  output      B C C C C   (5 tokens)"
    assert lines[-3].split() == ["counters", "target_passes", "2", "draft_steps", "4", "accepted", "4", "rejected", "0"]
    assert lines[-2].split() == ["discarded", "0", "bonus_tokens", "1", "committed", "5", "draws", "9"]
    assert lines[-1] == "  per pass    2.5000 tokens per target pass · acceptance rate 4/4 = 1.0000"


def test_greedy_has_no_draws():
    lines = lines_of({"draft": "biased", "seed": 2, "limit": 3, "mode": "greedy"})
    assert "  correction  after A: A 0.2000  B 0.6000  C 0.2000  (no draw: argmax) → B" in lines
    assert any(line.endswith("✗ reject  (not the target's argmax)") for line in lines)


def test_autoregressive_shows_each_sample():
    lines = lines_of({"draft": "biased", "seed": 2, "limit": 2, "mode": "autoregressive"})
    assert "  sample      p after ∅: A 0.5000  B 0.3000  C 0.2000  u 0.5912 (pos 0) → B" in lines
    assert not any(line.startswith(("  draft ", "  verify ", "  bonus ", "  discarded ")) for line in lines)


def test_colour_and_ascii_styles():
    coloured = lines_of({"draft": "biased", "seed": 1}, Style(color=True))
    assert any("\033[32m✓ accept\033[0m" in line for line in coloured)
    assert any("\033[31m✗ reject\033[0m" in line for line in coloured)
    plain = "\n".join(lines_of({"draft": "biased", "seed": 1}, Style(unicode=False)))
    assert "ACCEPT" in plain and "REJECT" in plain and "\033[" not in plain
    plain.encode("ascii")


def test_long_distributions_wrap():
    labels = [f"tok{i:02d}" for i in range(20)]
    lines = Renderer(labels).distribution([0.05] * 20, "  correction  after x: ", "u 0.1000 (pos 1) → tok01", 24)
    assert len(lines) > 1 and all(len(line) <= 100 for line in lines)
    assert all(line.startswith(" " * 24) for line in lines[1:])
    assert lines[-1].endswith("→ tok01")


class Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("env, choice, stream, expected", [
    ({}, "auto", Tty(), True), ({}, "auto", io.StringIO(), False), ({"NO_COLOR": "1"}, "auto", Tty(), False),
    ({"NO_COLOR": ""}, "auto", Tty(), True), ({"TERM": "dumb"}, "auto", Tty(), False),
    ({"NO_COLOR": "1"}, "always", io.StringIO(), True), ({}, "never", Tty(), False),
    ({"FORCE_COLOR": "1"}, "auto", io.StringIO(), True), ({"FORCE_COLOR": ""}, "auto", io.StringIO(), False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, "auto", Tty(), False), ({"FORCE_COLOR": "1"}, "never", Tty(), False),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, "auto", io.StringIO(), True),
])
def test_use_color(monkeypatch, env, choice, stream, expected):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert use_color(stream, choice) is expected


def test_can_encode():
    assert can_encode(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert not can_encode(io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
