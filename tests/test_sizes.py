"""Guard test: small modules with one job each (STYLE.md): files under 500 lines, functions under 80.

A function that is an argparse table (most of its statements add arguments or sub-commands) may
be longer: splitting a list of flags hides the command line, it does not simplify it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "omni_web"
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80

# Files not split yet; each entry is a defect to remove, never one to add.
PENDING_FILES: set[str] = set()
# Functions not split yet, as "path:function"; each entry is a defect to remove, never one to add.
PENDING_FUNCTIONS: set[str] = set()

_ARGPARSE_CALLS = {"add_argument", "add_parser", "add_argument_group", "add_mutually_exclusive_group",
                   "add_subparsers", "set_defaults"}


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _is_argparse_table(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Most statements of the function call an argparse builder (``parser.add_argument(...)``)."""
    calls = 0
    for stmt in func.body:
        value = getattr(stmt, "value", None)
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr in _ARGPARSE_CALLS
        ):
            calls += 1
    return calls * 2 > len(func.body)


def long_functions(path: Path) -> list[tuple[str, int]]:
    """(name, lines) of each function in ``path`` over the limit, argparse tables excepted."""
    return long_functions_of(path.read_text())


def long_functions_of(source: str) -> list[tuple[str, int]]:
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES and not _is_argparse_table(node):
                found.append((node.name, lines))
    return found


def test_no_file_over_500_lines() -> None:
    over = {_rel(p): len(p.read_text().splitlines()) for p in _files()}
    over = {name: n for name, n in over.items() if n > MAX_FILE_LINES and name not in PENDING_FILES}
    assert not over, f"files over {MAX_FILE_LINES} lines (split them by noun): {over}"


def test_no_function_over_80_lines() -> None:
    over = [
        f"{_rel(p)}:{name} ({n} lines)"
        for p in _files()
        for name, n in long_functions(p)
        if f"{_rel(p)}:{name}" not in PENDING_FUNCTIONS
    ]
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines: {over}"


def test_the_pending_lists_name_only_what_is_still_too_long() -> None:
    # An entry whose file or function has shrunk must leave the list, so it cannot hide a new one.
    for name in PENDING_FILES:
        path = PACKAGE / name
        assert path.is_file() and len(path.read_text().splitlines()) > MAX_FILE_LINES, f"remove {name}"
    for entry in PENDING_FUNCTIONS:
        name, _, func = entry.partition(":")
        assert func in {f for f, _ in long_functions(PACKAGE / name)}, f"remove {entry}"


def test_an_argparse_table_is_told_from_a_long_function() -> None:
    table = "def register(p):\n" + "    p.add_argument('--x')\n" * 90
    logic = "def work(p):\n" + "    p = p + 1\n" * 90
    assert long_functions_of(table) == []
    assert long_functions_of(logic) == [("work", 91)]
