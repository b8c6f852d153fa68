"""``pip install . ./client`` (the README's first command) installs what the wheels
hold, while the test suite runs from editable installs: build both wheels from
copies of the sources and check that every module and data file of each package
is inside (a subpackage missing from the packaging only shows in a real install).
Both sdists hold their package and its metadata, and no test: the suite runs only
in the repository (MANIFEST.in)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
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


NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "node_modules", "__pycache__", "*.egg-info", ".run", "build",
                                     "dist", ".hypothesis", ".pytest_cache")
"""What a clone does not hold (or an sdist build makes): left out of the copy an sdist is built from."""


def built_sdist(tmp_path: Path, project: Path) -> list[str]:
    """The members of the sdist of ``project`` (built from a copy, in an isolated environment
    with the build-system's setuptools, as ``python -m build`` does for an index), without
    the top folder ``name-version/``."""
    source = tmp_path / "src"
    shutil.copytree(project, source, ignore=NOT_SOURCES)
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path / "dist"), str(source)],
                   check=True, timeout=600, capture_output=True)
    sdist, = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        return [member.name.split("/", 1)[1] for member in archive.getmembers()
                if member.isfile() and "/" in member.name]


@pytest.mark.parametrize("project, package_root, package", [
    (ROOT / "client", "", "specdec_client"),
    (ROOT, "service/", "specdec_service"),
], ids=["client", "service"])
def test_the_sdist_holds_the_package_and_no_test(tmp_path, project, package_root, package):
    """No test file without its conftest and fixtures (issue 22: the service's sdist had 44):
    the package's files, its egg-info, and the project's metadata files, nothing else."""
    names = built_sdist(tmp_path, project)
    metadata = {"PKG-INFO", "pyproject.toml", "README.md", "setup.cfg", "MANIFEST.in"}
    other = [name for name in names if name not in metadata and not name.startswith("LICENSE")
             and not name.startswith((f"{package_root}{package}/", f"{package_root}{package}.egg-info/"))]
    assert not other, f"the {package} sdist holds files outside its package: {other}"
    tests = [name for name in names if name.rsplit("/", 1)[-1].startswith(("test_", "conftest"))]
    assert not tests, f"the {package} sdist holds tests: {tests}"
    where = project / package_root
    files = [str(p.relative_to(where)) for p in (where / package).rglob("*")
             if p.is_file() and p.suffix in SHIPPED and "__pycache__" not in p.parts]
    missing = [name for name in files if f"{package_root}{name}" not in names]
    assert len(files) > 10 and not missing, f"not in the {package} sdist: {missing}"
