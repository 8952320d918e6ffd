"""The Jobs tab's read-along player, without a browser: which chapters it offers while a job runs,
what it renders, and that it never points the page at a file outside the output folder."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from omni_web.jobs import Job, JobState
from omni_web.readalong import ChapterTimings, SentenceTiming, timings_path
from omni_web.ui import readalong as player


def _timings(audio: Path) -> ChapterTimings:
    sentences = (SentenceTiming(0, 0, "Down the Rabbit-Hole", 0.0, 1.2, False),
                 SentenceTiming(1, 1, "Alice was <tired>.", 1.9, 4.0, False))
    return ChapterTimings(3, "Down the Rabbit-Hole", audio, 4.0, "asr", sentences)


def _job(rows: list[dict], state: JobState = JobState.RUNNING) -> Job:
    return Job(id="j1", kind="convert", title="Alice", state=state, params={}, progress={"chapters": rows})


def test_a_running_job_offers_each_chapter_as_soon_as_its_timings_exist(tmp_path: Path) -> None:
    ready = tmp_path / "003-a.flac"
    ready.write_bytes(b"fLaC")
    waiting = tmp_path / "004-b.flac"
    waiting.write_bytes(b"fLaC")
    timings_path(ready).write_text(json.dumps(_timings(ready).to_dict()))
    job = _job([{"number": 3, "title": "Down the Rabbit-Hole", "state": "ready", "audio_path": str(ready)},
                {"number": 4, "title": "The Pool of Tears", "state": "ready", "audio_path": str(waiting)},
                {"number": 5, "title": "A Caucus-Race", "state": "pending"}])
    assert player.readalong_chapters(job) == [("3. Down the Rabbit-Hole", "3")]


def test_player_html_marks_every_sentence_with_its_times_and_escapes_text(tmp_path: Path) -> None:
    html = player.player_html(_timings(tmp_path / "x.flac"), "/gradio_api/file=/out/x.flac")
    assert html.count('class="ra-s"') == 2
    assert 'data-start="1.900" data-end="4.000"' in html
    assert "&lt;tired&gt;" in html and "<tired>" not in html
    assert '<audio controls preload="metadata" src="/gradio_api/file=/out/x.flac">' in html


def test_audio_outside_the_output_folder_is_never_offered_to_the_page(tmp_path: Path) -> None:
    output = tmp_path / "outputs"
    output.mkdir()
    outside = tmp_path / "elsewhere" / "003-a.flac"
    outside.parent.mkdir()
    outside.write_bytes(b"fLaC")
    timings_path(outside).write_text(json.dumps(_timings(outside).to_dict()))
    inside = output / ".parts" / "book" / "003-a.flac"
    inside.parent.mkdir(parents=True)
    inside.write_bytes(b"fLaC")
    timings_path(inside).write_text(json.dumps(_timings(inside).to_dict()))
    ctx = SimpleNamespace(settings=SimpleNamespace(output_path=lambda paths: output), paths=None)
    refused = player._render(
        ctx, _job([{"number": 3, "title": "T", "state": "ready", "audio_path": str(outside)}]), "3"
    )
    assert "outside the app&#x27;s output folder" in refused and "gradio_api" not in refused
    shown = player._render(
        ctx, _job([{"number": 3, "title": "T", "state": "ready", "audio_path": str(inside)}]), "3"
    )
    assert f"/gradio_api/file={inside.resolve()}" in shown
