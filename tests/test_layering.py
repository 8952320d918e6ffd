"""Guard tests: the core never imports Gradio, and each module's __all__ names real objects."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "omni_web"
CORE_MODULES = [
    p for p in PACKAGE.rglob("*.py") if "ui" not in p.relative_to(PACKAGE).parts[:1]
]


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_does_not_import_gradio(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        assert not any(n.split(".")[0] == "gradio" for n in names), f"{path} imports gradio"


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_dunder_all_names_exist(path: Path) -> None:
    if path.name == "__main__.py":
        return
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    module = importlib.import_module(".".join(parts))
    for name in getattr(module, "__all__", []):
        assert hasattr(module, name), f"{module.__name__}.__all__ lists missing {name}"
