"""Each job's files stay its own: names claimed at submit, twins refused, deletion planned then done,
re-runs of finished jobs; nothing outside the output folder is ever removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice, VoiceKind
from omni_web.deliver.layout import OutputLayout
from omni_web.errors import JobError, JobExists
from omni_web.jobs import JobState
from omni_web.paths import DataPaths
from omni_web.pipeline.outputs import claim_output_name, job_place, plan_output_removal
from omni_web.pipeline.request import ConvertRequest
from omni_web.services import AppServices
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "hefty-water.epub"


def _voice(name: str) -> VoiceChoice:
    return VoiceChoice(kind=VoiceKind.SPEAKER, name=name)


def _request(voice: str = "Vivian", **changes) -> ConvertRequest:
    fields = {"chapters": (1, 2), "chunk_words": 120, **changes}
    return ConvertRequest(book_path=BOOK, model_key=MODEL, voice=_voice(voice), **fields)


@pytest.fixture
def services(data_paths: DataPaths) -> AppServices:
    return AppServices.create(data_paths)  # the worker is not started: jobs stay queued


@pytest.mark.parametrize("layout", list(OutputLayout))
def test_names_carry_the_narrator_and_number_collisions(tmp_path: Path, layout: OutputLayout) -> None:
    book = load_book(BOOK)
    entry = get_entry(MODEL)
    first = claim_output_name(tmp_path, book, entry, _voice("Vivian"), layout=layout)
    narrator = (
        "{Vivian - Qwen3-TTS 0.6B CustomVoice}"
        if layout is OutputLayout.LIBRARY
        else "Qwen3-TTS 0.6B CustomVoice (Vivian)"
    )
    assert (
        first == f"Hefty Water {narrator}" if layout is OutputLayout.LIBRARY else f"Hefty Water - {narrator}"
    )
    other_voice = claim_output_name(tmp_path, book, entry, _voice("Ryan"), layout=layout, claimed={first})
    assert other_voice != first and "Ryan" in other_voice
    # Another job with the same narrator (e.g. other chapters): a numbered copy, never the same name.
    second = claim_output_name(tmp_path, book, entry, _voice("Vivian"), layout=layout, claimed={first})
    copy = first.replace(" {", " (2) {") if layout is OutputLayout.LIBRARY else f"{first} (2)"
    assert second == copy
    # A file already on disk counts as taken even when no job claims it.
    place = job_place(tmp_path, book, first, layout=layout)
    place.m4b.parent.mkdir(parents=True)
    place.m4b.write_bytes(b"m4b")
    assert claim_output_name(tmp_path, book, entry, _voice("Vivian"), layout=layout) == copy


def test_submit_claims_distinct_names_and_refuses_a_twin(services: AppServices) -> None:
    vivian = services.library.submit_conversion(_request("Vivian"))
    ryan = services.library.submit_conversion(_request("Ryan"))
    names = [ConvertRequest.from_dict(job.params).output_name for job in (vivian, ryan)]
    assert all(names) and names[0] != names[1]
    with pytest.raises(JobExists) as caught:
        services.library.submit_conversion(_request("Vivian"))
    assert caught.value.job_id == vivian.id and vivian.id in str(caught.value)
    assert services.library.find_twin(_request("Vivian")).id == vivian.id
    # Other chapters are other work: queued, with a numbered name of its own.
    other = services.library.submit_conversion(_request("Vivian", chapters=(1,)))
    assert ConvertRequest.from_dict(other.params).output_name == names[0].replace(" {", " (2) {")
    assert len(services.library.jobs.list()) == 3


def test_deleting_a_job_removes_only_its_own_files(services: AppServices, data_paths: DataPaths) -> None:
    outputs = data_paths.outputs_dir
    mine = services.library.submit_conversion(_request("Vivian"))
    theirs = services.library.submit_conversion(_request("Ryan"))
    shared = outputs / ".parts" / "book" / "001.flac"
    own_chapter = outputs / ".parts" / "book" / "002.flac"
    m4b = outputs / "A" / "B" / "mine.m4b"
    reports = [
        m4b.with_name("mine.qa.json"),
        m4b.with_name("mine.levels.json"),
        m4b.with_name("mine.readalong.epub"),
        m4b.with_name("mine - 01 - One.vtt"),
        m4b.with_name("mine - ACX") / "01.mp3",
    ]
    their_subtitle = m4b.with_name("theirs - 01 - One.vtt")
    for path in (shared, own_chapter, m4b, *reports, their_subtitle):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 1000)
    outside = data_paths.root / "precious.txt"
    outside.write_text("not ours")
    mine_result = {
        "m4b": str(m4b),
        "qa_report": str(reports[0]),
        "levels_path": str(reports[1]),
        "readalong_epub": str(reports[2]),
        "acx_dir": str(reports[4].parent),
        "chapters": [{"path": str(shared)}, {"path": str(own_chapter)}, {"path": str(outside)}],
    }
    for job, result in ((mine, mine_result), (theirs, {"m4b": None, "chapters": [{"path": str(shared)}]})):
        services.library.jobs.claim_next()
        services.library.jobs.finish(job.id, JobState.DONE, result=result)
    with pytest.raises(JobError):
        services.library.plan_job_deletion(
            services.library.submit_conversion(_request("Aiden")).id
        )  # still queued
    plan = services.library.plan_job_deletion(mine.id)
    assert set(plan.files.files) == {m4b.resolve(), own_chapter.resolve(), *(p.resolve() for p in reports)}
    assert plan.files.size_bytes == 7000 and "7 files" in plan.summary and "7.0 KB" in plan.summary
    assert m4b.exists()  # planning removes nothing
    assert plan.execute() == 7
    assert not m4b.exists() and not own_chapter.exists() and not any(p.exists() for p in reports)
    assert not reports[4].parent.exists()  # its ACX folder, emptied, is gone too
    # Another job's file (a shared chapter, the other voice's subtitle beside the same book) and a
    # file outside the output folder stay.
    assert shared.exists() and their_subtitle.exists() and outside.exists()
    assert [job.id for job in services.library.jobs.list() if job.id in (mine.id, theirs.id)] == [theirs.id]


def test_removal_never_leaves_the_output_folder(tmp_path: Path) -> None:
    root = tmp_path / "out"
    root.mkdir()
    outside = tmp_path / "keep.m4b"
    outside.write_bytes(b"x")
    sneaky = root / ".." / "keep.m4b"
    plan = plan_output_removal(root, [outside, sneaky])
    assert plan.files == () and plan.execute() == 0 and outside.exists()


def test_a_finished_job_can_run_again(services: AppServices) -> None:
    job = services.library.submit_conversion(_request())
    with pytest.raises(JobError):
        services.library.jobs.rerun(job.id)  # queued: not finished
    services.library.jobs.claim_next()
    services.library.jobs.finish(job.id, JobState.DONE, result={"m4b": "x.m4b"})
    again = services.library.jobs.rerun(job.id)
    assert again.state is JobState.QUEUED and dict(again.result) == {} and again.params == job.params


def test_two_mp3_only_jobs_of_one_book_keep_their_own_files_and_reports(
    data_paths: DataPaths, fake_server
) -> None:
    from omni_web.client import SpeechClient
    from omni_web.pipeline import run_conversion
    from omni_web.settings import Settings
    from tests.test_pipeline import FAST

    server = fake_server("qwen3_tts_0_6b_customvoice", env=FAST)
    results = []
    for voice in ("Vivian", "Ryan"):
        request = _request(
            voice,
            chapters=(2,),
            output_format="mp3",
            output_layout="flat",
            output_name=f"Hefty Water - Qwen3-TTS 0.6B CustomVoice ({voice})",
        )
        with SpeechClient(server.base_url) as client:
            results.append(
                run_conversion(request, paths=data_paths, settings=Settings(qa_level="off"), client=client)
            )
    vivian, ryan = results
    assert vivian.mp3_dir != ryan.mp3_dir and vivian.mp3_dir.name.endswith("(Vivian)")
    assert (
        vivian.levels_path != ryan.levels_path and vivian.levels_path.is_file() and ryan.levels_path.is_file()
    )
    assert vivian.levels_path.name == "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian).levels.json"
    assert list(vivian.mp3_dir.glob("*.mp3")) and list(ryan.mp3_dir.glob("*.mp3"))
