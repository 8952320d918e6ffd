"""The spoken form reaches the server, and a lexicon edit re-renders only the chunks it changes.

Checked against the fake sgl-omni's request log: every speech request body it received.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.cli import main
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, plan_conversion, run_conversion
from omni_web.settings import Settings
from omni_web.text import Lexicon, LexiconEntry, LexiconStore, Pronouncer, book_identity, edit_impact
from tests.epub_builder import make_epub, nav_xhtml, xhtml

pytestmark = pytest.mark.slow  # the fake server or subprocesses

FAST = {"FAKE_SGL_SECONDS_PER_WORD": "0.004"}
MODEL = "qwen3_tts_0_6b_customvoice"

CHAPTERS = [
    ("CHAPTER XIV", ["In 1851 Dr. Watson paid £3 10s. for the 3rd edition.",
                     "Hermione waited until 10:30 p.m. on 12 March.",
                     "Nothing here needs a lexicon."]),
    ("CHAPTER XV", ["Henry VIII and World War II, pp. 12-14, e.g. the 19th-century maps, etc.",
                    "I think I shall see Hermione again, said Mrs. Hudson."]),
    ("CHAPTER XVI", ["A quiet chapter with no names at all.", "It rained; 50% of the crowd left."]),
]


def _book(path: Path) -> Path:
    documents = []
    for number, (title, paragraphs) in enumerate(CHAPTERS, start=1):
        body = f"<h1>{title}</h1>" + "".join(f"<p>{p}</p>" for p in paragraphs)
        documents.append((f"ch{number}.xhtml", xhtml(body, title=title)))
    nav = nav_xhtml([(f"ch{n}.xhtml", t) for n, (t, _) in enumerate(CHAPTERS, start=1)])
    return make_epub(path, documents, nav=nav, title="Numbers and Names")


def _inputs(log: Path) -> list[str]:
    return (
        [json.loads(line)["input"] for line in log.read_text(encoding="utf-8").splitlines()]
        if log.exists()
        else []
    )


def _convert(paths: DataPaths, server, book: Path) -> None:
    request = ConvertRequest(
        book_path=book, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), chapters=(1, 2, 3)
    )
    with SpeechClient(server.base_url) as client:
        # 0.004 s a word is no speech: QA would retake every chunk (tested in test_qa_pipeline.py).
        run_conversion(request, paths=paths, settings=Settings(qa_level="off"), client=client)


def test_spoken_forms_are_sent_and_a_lexicon_edit_rerenders_only_its_chunks(
    data_paths: DataPaths, fake_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book_path = _book(tmp_path / "numbers.epub")
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={**FAST, "FAKE_SGL_REQUEST_LOG": str(log)})
    _convert(data_paths, server, book_path)
    sent = _inputs(log)
    assert "CHAPTER fourteen" in sent and "CHAPTER sixteen" in sent
    assert (
        "In eighteen fifty-one Doctor Watson paid three pounds ten shillings for the third edition." in sent
    )
    assert "Hermione waited until ten thirty PM on the twelfth of March." in sent
    assert (
        "Henry the Eighth and World War two, pages twelve to fourteen, for example the nineteenth-century "
        "maps, et cetera."
    ) in sent
    assert "I think I shall see Hermione again, said Missus Hudson." in sent
    assert not any(ch.isdigit() for text in sent for ch in text)

    # The CLI says how many chunks the edit touches before anything is rendered again.
    assert main(["lexicon", "add", "Hermione", "her-MY-oh-nee", "--book", str(book_path)]) == 0
    out = capsys.readouterr().out
    assert "This changes 2 chunks of" in out and "(chapters 1, 2)" in out

    first_count = len(sent)
    _convert(data_paths, server, book_path)
    again = _inputs(log)[first_count:]
    assert sorted(again) == sorted(
        [
            "her-MY-oh-nee waited until ten thirty PM on the twelfth of March.",
            "I think I shall see her-MY-oh-nee again, said Missus Hudson.",
        ]
    )


def test_plan_items_carry_the_spoken_text_and_impact_matches_keys(tmp_path: Path) -> None:
    book_path = _book(tmp_path / "numbers.epub")
    book = load_book(book_path)
    entry = get_entry(MODEL)
    request = ConvertRequest(book_path=book_path, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"))
    before = Pronouncer()
    after = Pronouncer(Lexicon().with_entry(LexiconEntry("Watson", "WOT-sun")))
    old = plan_conversion(book, request, entry, Settings(), pronouncer=before)
    new = plan_conversion(book, request, entry, Settings(), pronouncer=after)
    assert old.language == "en" and old.normalized
    assert old.chapters[0].chapter.title == "CHAPTER XIV"  # the chapter mark keeps the written title
    assert old.chapters[0].items[0].text == "CHAPTER fourteen"
    changed_keys = {i.key for i in new.items} - {i.key for i in old.items}
    impact = edit_impact(book, before=before, after=after, entry=entry, settings=Settings())
    assert impact.changed == len(changed_keys) == 1 and impact.chapters == (1,)
    assert "WOT-sun" in impact.examples[0].text
    # The per-model switch: ZONOS2 normalises by itself and gets the text as written.
    zonos = get_entry("zonos2")
    plain = plan_conversion(book, ConvertRequest(book_path=book_path, model_key="zonos2"), zonos, Settings())
    assert not plain.normalized and plain.chapters[0].items[0].text == "CHAPTER XIV"


def test_chapters_text_prints_what_is_sent(
    data_paths: DataPaths, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book_path = _book(tmp_path / "numbers.epub")
    LexiconStore(data_paths).save(
        Lexicon().with_entry(LexiconEntry("Watson", "WOT-sun")), book_identity(load_book(book_path))
    )
    assert main(["chapters", str(book_path), "--text", "1"]) == 0
    out = capsys.readouterr().out
    assert "[1] CHAPTER fourteen" in out
    assert "[2] In eighteen fifty-one Doctor WOT-sun paid three pounds ten shillings" in out
    assert main(["chapters", str(book_path), "--text", "9"]) == 1
    assert "no chapter 9" in capsys.readouterr().err
