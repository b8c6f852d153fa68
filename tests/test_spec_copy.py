"""docs/SPEC.md is the repository's copy of the normative rules, so that links and error
messages that cite "SPEC section N" work in any clone. The copy is the repository's source, and
the tests need nothing outside the repository: the copy is checked against its recorded hash (a
new version of the rule book is taken in deliberately, with the hash, in one commit)."""

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "SPEC.md"
SPEC_SHA256 = "0c3ae9e120f86fd5aebf6b3a5dcf0923f8d502f6b0d3bc103e339795686ced66"
"""The hash of the rule book this repository follows: a change of docs/SPEC.md is deliberate
(update it here in the same commit)."""


def test_the_copy_names_every_section_the_code_cites():
    text = SPEC.read_text(encoding="utf-8")
    for section in range(1, 13):  # 9 sampling, 10 block, 11 several drafts, 12 draft trees
        assert f"## {section}." in text


def test_the_copy_is_the_recorded_rule_book():
    assert hashlib.sha256(SPEC.read_bytes()).hexdigest() == SPEC_SHA256


def test_the_copy_says_which_z_the_hex_is():
    # Section 2 (wording of the shared rule book): the raw value is z after the xor-shift by 31
    # and before the final shift by 11, as docs/trace-format.md says too.
    text = SPEC.read_text(encoding="utf-8")
    assert "`z = z ^ (z >> 31)`" in text and "`z >> 11`" in text and "`910a2dec89025cc1`" in text
    assert "issue" not in text.split("## 1.")[0]  # the preamble no longer mentions issues


def test_the_copy_has_the_settings_and_modes_of_sections_8_to_11():
    # Section 8 lists `sampling` and `drafts` among the settings; sections 10 and 11 name the modes.
    text = SPEC.read_text(encoding="utf-8")
    settings = text.split("## 8.")[1].split("## 9.")[0]
    assert "`sampling`, `drafts`" in settings
    assert "## 10. Block verification (mode `block`)" in text
    assert "## 11. Several drafts (mode `tree`)" in text
