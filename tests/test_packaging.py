"""``pip install . ./client`` (the README's first command) installs what the wheels
hold, while the test suite runs from editable installs: build both wheels from
copies of the sources and check that every module and data file of each package
is inside (a subpackage missing from the packaging only shows in a real install),
that the metadata states the licence as an SPDX expression with the LICENSE file
shipped, and that the build prints no deprecation warning. Both sdists hold their
package and its metadata, and no test: the suite runs only in the repository
(MANIFEST.in)."""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {".py", ".typed", ".json", ".yaml", ".html", ".css", ".js", ".svg"}  # .typed: the SDK's PEP 561 marker


def built_wheel(tmp_path: Path, project: Path, top: str, package_root: str) -> tuple[zipfile.ZipFile, str]:
    """The wheel of ``project`` built by pip from a copy of its sources, and the build's
    output (pip -v shows what the build backend printed)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(project / name, source / name)
    shutil.copytree(project / package_root, source / package_root,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    wheel, = tmp_path.glob("*.whl")
    return zipfile.ZipFile(wheel), build.stdout + build.stderr


@pytest.mark.parametrize("project, package_root, package", [
    (ROOT / "client", "specdec_client", "specdec_client"),
    (ROOT, "service", "specdec_service"),
], ids=["client", "service"])
def test_the_wheel_holds_every_file_of_the_package(tmp_path, project, package_root, package):
    wheel, log = built_wheel(tmp_path, project, package, package_root)
    names = set(wheel.namelist())
    where = project if package_root == package else project / package_root  # the folder the package is in
    files = [p for p in (where / package).rglob("*")
             if p.is_file() and p.suffix in SHIPPED and "__pycache__" not in p.parts]
    assert len(files) > 10
    missing = [str(p.relative_to(where)) for p in files if str(p.relative_to(where)) not in names]
    assert not missing, f"not in the {package} wheel: {missing}"

    # The licence: an SPDX expression (PEP 639), the LICENSE file inside the wheel.
    metadata, = (name for name in names if name.endswith(".dist-info/METADATA"))
    headers = wheel.read(metadata).decode("utf-8").split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert not [h for h in headers if h.startswith("License:")], "the deprecated License field is back"
    licence, = (name for name in names if name.endswith(".dist-info/licenses/LICENSE"))
    assert wheel.read(licence) == (ROOT / "LICENSE").read_bytes()
    # setuptools warns (e.g. `project.license` as a TOML table) through DeprecationWarning subclasses
    warnings = sorted(set(re.findall(r"\w*DeprecationWarning: [^\n]*", log)))
    assert not warnings, f"building the {package} wheel warns: {warnings}"


def test_the_sdk_ships_the_same_licence():
    """client/ is a package of its own (``pip install ./client``): it carries the licence text too."""
    assert (ROOT / "client" / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_both_packages_carry_the_same_kinds_of_metadata():
    """The service's wheel describes itself as the SDK's does: keywords and classifiers (status,
    audiences, Python versions, topics); each names the same Python versions as requires-python."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: pytest brings tomli there
        import tomli as tomllib
    service, sdk = (tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                    for path in (ROOT, ROOT / "client"))
    for meta in (service, sdk):
        assert meta["keywords"] and meta["requires-python"] == ">=3.10"
    shared = [c for c in sdk["classifiers"] if c.startswith(("Development Status", "Intended Audience",
                                                              "Programming Language", "Topic :: Education"))]
    missing = [c for c in shared if c not in service["classifiers"]]
    assert not missing, f"the service's pyproject.toml lacks the SDK's classifiers {missing}"


def test_every_direct_dependency_has_one_floor():
    """.ci/run's floor step installs each direct dependency at its ``>=`` floor
    (.ci/floors.py): every requirement of both pyproject.toml files has one, the same
    package has the same floor everywhere, and the floors found failing stay raised
    (issue 18: Flask 3.0 has no per-request ``max_content_length`` setter, so the
    grading routes answered 500; apispec 6.6 wrote a nullable reference as
    ``type: ['null']`` + ``allOf``; orjson before 3.9.15 reads a body nested 50,000
    deep, which its own writer then refuses: a 500 where 3.9.15 refuses to read past
    depth 1,024, a 400; orjson before 3.13 reads an integer beyond 64 bits
    as a float, which the grading routes' fast float64 reading would have to vouch for; jsonschema-rs before 0.60.1 finds -1e-999999999 not below a
    minimum of 0)."""
    from packaging.version import Version

    floors, problems = runpy.run_path(str(ROOT / ".ci" / "floors.py"))["floors"]()
    assert not problems
    assert {"flask", "werkzeug", "apispec", "orjson", "jsonschema-rs", "requests", "setuptools"} <= set(floors)
    for package, lowest in {"flask": "3.1", "apispec": "6.8.1", "orjson": "3.13", "jsonschema-rs": "0.60.1",
                            "setuptools": "77"}.items():
        assert Version(floors[package]) >= Version(lowest), f"{package}>={floors[package]} is below {lowest}"


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
