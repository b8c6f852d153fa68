"""The SDK's module graph has no circle, not even through imports made only
for type checkers (``if TYPE_CHECKING:``): the transport knows no route, the
API groups know the transport and the types, the client knows them all."""

import ast
from pathlib import Path

import specdec_client

PACKAGE = Path(specdec_client.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every specdec_client module ``path`` imports, at any level of the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found.update(c for c in candidates if c in MODULES and c != name)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


def test_the_import_graph_has_no_circle():
    state: dict = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == "open":
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [node])


def test_the_layers():
    assert GRAPH["specdec_client.transport"] == {"specdec_client.errors"}
    for group in ("meta", "draws", "sessions", "runs", "grading"):
        assert "specdec_client.client" not in GRAPH[f"specdec_client.api.{group}"]
    for module in ("specdec_client.session", "specdec_client.traces"):
        assert "specdec_client.client" not in GRAPH[module]
    assert {"specdec_client.api.sessions", "specdec_client.session", "specdec_client.traces",
            "specdec_client.transport"} <= GRAPH["specdec_client.client"]
