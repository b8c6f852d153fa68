"""The README, where a new user starts, names every route of the contract and every setting
docs/service.md's configuration table names (issue 22's /metrics, SPECDEC_LOG_FORMAT and
PROMETHEUS_MULTIPROC_DIR were in docs/service.md only)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLIENT_ONLY = {"SPECDEC_URL"}  # the SDK's command, not the service: README's table has it too


def _table(text: str) -> list[str]:
    rows = []
    for line in text[text.index("| variable | default | meaning |"):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(re.match(r"\| `([A-Z_]+)`", line).group(1))
    return rows


def test_readme_names_every_setting_of_the_service():
    service = _table((ROOT / "docs" / "service.md").read_text(encoding="utf-8"))
    readme = _table(README)
    assert {"SPECDEC_LOG_FORMAT", "PROMETHEUS_MULTIPROC_DIR"} <= set(service)
    assert set(service) - set(readme) == set()
    assert set(readme) - set(service) <= CLIENT_ONLY


def test_readme_names_every_route_of_the_contract():
    routes = re.search(r"The routes: (.*?)\n\n", README, re.S).group(1)
    paths = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))["paths"]
    missing = [path for path in paths
               if f"`{path}`" not in routes and not re.search(rf"[ `]{re.escape(path)}[`\[]", routes)
               and not (path.endswith("/{name}") and path[: -len("/{name}")] + "[/{name}]" in routes)]
    assert missing == [], f"README's 'The routes:' paragraph does not name {missing}"
