"""The dependency floors as pip constraints, for .ci/run's floor step.

``python .ci/floors.py`` prints one ``name==version`` line for each direct
dependency of the service and the SDK (``dependencies``, every optional extra
and ``[build-system] requires`` of ./pyproject.toml and client/pyproject.toml),
``version`` being its ``>=`` lower bound. ``uv pip compile`` with these lines as
constraints pins every direct dependency at its floor (transitive ones take
their newest compatible release, as ``--resolution lowest-direct`` does), and
fails when the floors cannot be installed together.

Exits 1, naming each one, when a requirement has no single ``>=`` floor, or
when the same package has different floors in different places (the lower
one would never be tested).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings tomli there
    import tomli as tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ("pyproject.toml", "client/pyproject.toml")


def requirements(pyproject: dict) -> list[str]:
    """Every requirement string of one parsed pyproject.toml."""
    project = pyproject["project"]
    found = list(pyproject.get("build-system", {}).get("requires", []))
    found += project.get("dependencies", [])
    for extra in project.get("optional-dependencies", {}).values():
        found += extra
    return found


def floors(projects: tuple[str, ...] = PROJECTS) -> tuple[dict[str, str], list[str]]:
    """(package -> floor, problems) over ``projects`` (paths under the repository root)."""
    seen: dict[str, dict[str, set[str]]] = {}  # package -> floor -> files stating it
    problems = []
    for name in projects:
        for text in requirements(tomllib.loads((ROOT / name).read_text(encoding="utf-8"))):
            requirement = Requirement(text)
            lows = [spec.version for spec in requirement.specifier if spec.operator == ">="]
            if len(lows) != 1:
                problems.append(f"{name}: {text!r} needs exactly one >= floor")
                continue
            seen.setdefault(canonicalize_name(requirement.name), {}).setdefault(lows[0], set()).add(name)
    for package, by_floor in seen.items():
        if len(by_floor) > 1:
            stated = "; ".join(f">={floor} in {', '.join(sorted(files))}" for floor, files in by_floor.items())
            problems.append(f"{package}: different floors ({stated})")
    return {package: next(iter(by_floor)) for package, by_floor in sorted(seen.items())}, problems


def main() -> int:
    found, problems = floors()
    for problem in problems:
        print(f".ci/floors.py: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("\n".join(f"{package}=={floor}" for package, floor in found.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
