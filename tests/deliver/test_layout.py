"""The library layout: one folder per (book, narrator version), MP3 and ACX sets in their own trees;
the flat layout as before; flat books move into the library layout only on request."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from omni_web.assemble import AudiobookTags, probe_tags
from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.cli import main
from omni_web.client import VoiceChoice
from omni_web.deliver.layout import OutputLayout, book_place, claim_name, default_name
from omni_web.deliver.metadata import tags_for_paths
from omni_web.deliver.migrate import plan_migration
from omni_web.jobs import JobStore
from omni_web.qa import QaReport
from tests.conftest import DATA_DIR

pytestmark = pytest.mark.slow  # subprocesses, real ffmpeg

ENTRY = get_entry("qwen3_tts_0_6b_customvoice")
SERIES = AudiobookTags(title="Hefty Water", author="Ann Writer", series="The Water Cycle", series_part="2")


def test_library_place_of_a_series_book(tmp_path: Path) -> None:
    tags = tags_for_paths(load_book(DATA_DIR / "hefty-water-series.epub"))
    assert tags == SERIES
    name = claim_name(tmp_path, tags, ENTRY, VoiceChoice.speaker("Vivian"), layout=OutputLayout.LIBRARY)
    assert name == "Vol 2 - Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"
    place = book_place(tmp_path, tags, name, layout=OutputLayout.LIBRARY)
    relative = Path("Ann Writer", "The Water Cycle", name)
    assert place.m4b == tmp_path / relative / "Hefty Water.m4b"
    assert place.mp3_dir == tmp_path / "mp3" / relative and place.acx_dir == tmp_path / "acx" / relative
    assert not place.mp3_dir.is_relative_to(place.folder) and not place.acx_dir.is_relative_to(place.folder)
    assert place.beside(".readalong.epub") == place.folder / "Hefty Water.readalong.epub"
    # An MP3-only book is its own folder of tracks.
    assert (
        book_place(tmp_path, tags, name, layout=OutputLayout.LIBRARY, mp3_only=True).mp3_dir == place.folder
    )


def test_two_voices_get_two_folders_and_a_taken_folder_a_numbered_copy(tmp_path: Path) -> None:
    vivian = claim_name(tmp_path, SERIES, ENTRY, VoiceChoice.speaker("Vivian"), layout=OutputLayout.LIBRARY)
    ryan = claim_name(tmp_path, SERIES, ENTRY, VoiceChoice.speaker("Ryan"), layout=OutputLayout.LIBRARY)
    places = [book_place(tmp_path, SERIES, n, layout=OutputLayout.LIBRARY) for n in (vivian, ryan)]
    assert places[0].folder != places[1].folder and places[0].folder.parent == places[1].folder.parent
    places[0].acx_dir.mkdir(parents=True)  # only its ACX set is left: the name is still taken
    again = claim_name(tmp_path, SERIES, ENTRY, VoiceChoice.speaker("Vivian"), layout=OutputLayout.LIBRARY)
    assert again == vivian.replace(" {", " (2) {")  # ABS reads "{…}" only at the end


def test_flat_layout_is_the_old_one(tmp_path: Path) -> None:
    name = default_name(SERIES, ENTRY, VoiceChoice.speaker("Vivian"), OutputLayout.FLAT)
    assert name == "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian)"
    place = book_place(tmp_path, SERIES, name, layout=OutputLayout.FLAT)
    assert place.m4b == tmp_path / "Ann Writer" / "Hefty Water" / f"{name}.m4b"
    assert place.mp3_dir == tmp_path / "MP3" / "Ann Writer" / name
    assert place.acx_dir == place.folder / f"{name} - ACX"


def _flat_m4b(path: Path, *, title: str, author: str, narrator: str, series: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = [
        "-metadata",
        f"title={title}",
        "-metadata",
        f"artist={author}",
        "-metadata",
        f"composer={narrator}",
    ]
    if series:
        tags += ["-metadata", f"show={series}", "-metadata", "episode_id=2"]
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "anullsrc=r=24000:cl=mono",
            "-t",
            "0.5",
            "-c:a",
            "aac",
            *tags,
            str(path),
        ],
        check=True,
        timeout=60,
    )
    return path


def test_migrate_moves_flat_books_with_their_companions_only_on_request(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "outputs"
    stem = "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Vivian)"
    m4b = _flat_m4b(
        root / "Ann Writer" / "Hefty Water" / f"{stem}.m4b",
        title="Hefty Water",
        author="Ann Writer",
        narrator="Qwen3-TTS 0.6B CustomVoice (Vivian)",
        series="The Water Cycle",
    )
    other = _flat_m4b(
        root / "Ann Writer" / "Hefty Water" / "Hefty Water - Qwen3-TTS 0.6B CustomVoice (Ryan).m4b",
        title="Hefty Water",
        author="Ann Writer",
        narrator="Qwen3-TTS 0.6B CustomVoice (Ryan)",
    )
    folder = m4b.parent
    (folder / f"{stem}.readalong.epub").write_bytes(b"epub")
    (folder / f"{stem} - 01 - One.vtt").write_text("WEBVTT\n")
    QaReport(request={"output_name": stem}).write(folder / f"{stem}.qa.json")
    (folder / f"{stem} - ACX").mkdir()
    (folder / f"{stem} - ACX" / "01.mp3").write_bytes(b"mp3")
    (root / "MP3" / "Ann Writer" / stem).mkdir(parents=True)
    (root / "MP3" / "Ann Writer" / stem / "01 - One.mp3").write_bytes(b"mp3")
    home = tmp_path / "home"
    monkeypatch.setenv("OMNI_WEB_HOME", str(home))
    (home / "state").mkdir(parents=True, exist_ok=True)
    from omni_web.paths import DataPaths
    from omni_web.settings import Settings, save_settings

    paths = DataPaths(home)
    save_settings(paths, Settings(output_dir=str(root)))
    store = JobStore(paths.jobs_db)
    job = store.enqueue("convert", {"output_name": stem, "book_path": "x.epub"}, title="Hefty Water")
    store.claim_next()
    store.finish(
        job.id,
        __import__("omni_web.jobs", fromlist=["JobState"]).JobState.DONE,
        result={"m4b": str(m4b), "readalong_epub": str(folder / f"{stem}.readalong.epub")},
    )

    # Without --yes (and no terminal to ask) nothing moves.
    assert main(["outputs", "migrate"]) == 1 and m4b.is_file()
    plan = plan_migration(root)
    assert len(plan.books) == 2 and m4b.is_file()  # planning touches nothing
    assert main(["outputs", "migrate", "--yes"]) == 0
    new = (
        root / "Ann Writer" / "The Water Cycle" / "Vol 2 - Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"
    )
    assert sorted(p.name for p in new.iterdir()) == sorted(
        ["Hefty Water.m4b", "Hefty Water.readalong.epub", "Hefty Water - 01 - One.vtt", "Hefty Water.qa.json"]
    )
    assert probe_tags(new / "Hefty Water.m4b")["composer"] == "Qwen3-TTS 0.6B CustomVoice (Vivian)"
    relative = new.relative_to(root)
    assert (root / "acx" / relative / "01.mp3").is_file() and (
        root / "mp3" / relative / "01 - One.mp3"
    ).is_file()
    assert (
        not other.exists()
        and (
            root / "Ann Writer" / "Hefty Water {Ryan - Qwen3-TTS 0.6B CustomVoice}" / "Hefty Water.m4b"
        ).is_file()
    )
    assert not folder.exists() and not (root / "MP3").exists()
    report = QaReport.read(new / "Hefty Water.qa.json")
    assert report.request == {"output_name": new.name, "output_layout": "library"}
    moved = store.get(job.id)
    assert moved.result["m4b"] == str(new / "Hefty Water.m4b")
    assert moved.result["readalong_epub"] == str(new / "Hefty Water.readalong.epub")
    assert moved.params["output_name"] == new.name and moved.params["output_layout"] == "library"
    assert plan_migration(root).books == ()  # library books stay where they are


@pytest.mark.parametrize("layout", ["library", "flat"])
def test_layout_setting_is_checked(layout: str) -> None:
    from omni_web.errors import SettingsError
    from omni_web.settings import Settings

    assert Settings(output_layout=layout).validate().output_layout == layout
    with pytest.raises(SettingsError, match="output_layout"):
        Settings(output_layout="nested").validate()


def test_deleting_a_library_book_takes_its_sidecars_and_cover(tmp_path: Path) -> None:
    from omni_web.pipeline import ConvertProgress, ConvertResult
    from omni_web.pipeline.outputs import job_outputs, plan_output_removal

    folder = tmp_path / "Ann Writer" / "Hefty Water {Vivian, M}"
    folder.mkdir(parents=True)
    names = ["Hefty Water.m4b", "metadata.json", "Hefty Water.opf", "desc.txt", "reader.txt", "cover.jpg"]
    for name in names:
        (folder / name).write_bytes(b"x")
    result = ConvertResult.from_dict({"output_dir": str(folder), "m4b": str(folder / "Hefty Water.m4b")})
    assert sorted(p.name for p in job_outputs(result, ConvertProgress())) == sorted(names)
    plan_output_removal(tmp_path, job_outputs(result, ConvertProgress())).execute()
    assert not folder.exists() and not (tmp_path / "Ann Writer").exists()


def test_library_folders_are_known_by_name_numbered_copies_too() -> None:
    from omni_web.deliver.layout import is_library_folder

    assert is_library_folder(Path("Vol 2 - Hefty Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"))
    assert is_library_folder(Path("Hefty Water {Vivian, M} (2)"))
    assert not is_library_folder(Path("Hefty Water")) and not is_library_folder(
        Path("Hefty Water - M (Vivian)")
    )


@pytest.mark.parametrize("layout", ["library", "flat"])
def test_a_report_gives_back_the_claimed_name_also_one_written_with_the_file_stem(
    tmp_path: Path, layout: str
) -> None:
    from omni_web.pipeline import ConvertRequest
    from omni_web.pipeline.review import open_review

    place = book_place(
        tmp_path,
        SERIES,
        claim_name(tmp_path, SERIES, ENTRY, VoiceChoice.speaker("Vivian"), layout=OutputLayout(layout)),
        layout=OutputLayout(layout),
    )
    place.folder.mkdir(parents=True)
    request = ConvertRequest(
        book_path=tmp_path / "x.epub", model_key=ENTRY.key, output_name=place.name, output_layout=layout
    )
    report = place.beside(".qa.json")
    for stored in (place.name, place.stem, None):  # as claimed, as the stem before the fix, before names
        report.write_text(
            json.dumps(
                {
                    "request": {**request.to_dict(), "output_name": stored},
                    "chunks": [],
                    "cache_dir": str(tmp_path / "cache"),
                }
            )
        )
        again = open_review(report).request
        assert again.output_name == place.name, stored
        assert book_place(tmp_path, SERIES, again.output_name, layout=OutputLayout(layout)).m4b == place.m4b
