"""No "issue N" in the code, its docstrings or the public contract (the developers' guide): a
docstring says what a thing does and why; history lives in git. Scans every text file under
``service/`` and ``client/`` and the generated ``openapi.yaml``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"\bissues? [0-9]+", re.IGNORECASE)
SUFFIXES = {".py", ".js", ".html", ".css", ".toml", ".yaml", ".json", ".md", ".txt"}
NOT_YET: tuple[str, ...] = ()
"""Paths left out of the scan (none: every path is clean)."""


def _scanned() -> list[Path]:
    files = [ROOT / "openapi.yaml"]
    for top in ("service", "client"):
        files += [p for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                  and not any(part.startswith(".") or part in {"build", "__pycache__"}
                              or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)]
    return [p for p in files if not p.relative_to(ROOT).as_posix().startswith(NOT_YET)]


def test_the_scan_covers_the_code_and_the_contract():
    scanned = {p.relative_to(ROOT).as_posix() for p in _scanned()}
    assert "openapi.yaml" in scanned
    assert "service/specdec_service/engine/analysis.py" in scanned
    assert "client/specdec_client/cli.py" in scanned
    assert "client/pyproject.toml" in scanned


def test_the_pattern_finds_an_issue_number():
    assert HISTORY.search("the inspector (issue 14).")
    assert HISTORY.search("Issues 12 and 20")
    assert not HISTORY.search("an issue with the draft")


def test_no_issue_numbers_in_the_code_or_the_contract():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for p in _scanned()
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "\n".join(found)
