"""The names ``convert`` runs claim: the same request gets its name back, another one never shares it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ReviewError
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.claims import OutputClaims
from omni_web.pipeline.review import job_review_target, open_review
from tests.conftest import DATA_DIR

BOOK = DATA_DIR / "hefty-water.epub"
ENTRY = get_entry("qwen3_tts_0_6b_customvoice")


def _request(voice: str = "Vivian", **changes: object) -> ConvertRequest:
    # The flat layout: these names are the ones earlier versions claimed (tests/deliver has the library's).
    request = ConvertRequest(
        book_path=BOOK, model_key=ENTRY.key, voice=VoiceChoice.speaker(voice), output_layout="flat"
    )
    return dataclasses.replace(request, **changes)


def test_the_same_request_gets_its_name_back_and_other_requests_get_their_own(data_paths: DataPaths) -> None:
    claims, book, out = OutputClaims(data_paths.output_claims_file), load_book(BOOK), data_paths.outputs_dir
    first = claims.name_for(_request(), out, book, ENTRY)
    assert first == "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian)"
    # Where the server is and how many requests fly change nothing in the audio: the same files.
    assert claims.name_for(_request(api_url="http://gpu:8000", concurrency=3), out, book, ENTRY) == first
    assert (
        claims.name_for(_request("Ryan"), out, book, ENTRY)
        == "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Ryan)"
    )
    # Same voice, other settings: other audio, so a numbered copy instead of writing over the first.
    assert claims.name_for(_request(chunk_words=40), out, book, ENTRY) == f"{first} (2)"
    # Another output folder holds nothing of this book: the plain name there.
    assert claims.name_for(_request(), out / "elsewhere", book, ENTRY) == first
    # Names a web UI job holds are skipped too; all of it survives a new process (a file).
    again = OutputClaims(data_paths.output_claims_file)
    assert (
        again.name_for(_request(loudness="acx"), out, book, ENTRY, claimed={f"{first} (3)"}) == f"{first} (4)"
    )
    assert again.name_for(_request(chunk_words=40), out, book, ENTRY) == f"{first} (2)"
    assert {first, f"{first} (2)", f"{first} (4)"} <= again.names()


def test_an_unreadable_claims_file_costs_a_numbered_copy_never_a_file(data_paths: DataPaths) -> None:
    book, out = load_book(BOOK), data_paths.outputs_dir
    folder = out / "Unknown Author" / "Hefty Water"
    folder.mkdir(parents=True)
    (folder / "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian).m4b").write_bytes(b"an earlier book")
    data_paths.output_claims_file.write_text("{not json", encoding="utf-8")
    name = OutputClaims(data_paths.output_claims_file).name_for(_request(), out, book, ENTRY)
    assert name == "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian) (2)"
    assert json.loads(data_paths.output_claims_file.read_text())["claims"][0]["name"] == name


def test_a_web_ui_job_never_takes_a_name_the_command_line_claimed(data_paths: DataPaths) -> None:
    from omni_web.services import AppServices

    # Both in the library layout, the default a web UI job takes from the settings.
    cli_name = OutputClaims(data_paths.output_claims_file).name_for(
        _request(output_layout="library"), data_paths.outputs_dir, load_book(BOOK), ENTRY
    )
    assert cli_name == "Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"
    services = AppServices.create(data_paths)  # not started: the job only waits in the queue
    job = services.library.submit_conversion(_request())
    assert job.params["output_name"] == "Hefty Water (2) {Vivian - Qwen3-TTS 0.6B CustomVoice}"


def test_review_finds_a_jobs_own_report_in_a_folder_that_holds_two_books(tmp_path: Path) -> None:
    folder = tmp_path / "Hefty Water"
    folder.mkdir()
    for voice in ("Vivian", "Ryan"):
        report = {
            "chunks": [],
            "counts": {},
            "title": "Hefty Water",
            "cache_dir": str(tmp_path / "cache"),
            "request": _request(voice).to_dict(),
        }
        (folder / f"Hefty Water - Q ({voice}).qa.json").write_text(json.dumps(report), encoding="utf-8")
        (folder / f"Hefty Water - Q ({voice}).m4b").write_bytes(b"")
    with pytest.raises(ReviewError, match=r"reports of 2 books .*pass the m4b"):
        open_review(folder)
    ryan = open_review(folder / "Hefty Water - Q (Ryan).m4b")
    assert ryan.request.voice.name == "Ryan"
    result = {
        "output_dir": str(folder),
        "m4b": str(folder / "Hefty Water - Q (Vivian).m4b"),
        "qa_report": str(folder / "Hefty Water - Q (Vivian).qa.json"),
    }
    assert open_review(job_review_target(result, "job1")).request.voice.name == "Vivian"
    with pytest.raises(ReviewError, match="has no book yet"):
        job_review_target({}, "job2")


def test_a_jobs_read_along_downloads_are_its_own_in_a_folder_shared_with_another_voice(
    tmp_path: Path,
) -> None:
    from omni_web.jobs import Job, JobState
    from omni_web.ui.readalong import readalong_downloads

    folder = tmp_path / "Hefty Water"
    folder.mkdir()
    for voice in ("Vivian", "Ryan"):
        (folder / f"Hefty Water - Q ({voice}).readalong.epub").write_bytes(b"PK")
        for ext in ("vtt", "srt"):
            (folder / f"Hefty Water - Q ({voice}) - 01 - Bloom.{ext}").write_text("WEBVTT\n")
    result = {
        "output_dir": str(folder),
        "readalong_epub": str(folder / "Hefty Water - Q (Ryan).readalong.epub"),
    }
    job = Job(id="j1", kind="convert", title="Hefty Water", state=JobState.DONE, params={}, result=result)
    epub, subtitles = readalong_downloads(job)
    assert epub == result["readalong_epub"]
    assert [Path(p).name for p in subtitles] == [
        "Hefty Water - Q (Ryan) - 01 - Bloom.vtt",
        "Hefty Water - Q (Ryan) - 01 - Bloom.srt",
    ]
