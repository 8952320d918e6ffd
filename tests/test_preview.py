"""The preview's text and its refusal to start a server."""

from __future__ import annotations

import pytest

from omni_web.book import count_words, load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ChapterSelectionError, ServerNotRunning
from omni_web.pipeline import ConvertRequest
from omni_web.preview import PREVIEW_MAX_WORDS, preview_request, preview_text
from omni_web.server import ServerManager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR

QWEN = get_entry("qwen3_tts_0_6b_customvoice")
HIGGS = get_entry("higgs_audio_v3_tts")


def test_preview_text_is_the_first_body_chunk_of_the_first_selected_chapter():
    book = load_book(DATA_DIR / "wasteland.epub")
    text = preview_text(book, None, entry=QWEN, chunk_words=400)  # default selection starts at chapter 2
    assert 0 < count_words(text) <= PREVIEW_MAX_WORDS
    assert text != book.chapters[1].title
    assert text.split()[0] in " ".join(block.text for block in book.chapters[1].blocks)
    short = preview_text(book, (3,), entry=QWEN, chunk_words=20)
    assert count_words(short) <= 30  # whole sentences packed up to about the chunk size
    assert preview_text(book, (3,), entry=HIGGS, chunk_words=400) == preview_text(book, (3,), entry=HIGGS,
                                                                                    chunk_words=80)


def test_preview_text_refuses_chapters_the_book_lacks():
    with pytest.raises(ChapterSelectionError, match="there is no chapter 9"):
        preview_text(load_book(DATA_DIR / "hefty-water.epub"), (9,), entry=QWEN, chunk_words=120)


def test_preview_never_starts_a_server(data_paths):
    settings = Settings(server_port=9)  # nothing listens there
    manager = ServerManager(data_paths, settings)
    request = ConvertRequest(DATA_DIR / "hefty-water.epub", QWEN.key, VoiceChoice.speaker("Vivian"))
    with pytest.raises(ServerNotRunning, match="Start it in the Server tab"):
        preview_request(request, paths=data_paths, settings=settings, server=manager,
                        out_path=data_paths.root / "p.wav")
    assert manager.owned_record() is None and not (data_paths.root / "p.wav").exists()
