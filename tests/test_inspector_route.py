"""``GET /`` serves the inspector from the package: every file the page
references is served, nothing is loaded from another origin, the
Content-Security-Policy says so, and a built wheel ships the files
(``pyproject.toml`` package-data). The page's behaviour is tested in a real
browser in ``tests/browser/``."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path


from specdec_service.api.inspector import CONTENT_SECURITY_POLICY, INSPECTOR_DIR

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = re.compile(r"""(?:src|href)="(/[^"]*)"|from\s+"(\.[^"]+)"|import\s+"(\.[^"]+)\"""")
FOREIGN = re.compile(r"""(?:https?:)?//(?!www\.w3\.org/2000/svg)[a-z0-9.-]+\.[a-z]{2,}""", re.IGNORECASE)


def referenced(client, path: str, seen: set[str]) -> None:
    """Fetch ``path`` and, recursively, every same-origin file it references."""
    if path in seen:
        return
    seen.add(path)
    response = client.get(path)
    assert response.status_code == 200, path
    if path.endswith((".html", ".js", ".css")) or path == "/":
        text = response.get_data(as_text=True)
        for absolute, relative, bare in REFERENCES.findall(text):
            target = absolute or str(Path(path).parent / (relative or bare)).replace("\\", "/")
            if target.startswith("/") and not target.startswith("//") and target != "/openapi.yaml":
                referenced(client, target.split("#")[0], seen)


def test_root_is_the_inspector_page_with_its_policy(client):
    response = client.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY and "script-src 'self'" in CONTENT_SECURITY_POLICY
    html = response.get_data(as_text=True)
    for name in ("Draft", "Verify", "Step", "Run", "Reset"):
        assert f">{name}</button>" in html
    for label in ("Target", "Draft model", "Mode", "Width", "Seed", "Limit", "EOS"):
        assert re.search(rf'<label for="[a-z-]+">{label}</label>', html), label


def test_every_referenced_file_is_served_with_its_type(client):
    seen: set[str] = set()
    referenced(client, "/", seen)
    served = {path.rsplit("/", 1)[1] for path in seen if path.startswith("/static/inspector/")}
    assert served == {p.name for p in INSPECTOR_DIR.iterdir() if p.name != "index.html"}
    assert client.get("/static/inspector/main.js").mimetype == "text/javascript"
    assert client.get("/static/inspector/inspector.css").mimetype == "text/css"


def test_no_file_loads_anything_from_another_origin():
    for path in INSPECTOR_DIR.iterdir():
        text = path.read_text(encoding="utf-8")
        assert FOREIGN.findall(text) == [], path.name
        assert "<script>" not in text and " style=" not in text, path.name  # the CSP forbids inline code


def test_missing_asset_is_a_problem_404(client):
    response = client.get("/static/inspector/nope.js")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_built_wheel_ships_the_page(tmp_path):
    """``pip install .`` installs what a wheel holds: build one (from a copy of the
    sources, so no ``build/`` directory is left in the checkout) and look inside."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "service", source / "service", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, timeout=600)
    wheel, = tmp_path.glob("specdec_service-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in INSPECTOR_DIR.iterdir():
        assert f"specdec_service/static/inspector/{path.name}" in names


def test_vendored_axe_core_is_the_pinned_release():
    """tests/browser/vendor/axe.min.js is axe-core 4.14.1 from npm, as docs/inspector.md states,
    with its licence beside it."""
    vendor = ROOT / "tests" / "browser" / "vendor"
    data = (vendor / "axe.min.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
    assert data.startswith(b"/*! axe v4.14.1")
    assert "Mozilla Public License, version 2.0" in (vendor / "axe-core.LICENSE").read_text(encoding="utf-8")
    assert "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c" in (ROOT / "docs" / "inspector.md").read_text(encoding="utf-8")
