"""docs/SPEC.md is the repository's copy of the normative rules, so that links and error
messages that cite "SPEC section N" work in any clone. The copy is the repository's source, and
the tests need nothing outside the repository: the copy is checked against its recorded hash (a
new version of the rule book is taken in deliberately, with the hash, in one commit)."""

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "SPEC.md"
SPEC_SHA256 = "d7bf66e21bb672bc88503ce7be37fa7e3097275ee7c076e83c0bb0ed9deeba1d"
"""The hash of the rule book this repository follows: a change of docs/SPEC.md is deliberate
(update it here in the same commit)."""


def test_the_copy_names_every_section_the_code_cites():
    text = SPEC.read_text(encoding="utf-8")
    for section in range(1, 9):
        assert f"## {section}." in text


def test_the_copy_is_the_recorded_rule_book():
    assert hashlib.sha256(SPEC.read_bytes()).hexdigest() == SPEC_SHA256


def test_the_copy_says_which_z_the_hex_is():
    # Section 2 (wording of the shared rule book): the raw value is z after the xor-shift by 31
    # and before the final shift by 11, as docs/trace-format.md says too.
    text = SPEC.read_text(encoding="utf-8")
    assert "`z = z ^ (z >> 31)`" in text and "`z >> 11`" in text and "`910a2dec89025cc1`" in text
    assert "issue" not in text.split("## 1.")[0]  # the preamble no longer mentions issues
