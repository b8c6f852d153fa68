"""docs/SPEC.md is the repository's copy of the normative rules
(../shared/SPEC.md beside a checkout), so that links and error messages that
cite "SPEC section N" work in any clone."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "SPEC.md"


def test_the_copy_names_every_section_the_code_cites():
    text = (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8")
    for section in range(1, 9):
        assert f"## {section}." in text


@pytest.mark.skipif(not SHARED.exists(), reason="no ../shared/SPEC.md beside this checkout")
def test_the_copy_equals_the_shared_rule_book():
    assert (ROOT / "docs" / "SPEC.md").read_bytes() == SHARED.read_bytes()
