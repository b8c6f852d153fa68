"""``pip install . ./client`` (the README's first command) installs what the wheels
hold, while the test suite runs from editable installs: build both wheels from
copies of the sources and check that every module and data file of each package
is inside (a subpackage missing from the packaging only shows in a real install)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {".py", ".typed", ".json", ".yaml", ".html", ".css", ".js", ".svg"}  # .typed: the SDK's PEP 561 marker


def built_wheel(tmp_path: Path, project: Path, top: str, package_root: str) -> set[str]:
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(project / name, source / name)
    shutil.copytree(project / package_root, source / package_root,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                   check=True, timeout=600)
    wheel, = tmp_path.glob("*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


@pytest.mark.parametrize("project, package_root, package", [
    (ROOT / "client", "specdec_client", "specdec_client"),
    (ROOT, "service", "specdec_service"),
], ids=["client", "service"])
def test_the_wheel_holds_every_file_of_the_package(tmp_path, project, package_root, package):
    names = built_wheel(tmp_path, project, package, package_root)
    where = project if package_root == package else project / package_root  # the folder the package is in
    files = [p for p in (where / package).rglob("*")
             if p.is_file() and p.suffix in SHIPPED and "__pycache__" not in p.parts]
    assert len(files) > 10
    missing = [str(p.relative_to(where)) for p in files if str(p.relative_to(where)) not in names]
    assert not missing, f"not in the {package} wheel: {missing}"
