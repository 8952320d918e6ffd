"""The UI's Services protocol says what the UI calls, and the app's services provide all of it."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from omni_web.services import AppServices
from omni_web.ui.context import Services

UI = Path(__file__).resolve().parent.parent / "omni_web" / "ui"


def _declared() -> set[str]:
    tree = ast.parse((UI / "context.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == Services.__name__)
    names = {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return names | {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}


def test_the_ui_uses_only_what_the_services_protocol_declares() -> None:
    used = {
        m.group(1) for p in UI.rglob("*.py") for m in re.finditer(r"\bservices\.([a-z_]+)", p.read_text())
    }
    assert used, "the scan found no use at all"
    assert used <= _declared(), f"the UI calls services it does not declare: {sorted(used - _declared())}"


def test_app_services_provide_everything_the_protocol_declares() -> None:
    fields = (
        {f.name for f in dataclasses.fields(AppServices)} if dataclasses.is_dataclass(AppServices) else set()
    )
    missing = [name for name in _declared() if name not in fields and not hasattr(AppServices, name)]
    assert not missing, f"AppServices lacks {missing}"
