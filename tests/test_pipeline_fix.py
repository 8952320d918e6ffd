"""A regenerate's plan: the chapters it rebuilds under the book's own mastering, and why it waits."""

from __future__ import annotations

from pathlib import Path

from omni_web.jobs import JobState, JobStore
from omni_web.library import fix_wait_reason, same_server_work
from omni_web.paths import DataPaths
from omni_web.pipeline.fix import FIX_KEY, FixPlan, plan_fix
from omni_web.pipeline.mastering import request_master_options
from omni_web.pipeline.request import ConvertRequest
from omni_web.settings import Settings
from omni_web.ui.jobview import job_detail_html

MODEL = "qwen3_tts_0_6b_customvoice"
FILES = {"1": "001-aaaa.wav", "2": "002-bbbb.wav", "3": "003-cccc.wav"}


def _mastered(parts: Path, request: ConvertRequest, settings: Settings, *numbers: int) -> None:
    key = request_master_options(request, settings).key
    for number in numbers:
        (parts / f"{Path(FILES[str(number)]).stem}.{key}.json").write_text("{}", encoding="utf-8")


def test_a_fix_rebuilds_its_chapter_with_the_kept_mastering_though_the_settings_changed(
    tmp_path: Path,
) -> None:
    made_with = Settings()
    request = ConvertRequest(book_path=tmp_path / "b.epub", model_key=MODEL).with_mastering(made_with)
    _mastered(tmp_path, request, made_with, 1, 2, 3)
    changed = Settings(aac_bitrate_kbps=96, loudness="r128")
    plan = plan_fix(request, FILES, tmp_path, (2,), changed)
    assert plan == FixPlan(chapters=(2,), reused=(1, 3))
    assert (
        plan.message
        == "Only chapter 2 is rebuilt; the other 2 chapters are reused as they are, then the book files."
    )
    assert request.mastering_settings(changed).aac_bitrate_kbps == 64
    assert ConvertRequest.from_dict(request.to_dict()) == request  # kept through the job's params
    # A chapter whose mastered files are gone is rebuilt too, and named.
    (tmp_path / f"003-cccc.{request_master_options(request, made_with).key}.json").unlink()
    assert plan_fix(request, FILES, tmp_path, (2,), changed).chapters == (2, 3)


def test_a_book_made_before_its_mastering_was_kept_says_it_is_re_mastered_whole(tmp_path: Path) -> None:
    old = ConvertRequest(book_path=tmp_path / "b.epub", model_key=MODEL)  # no kept mastering
    _mastered(tmp_path, old, Settings(), 1, 2, 3)
    same = plan_fix(old, FILES, tmp_path, (1,), Settings())
    assert same.reused == (2, 3) and not same.whole_book
    whole = plan_fix(old, FILES, tmp_path, (1,), Settings(pause_between_chapters_ms=900))
    assert whole.chapters == (1, 2, 3) and whole.whole_book
    assert whole.message.startswith("This fix re-masters the whole book (3 chapters): it was made before")


def test_a_waiting_fix_says_why_on_its_job_page(data_paths: DataPaths) -> None:
    store = JobStore(data_paths.jobs_db)
    params = ConvertRequest(book_path=Path("b.epub"), model_key=MODEL).to_dict()
    long = store.enqueue("convert", {**params, "model_key": "other_model"}, title="Long Book")
    store.claim_next()
    fix = store.enqueue(
        "convert", {**params, FIX_KEY: FixPlan((4,), (1, 2, 3)).to_dict()}, title="Fix", priority=100
    )
    running = [store.get(long.id)]
    assert store.get(long.id).state is JobState.RUNNING
    why = fix_wait_reason(fix, running, queue_paused=False, shares_server=same_server_work)
    assert "once 'Long Book' is done: that job uses another model or server" in why
    assert fix_wait_reason(fix, [], queue_paused=False, shares_server=same_server_work) == ""
    assert "queue is paused" in fix_wait_reason(
        fix, running, queue_paused=True, shares_server=same_server_work
    )
    page = job_detail_html(fix, 1, running=running)
    assert "Only chapter 4 is rebuilt; the other 3 chapters are reused" in page and "Long Book" in page
