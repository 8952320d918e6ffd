"""A managed two-worker group behind the REAL SGLang-Omni router when workers die mid-book.

A chunk that kills every worker it reaches (a poison chunk) fails alone and the book is delivered;
workers that die every 25 requests still finish the book; a Stop that lands while the group is
being restarted is never undone. The workers are the fake `sgl-omni serve` (tests/fakes), the
router the wheel's own `sgl-omni-router-py` (see test_router_group.py for the setup).
"""

from __future__ import annotations

import pytest

from omni_web.assemble import probe_chapters
from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ServerNotRunning, ServerUnreachable
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, convert_served
from omni_web.server.group import group_pids
from tests.conftest import DATA_DIR
from tests.contract.test_router_group import _alive, _kill_group, _manager, _wait, group_home  # noqa: F401
from tests.test_serving_faults import check_book_without, poison_phrase

pytestmark = pytest.mark.contract

MODEL = "qwen3_tts_0_6b_customvoice"
HEFTY = DATA_DIR / "hefty-water.epub"
WASTELAND = DATA_DIR / "wasteland.epub"


def test_a_poison_chunk_on_a_two_worker_group_fails_alone_and_the_book_is_delivered(
    group_home: DataPaths, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    manager = _manager(group_home, concurrency=2)  # 2 x (2 + 1) requests in flight
    entry = get_entry(MODEL)
    request = ConvertRequest(book_path=HEFTY, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"))
    item, phrase = poison_phrase(request, manager.settings, index=12)
    monkeypatch.setenv("FAKE_SGL_CRASH_ON_TEXT", phrase)  # every worker inherits it
    serving = manager.ensure_serving(entry)
    try:
        docs = []
        result = convert_served(
            request, serving, paths=group_home, settings=manager.settings, progress=docs.append
        )
        check_book_without(result, item)
        assert docs[-1].phase == "done" and item.text[:40] in docs[-1].message
        assert len(serving.revived) >= 2  # it killed a worker each time it was sent: found within a few
    finally:
        manager.stop()


def test_workers_that_die_every_25_requests_still_finish_the_book(
    group_home: DataPaths,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_SGL_CRASH_AFTER_REQUESTS", "25")
    manager = _manager(group_home, concurrency=2)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    try:
        request = ConvertRequest(
            book_path=WASTELAND, model_key=MODEL, chapters=(1, 4), voice=VoiceChoice.speaker("Vivian")
        )
        result = convert_served(request, serving, paths=group_home, settings=manager.settings)
        assert not result.missing_chunks  # crashes that follow the request count frame no chunk
        assert [c.title for c in probe_chapters(result.m4b)] == [
            load_book(WASTELAND).chapters[i].title for i in (0, 3)
        ]
        assert len(serving.revived) >= 2  # 88 chunks over two workers: each died and came back
    finally:
        manager.stop()


def test_a_stop_during_a_group_restart_is_never_undone(
    group_home: DataPaths,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The router died, so recovering restarts the whole group; the user's Stop lands right after
    the job saw it dead. The restart must refuse (the Stop is read under the manager's lock), not
    bring the group back."""
    manager = _manager(group_home)
    serving = manager.ensure_serving(get_entry(MODEL))
    record = manager.group.record()
    _kill_group(record.router.pid)
    _wait(lambda: not _alive(record.router.pid), "the router to die", 30)
    seen_dead = manager.is_alive

    def stop_lands_now() -> bool:
        alive = seen_dead()
        manager.stop()  # the user's Stop, between the check and the restart
        return alive

    monkeypatch.setattr(manager, "is_alive", stop_lands_now)
    with pytest.raises(ServerNotRunning, match="stopped while the job"):
        serving.recover(ServerUnreachable("The router at ...: nothing answers"))
    monkeypatch.undo()
    assert manager.stop_requested
    assert manager.group.record() is None and not manager.is_alive()  # nothing was started again
    for pid in group_pids(record) + [w.record.pid for w in record.workers]:
        _wait(lambda pid=pid: not _alive(pid), f"pid {pid} to exit", 30)
