"""Guard tests on the shape of ``omni_web/``: no import cycles, no oversized files or functions.

Which imports make a cycle: every ``import`` statement in a module counts, whether it sits at
module level, inside a function, or under ``if TYPE_CHECKING:``. A deferred import keeps the
interpreter from tripping over a cycle, but the two modules still need each other: neither can be
read, tested or moved alone, and the layering of DESIGN.md (data flows down) is broken just the
same. Deferred imports are how the cycles this test was written for had been hidden
(``cli.cast`` → ``cli.convert`` inside a function, ``text.rules`` → ``text.roman`` inside a
function, ``render.crashes`` → ``render.renderer`` and ``ui.submit_flow`` → ``ui.generate`` under
``TYPE_CHECKING``), so counting only module-level imports would have found none of them.
Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``: those edges count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "omni_web"

# Edges left while their file is being rewritten elsewhere; each entry is a defect to remove.
PENDING_EDGES: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _targets(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    """The omni_web modules an import statement loads (a ``from pkg import sub`` names ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
    found = []
    for name in names:
        while name and name not in MODULES:  # "omni_web.x.Thing" -> "omni_web.x"
            name = name.rpartition(".")[0]
        if name.startswith("omni_web"):
            parts = name.split(".")
            found += [".".join(parts[:i]) for i in range(2, len(parts) + 1)]  # the packages run first
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the omni_web modules it imports anywhere in its source."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges.update(_targets(module, node, path.name == "__init__.py"))
        # A module's own packages are already running when it is imported: not an edge.
        graph[module] = {t for t in edges if t != module and not module.startswith(t + ".")}
        graph[module] -= {t for a, t in PENDING_EDGES if a == module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    found = cycles(graph)
    detail = [
        " <-> ".join(c) + ": " + "; ".join(f"{a} imports {b}" for a in c for b in sorted(graph[a] & set(c)))
        for c in found
    ]
    assert not found, "import cycles in omni_web/:\n" + "\n".join(detail)


def test_the_cycle_finder_sees_deferred_and_type_checking_imports() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from omni_web.render.item import RenderItem\n"
        "def f():\n    from omni_web.text import roman\n"
    )
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.update(_targets("omni_web.cli.cast", node, False))
    assert {"omni_web.render.item", "omni_web.text.roman", "omni_web.render", "omni_web.text"} <= found
