"""The CLI starts light: ``--help`` and ``chapters`` import no web, server or speech-recognition stack.

Asserted on the modules a fresh interpreter has loaded, not on a timing (a loaded machine would
make a timing flaky); ``bench/bench_ingest.py`` measures the CPU seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from omni_web.cli import COMMANDS, build_parser
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # subprocesses

# What made `chapters` take 1.5 s of CPU before it read a byte (the API, the web UI, whisper).
_HEAVY = ("gradio", "fastapi", "starlette", "pydantic", "numpy", "faster_whisper", "ctranslate2", "httpx",
          "soundfile")
_PROBE = """
import json, sys
from omni_web.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))
"""


def _loaded(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=120,
                          check=False)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_help_imports_no_command_module() -> None:
    loaded = _loaded("--help")
    assert not loaded & set(_HEAVY), loaded & set(_HEAVY)
    modules = subprocess.run([sys.executable, "-c", _PROBE.replace("name.split('.')[0]", "name"), "--help"],
                             capture_output=True, text=True, timeout=120, check=False).stdout
    assert "omni_web.cli.convert" not in modules and "omni_web.book" not in modules


def test_chapters_of_a_pdf_imports_only_the_book_layer() -> None:
    loaded = _loaded("chapters", str(DATA_DIR / "pdfminer-pagelabels.pdf"))
    assert "pdfminer" in loaded  # the book was read
    assert not loaded & set(_HEAVY), loaded & set(_HEAVY)


def test_the_help_table_matches_what_the_modules_register() -> None:
    full = build_parser()
    registered = {action.dest: action.help for action in full._subparsers._group_actions[0]._choices_actions}  # noqa: SLF001
    assert registered == {name: text for name, (_module, text) in COMMANDS.items()}
    assert list(registered) == list(COMMANDS)  # same order in the help
