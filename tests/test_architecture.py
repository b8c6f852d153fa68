"""docs/architecture.md is true: its table names, for every SPEC section 1-12, a module that
exists and a test file that exists; every path it names exists; and the service's imports go
the one way it draws (engine <- budget <- grading <- api <- app, cli), counting imports made
inside functions and ``importlib.import_module("...")`` calls with a literal name; and every
module (or subpackage) name is unique in its package (service, SDK), the HTTP layer's ``api/``
modules aside: each is named after the routes it translates (``api/analysis.py`` answers
``POST /v1/analysis`` by calling ``engine/analysis.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "architecture.md"
SERVICE = ROOT / "service" / "specdec_service"
CLIENT = ROOT / "client" / "specdec_client"
ROW = re.compile(r"^\| (\d+) \| [^|]+ \| `([^`]+)` \| `([^`]+)` \|$")
# what each part of the service may import of the service (itself always)
MAY_IMPORT = {
    "engine": set(),
    "budget": {"engine"},
    "grading": {"engine", "budget"},
    "api": {"engine", "budget", "grading", "deadline", "observe"},
}


def _spec_rows() -> dict[int, tuple[str, str]]:
    rows = [ROW.match(line) for line in MAP.read_text(encoding="utf-8").splitlines()]
    return {int(m.group(1)): (m.group(2), m.group(3)) for m in rows if m}


def test_every_spec_section_has_a_module_and_a_test():
    rows = _spec_rows()
    assert sorted(rows) == list(range(1, 13))
    headings = re.findall(r"^## (\d+)\. ", (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8"), re.M)
    assert [int(h) for h in headings] == list(range(1, 13))
    for section, (module, test) in rows.items():
        assert (ROOT / module).is_file() and module.endswith(".py"), (section, module)
        assert (ROOT / test).is_file() and Path(test).name.startswith("test_"), (section, test)
        assert section in _cited(ROOT / module), (section, module)


def _cited(path: Path) -> set[int]:
    """The SPEC sections a module's docstring cites: ``SPEC section 9``, ``SPEC sections 4-7``,
    ``SPEC 12.3``, ``(SPEC\nsection 8)``."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    cited = set()
    for run in re.findall(r"SPEC(?:\s+sections?)?\s+(\d+(?:\.\d+)?(?:\s*(?:-|,|and)\s*\d+)*)", doc):
        for a, b in re.findall(r"(\d+)(?:\.\d+)?(?:\s*-\s*(\d+))?", run):
            cited.update(range(int(a), int(b or a) + 1))
    return cited


def test_the_citation_reading():
    assert _cited(SERVICE / "engine" / "block_loop.py") >= {4, 5, 6, 7}
    assert _cited(SERVICE / "engine" / "draws.py") == {2}


def test_every_path_the_map_names_exists():
    named = re.findall(r"`((?:engine|grading|api|tests|service|client)/[\w/.]+\.(?:py|md))`",
                       MAP.read_text(encoding="utf-8"))
    assert len(named) > 20
    for path in named:
        candidates = [ROOT / path, SERVICE / path]
        assert any(c.is_file() for c in candidates), path


def _imports(path: Path) -> set[str]:
    """The specdec_service modules ``path`` imports, at any depth of the file, as dotted names
    relative to the package (``engine.draws``, ``budget``)."""
    package = path.relative_to(SERVICE).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[:len(package) - node.level + 1])
                names = [".".join(base + ([node.module] if node.module else []))]
                if not node.module:  # `from .. import x`: module x, or a name of the package
                    names = [".".join(base + [a.name]) if _is_module(base + [a.name]) else ".".join(base)
                             for a in node.names]
            elif (node.module or "").startswith("specdec_service"):
                names = [node.module.partition(".")[2]]
        elif isinstance(node, ast.Import):
            names = [a.name.partition(".")[2] for a in node.names if a.name.startswith("specdec_service.")]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" \
                and node.args and isinstance(node.args[0], ast.Constant) \
                and str(node.args[0].value).startswith("specdec_service."):
            names = [str(node.args[0].value).partition(".")[2]]
        found.update(n for n in names if n)
    return found


def _is_module(parts: list[str]) -> bool:
    path = SERVICE.joinpath(*parts)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _part(dotted: str) -> str:
    return dotted.split(".")[0]


def test_the_reading_of_imports_sees_function_level_ones():
    seen = _imports(SERVICE / "cli.py")
    assert any(_part(n) == "api" for n in seen)  # cli imports .api inside a function


def test_the_service_imports_run_one_way():
    wrong = []
    for part, allowed in MAY_IMPORT.items():
        files = [SERVICE / f"{part}.py"] if (SERVICE / f"{part}.py").is_file() else sorted((SERVICE / part).rglob("*.py"))
        assert files, part
        for path in files:
            for target in _imports(path):
                if _part(target) not in allowed | {part, ""}:
                    wrong.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not wrong, "\n".join(wrong)


def _graph(under: Path) -> dict[str, set[str]]:
    """Module -> the modules of the service it imports (at any depth, as :func:`_imports`), for
    every module under ``under``; a package is its ``__init__``."""
    graph: dict[str, set[str]] = {}
    for path in sorted(under.rglob("*.py")):
        parts = list(path.relative_to(SERVICE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[name] = {t for t in _imports(path) if t != name}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, str] = {}

    def visit(node: str, stack: list[str]) -> list[str]:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack + [nxt])
                if found:
                    return found
        state[node] = "done"
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return []


def test_the_circle_finder_finds_one():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) == []


def test_the_service_has_no_import_circle():
    # the analysis modules, imports inside functions included: analysis -> tree_analysis, tree_law
    # -> chain_law, never back
    graph = _graph(SERVICE / "engine")
    assert "engine.chain_law" in graph["engine.tree_analysis"]
    assert "engine.analysis" not in graph["engine.tree_analysis"] | graph["engine.tree_law"]
    assert _circle(graph) == []
    assert _circle(_graph(SERVICE)) == []


def _names(package: Path) -> dict[str, list[str]]:
    """Name -> the modules and subpackages of ``package`` with that name (paths relative to it),
    outside ``api/`` (``__init__`` and ``__main__`` are not names of their own)."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(package)
        if relative.parts[0] in ("api", "static", "__pycache__") or "__pycache__" in relative.parts:
            continue
        if path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            found.setdefault(path.stem, []).append(str(relative))
        elif path.is_dir() and (path / "__init__.py").is_file():
            found.setdefault(path.name, []).append(f"{relative}/")
    return found


def test_the_name_reading_sees_modules_and_subpackages():
    names = _names(SERVICE)
    assert names["decoders"] == ["engine/decoders.py"]
    assert names["verifiers"] == ["engine/verifiers/"] and "block_loop" in names and "block" in names
    assert "routes" not in names  # api/ aside


def test_every_module_name_is_unique_in_its_package():
    # one name, one job: engine/block_loop.py (the block) beside engine/verifiers/block.py
    # (block verification), engine/decoders.py beside grading/check_names.py, engine/inputs.py
    # beside grading/submissions.py
    for package in (SERVICE, CLIENT):
        repeated = {name: paths for name, paths in _names(package).items() if len(paths) > 1}
        assert not repeated, (package.name, repeated)
