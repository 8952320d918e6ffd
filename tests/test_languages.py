"""The one language table: names and tags to ISO 639 codes, for every layer that needs a code."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.book.txt import language_code as book_language
from omni_web.languages import language_code
from omni_web.qa.asr import language_code as whisper_language


@pytest.mark.parametrize(
    ("choices", "code"),
    [(("English",), "en"), (("auto", "fr-CA"), "fr"), (("Auto", None, ""), ""), (("Français",), "fr"),
     (("Cantonese",), "yue"), (("esperanto",), "eo"), (("und", "de_AT"), "de")],
)
def test_language_code_reads_names_and_tags(choices: tuple[str | None, ...], code: str) -> None:
    assert language_code(*choices) == code


def test_every_layer_reads_the_one_table() -> None:
    # Whisper wants None for "detect it"; a book keeps a full tag it was given.
    assert whisper_language("Japanese") == "ja" and whisper_language("Auto") is None
    assert book_language("Esperanto") == "eo" and book_language("en-GB") == "en-GB"
    package = Path(__file__).resolve().parent.parent / "omni_web"
    copies = [
        p for p in package.rglob("*.py") if '"english": "en"' in p.read_text() and p.name != "languages.py"
    ]
    assert not copies, f"a second language table: {copies}"
