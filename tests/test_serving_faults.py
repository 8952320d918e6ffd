"""What a user keeps when the server fails mid-book: a poison chunk on one managed server, and a
foreign server that goes away (waited for with a status line, within the patience set in Settings).

The server is the fake `sgl-omni serve` (tests/fakes), managed by omni-web or started by the test
as a foreign one; books are read back with ffprobe, the QA report as the review list reads it.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ServerNotRunning
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, convert_served, plan_conversion, serving_for
from omni_web.pipeline.review import open_review, prepare_regenerate, review_rows
from omni_web.qa import Verdict, read_report
from omni_web.render import RenderItem, chunk_audio_path
from omni_web.server import ServerManager
from omni_web.settings import Settings, load_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port, start_fake_server
from tests.test_cli_convert import managed_home  # noqa: F401 - the fixture

pytestmark = pytest.mark.slow  # real ffprobe

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "hefty-water.epub"


def poison_phrase(request: ConvertRequest, settings: Settings, *, index: int) -> tuple[RenderItem, str]:
    """A chunk of the book and a few words of it that no other chunk holds."""
    plan = plan_conversion(load_book(request.book_path), request, get_entry(request.model_key), settings)
    texts = [item.text for item in plan.items]
    item = plan.items[index]
    words = item.text.split()
    for count in range(3, len(words) + 1):
        phrase = " ".join(words[:count])
        if sum(phrase in text for text in texts) == 1:
            return item, phrase
    raise AssertionError("no phrase of that chunk is its own")


def check_book_without(result, item: RenderItem) -> None:
    """The m4b has every chapter; the chunk is missing, named, and flagged in the QA report."""
    book = load_book(BOOK)
    assert result.m4b is not None and result.m4b.is_file()
    assert [c.title for c in probe_chapters(result.m4b)] == [c.title for c in book.chapters]
    (missing,) = result.missing_chunks
    assert (missing.key, missing.text, missing.chapter, missing.chunk) == (
        item.key, item.text, item.chapter_number, item.chunk_number)
    rows = {row.key: row for row in read_report(result.qa_report).chunks}
    assert rows[item.key].verdict is Verdict.FLAGGED and rows[item.key].text == item.text
    assert "crashed on this text" in rows[item.key].note
    assert sum(row.verdict is Verdict.FLAGGED for row in rows.values()) == 1


def test_a_poison_chunk_on_one_managed_server_fails_alone_and_the_book_is_delivered(
    managed_home, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    paths, _, _ = managed_home
    for name, value in {"FAKE_SGL_SECONDS_PER_WORD": "0.01", "FAKE_SGL_LATENCY_S": "0.05"}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings(paths)
    request = ConvertRequest(
        book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), concurrency=3
    )
    item, phrase = poison_phrase(request, settings, index=12)
    monkeypatch.setenv("FAKE_SGL_CRASH_ON_TEXT", phrase)  # the managed server inherits it
    manager = ServerManager(paths, settings)
    serving = serving_for(manager, get_entry(MODEL))
    try:
        first_pid = manager.owned_record().pid
        docs = []
        result = convert_served(request, serving, paths=paths, settings=settings, progress=docs.append)
        check_book_without(result, item)
        assert manager.owned_record().pid != first_pid  # it crashed, and was started again
        assert docs[-1].phase == "done" and item.text[:40] in docs[-1].message
        # The counts say it too: rendering is done with one chunk failed, and that chunk is named.
        rendering = docs[-1].phase_named("rendering")
        assert rendering.state == "done" and rendering.failed == 1 and docs[-1].chunks_failed == 1
        assert [item.text[:40] in line for line in docs[-1].failed_chunks] == [True]
        # Editing the chunk's text and regenerating it (the review path) rebuilds the book with it.
        target = open_review(result.qa_report)
        assert [(r.chapter, r.chunk) for r in review_rows(target)] == [
            (item.chapter_number, item.chunk_number)
        ]
        again = prepare_regenerate(
            target,
            item.chapter_number,
            item.chunk_number,
            text="The water was heavy, and the bucket was full.",
        )
        # Straight from the report: the same library folder and files are rebuilt, nothing beside them.
        rebuilt = convert_served(again, serving, paths=paths, settings=settings)
        assert not rebuilt.missing_chunks and rebuilt.m4b == result.m4b
        assert list(settings.output_path(paths).rglob("*.m4b")) == [result.m4b]
        assert len(probe_chapters(rebuilt.m4b)) == len(load_book(BOOK).chapters)
        assert rebuilt.duration_s != result.duration_s  # the new chunk's speech replaced a second of silence
        assert rebuilt.qa_report == result.qa_report and not review_rows(open_review(rebuilt.qa_report))
    finally:
        manager.stop()


def _foreign(paths: DataPaths, port: int, tmp_path: Path, name: str):
    return start_fake_server(
        MODEL,
        port=port,
        log_path=tmp_path / f"{name}.log",
        env={"FAKE_SGL_SECONDS_PER_WORD": "0.01", "FAKE_SGL_LATENCY_S": "0.05"},
    )


def test_a_foreign_server_that_goes_away_is_waited_for_and_the_job_goes_on(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    port = free_port()
    server = _foreign(data_paths, port, tmp_path, "first")
    settings = Settings(remote_url=f"http://127.0.0.1:{port}", qa_level="off", remote_patience_s=120)
    manager = ServerManager(data_paths, settings)
    serving = serving_for(manager, get_entry(MODEL))
    assert not serving.endpoint.owned
    request = ConvertRequest(
        book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), concurrency=2
    )
    docs, back, restarts = [], [], []
    down = threading.Event()

    def progress(doc) -> None:
        docs.append(doc)
        if doc.chunks_done >= 6 and not down.is_set():
            down.set()
            server.kill()  # the remote GPU box goes away mid-book ...

        if doc.message.startswith("Waiting for") and not restarts:
            restarts.append(
                threading.Thread(target=lambda: back.append(_foreign(data_paths, port, tmp_path, "second")))
            )
            restarts[0].start()  # ... and comes back a moment later

    try:
        result = convert_served(request, serving, paths=data_paths, settings=settings, progress=progress)
        waiting = [d.message for d in docs if d.message.startswith("Waiting for")]
        assert waiting and waiting[0].startswith(f"Waiting for http://127.0.0.1:{port}, down since ")
        # The status line is its own field (the CLI prints it), cleared when the server is back.
        assert any(d.server_status == waiting[0] for d in docs) and docs[-1].server_status == ""
        assert result.m4b is not None and len(probe_chapters(result.m4b)) == len(load_book(BOOK).chapters)
        assert not result.missing_chunks and docs[-1].phase == "done"
    finally:
        server.stop()
        for thread in restarts:
            thread.join(timeout=60)
        for again in back:
            again.stop()


def test_a_foreign_server_down_past_its_patience_fails_clearly_and_keeps_the_chunks(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    port = free_port()
    server = _foreign(data_paths, port, tmp_path, "only")
    settings = Settings(remote_url=f"http://127.0.0.1:{port}", qa_level="off", remote_patience_s=3)
    serving = serving_for(ServerManager(data_paths, settings), get_entry(MODEL))
    request = ConvertRequest(
        book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), concurrency=2
    )
    done: list[int] = []

    def progress(doc) -> None:
        done.append(doc.chunks_done)
        if doc.chunks_done >= 6 and server.is_alive():
            server.kill()

    try:
        with pytest.raises(
            ServerNotRunning, match=r"down since \d\d:\d\d .*patience set in Settings.*resume"
        ):
            convert_served(request, serving, paths=data_paths, settings=settings, progress=progress)
    finally:
        server.stop()
    plan = plan_conversion(load_book(BOOK), request, get_entry(MODEL), settings)
    kept = [i for i in plan.items if chunk_audio_path(data_paths.chunk_cache_dir, i.key).is_file()]
    assert len(kept) >= 6 and max(done) >= 6  # what was rendered before it went away is kept


def test_settings_keep_a_patience_for_foreign_servers(data_paths: DataPaths) -> None:
    assert Settings().remote_patience_s == 900.0
    with pytest.raises(Exception, match="remote_patience_s"):
        dataclasses.replace(Settings(), remote_patience_s=-1).validate()
