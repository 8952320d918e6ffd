"""`python -m omni_web cast` and `convert --dialogue-voice / --cast` against the fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.cast import load_cast_file, saved_cast_path
from omni_web.paths import REPO_ROOT, DataPaths
from tests.conftest import DATA_DIR
from tests.test_cast_pipeline import MODEL, pequod

pytestmark = pytest.mark.slow  # subprocesses, espeak-ng speech


def run(data_paths: DataPaths, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "omni_web", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMNI_WEB_HOME": str(data_paths.root), **(env or {})},
    )


def test_cast_lists_characters_and_saves_a_mapping_a_series_can_reuse(
    data_paths: DataPaths, tmp_path: Path
) -> None:
    listed = run(data_paths, "cast", str(DATA_DIR / "pg11-alice.epub"))
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[6:] if line.strip()}
    assert "english-double" in listed.stdout and "(not saved yet)" in listed.stdout
    assert {"Alice", "Hatter", "Dormouse", "Gryphon"} <= set(rows)
    assert int(rows["Hatter"].split()[1]) >= 20 and "“" in rows["Hatter"]
    # Two rows the rules could not join are offered, with the flag that joins them.
    offer = "maybe the same person as: Frog-Footman or Fish-Footman (--merge 'Footman=Frog-Footman')"
    assert offer in listed.stdout

    mapped = run(
        data_paths,
        "cast",
        str(DATA_DIR / "pg11-alice.epub"),
        "--set",
        "Hatter=eric",
        "--set",
        "Queen=instructions:A shrill, imperious voice",
        "--dialogue",
        "ryan",
    )
    assert mapped.returncode == 0, mapped.stderr
    book = load_book(DATA_DIR / "pg11-alice.epub")
    saved = load_cast_file(saved_cast_path(data_paths, book))
    assert saved.characters["Hatter"].name == "eric" and saved.dialogue.name == "ryan"
    assert saved.characters["Queen"].instructions == "A shrill, imperious voice"
    hatter = next(line for line in mapped.stdout.splitlines() if line.startswith("Hatter "))
    assert " eric " in hatter

    # A re-uploaded copy of the same book (another file name) finds its cast: it is keyed by identity.
    copy = shutil.copy(DATA_DIR / "pg11-alice.epub", tmp_path / "upload-2.epub")
    assert saved_cast_path(data_paths, load_book(Path(copy))) == saved_cast_path(data_paths, book)
    # The next book of a series imports it.
    sequel = pequod(tmp_path)
    imported = run(
        data_paths,
        "cast",
        str(sequel),
        "--from",
        str(DATA_DIR / "pg11-alice.epub"),
        "--unset",
        "Queen",
        "--export",
        str(tmp_path / "exported.yaml"),
    )
    assert imported.returncode == 0, imported.stderr
    theirs = load_cast_file(saved_cast_path(data_paths, load_book(sequel)))
    assert theirs.characters.keys() == {"Hatter"} and theirs.dialogue.name == "ryan"
    assert load_cast_file(tmp_path / "exported.yaml") == theirs

    bad = run(data_paths, "cast", str(sequel), "--set", "nobody")
    assert bad.returncode == 1 and "NAME=VOICE" in bad.stderr
    # A character merged into itself is said to be so, not taken as a silent no-op; nothing is saved.
    before = saved_cast_path(data_paths, load_book(sequel)).read_bytes()
    itself = run(data_paths, "cast", str(sequel), "--merge", "Hatter=hatter")
    assert itself.returncode == 1 and "hatter is that character already" in itself.stderr
    assert saved_cast_path(data_paths, load_book(sequel)).read_bytes() == before


def requests_of(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_done_when_convert_voice_vivian_dialogue_voice_ryan(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_SECONDS_PER_WORD": "0.004", "FAKE_SGL_REQUEST_LOG": str(log)})
    book = pequod(tmp_path)
    done = run(
        data_paths,
        "convert",
        str(book),
        "--qa",
        "off",
        "--model",
        MODEL,
        "--voice",
        "vivian",
        "--dialogue-voice",
        "ryan",
        "--api-url",
        server.base_url,
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    sent = requests_of(log)
    voices = {(body["voice"], body["input"].startswith('"')) for body in sent}
    assert voices == {("Vivian", False), ("Ryan", True)}
    assert "Audiobook: " in done.stdout

    # A saved cast maps Stubb to a third voice: only his quote is rendered again.
    assert run(data_paths, "cast", str(book), "--set", "Stubb=eric").returncode == 0
    again = run(
        data_paths,
        "convert",
        str(book),
        "--qa",
        "off",
        "--model",
        MODEL,
        "--voice",
        "vivian",
        "--dialogue-voice",
        "ryan",
        "--cast",
        "saved",
        "--api-url",
        server.base_url,
        "--out",
        str(tmp_path / "out"),
    )
    assert again.returncode == 0, again.stderr
    assert [(b["voice"], b["input"]) for b in requests_of(log)[len(sent) :]] == [
        ("Eric", '"Do you think it will come tonight?"')
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dialogue-voice", "nobody"], "Unknown voice"),
        (["--cast", "saved"], "no saved cast"),
        (["--cast", "/nowhere/cast.yaml"], "No cast file"),
    ],
)
def test_a_bad_cast_is_refused_before_any_speech(
    data_paths: DataPaths, fake_server, tmp_path: Path, flags: list[str], message: str
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={"FAKE_SGL_REQUEST_LOG": str(log)})
    done = run(
        data_paths,
        "convert",
        str(pequod(tmp_path)),
        "--model",
        MODEL,
        "--voice",
        "vivian",
        *flags,
        "--api-url",
        server.base_url,
    )
    assert done.returncode == 1 and message.lower() in done.stderr.lower(), done.stderr
    assert not log.exists() or not log.read_text()


def test_dialogue_instructions_and_dialogue_clone(data_paths: DataPaths, fake_server, tmp_path: Path) -> None:
    from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

    book = pequod(tmp_path)
    log = tmp_path / "design.jsonl"
    server = fake_server(
        "qwen3_tts_1_7b_voicedesign",
        env={"FAKE_SGL_SECONDS_PER_WORD": "0.004", "FAKE_SGL_REQUEST_LOG": str(log)},
    )
    done = run(
        data_paths,
        "convert",
        str(book),
        "--qa",
        "off",
        "--model",
        "qwen3_tts_1_7b_voicedesign",
        "--instructions",
        "A calm, low narrator.",
        "--dialogue-instructions",
        "A gruff old sailor.",
        "--api-url",
        server.base_url,
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    pairs = {(b["instructions"], b["input"].startswith('"')) for b in requests_of(log)}
    assert pairs == {("A calm, low narrator.", False), ("A gruff old sailor.", True)}
    server.stop()

    clip_log = tmp_path / "clone.jsonl"
    clone_server = fake_server(
        "qwen3_tts_0_6b_base",
        env={"FAKE_SGL_SECONDS_PER_WORD": "0.004", "FAKE_SGL_REQUEST_LOG": str(clip_log)},
    )
    narrator = espeak(EIGHT_SECONDS_TEXT, tmp_path / "narrator.wav")
    sailor = espeak("Ahoy there, all hands on deck, and look lively now.", tmp_path / "sailor.wav")
    done = run(
        data_paths,
        "convert",
        str(book),
        "--qa",
        "off",
        "--model",
        "qwen3_tts_0_6b_base",
        "--clone",
        str(narrator),
        "--transcription",
        EIGHT_SECONDS_TEXT,
        "--dialogue-clone",
        str(sailor),
        "--dialogue-transcription",
        "Ahoy there, all hands on deck.",
        "--api-url",
        clone_server.base_url,
        "--out",
        str(tmp_path / "out2"),
    )
    assert done.returncode == 0, done.stderr
    sent = requests_of(clip_log)
    by_text = {
        t: {b["input"].startswith('"') for b in sent if b["ref_text"] == t}
        for t in {b["ref_text"] for b in sent}
    }
    assert by_text == {EIGHT_SECONDS_TEXT: {False}, "Ahoy there, all hands on deck.": {True}}
    assert len({b["ref_audio"] for b in sent}) == 2


def test_cast_auto_and_the_llm_pass_from_the_command_line(data_paths: DataPaths, tmp_path: Path) -> None:
    from omni_web.cast.review import book_labels
    from omni_web.settings import Settings, save_settings
    from tests.epub_builder import make_epub, xhtml
    from tests.fakes.fake_chat import FakeChat, alias_groups, labels_answer, serve_fake_chat
    from tests.test_cast_pipeline import PEQUOD

    unsure = [
        "The fog came down over the deck.",
        "“Who goes there?”",
        "“A friend, and cold.”",
        "“Come aboard, then.”",
    ]
    body = "<h1>Chapter One</h1>" + "".join(f"<p>{p}</p>" for p in [*PEQUOD, *PEQUOD[1:4], *unsure])
    book_path = make_epub(tmp_path / "fog.epub", (("c1.xhtml", xhtml(body)),), title="The Fog")
    auto = run(data_paths, "cast", str(book_path), "--auto")
    assert auto.returncode == 0, auto.stderr
    book = load_book(book_path)
    assert load_cast_file(saved_cast_path(data_paths, book)).auto
    refused = run(data_paths, "cast", str(book_path), "--llm")
    assert refused.returncode != 0 and "No LLM endpoint is set" in refused.stderr
    label = labels_answer("C1")

    def answer(user: str) -> str:  # asked who is listed twice: Starbuck is Stubb (a merge to tell and save)
        return label(user) if "Label these" in user else alias_groups(user, ("Stubb", "Starbuck"))

    fake = FakeChat(answer=answer)
    with serve_fake_chat(fake) as url:
        save_settings(data_paths, Settings(llm_url=url))
        labelled = run(data_paths, "cast", str(book_path), "--llm")
    assert labelled.returncode == 0, labelled.stderr
    assert (
        "LLM labels:" in labelled.stdout and "request" in labelled.stdout and "to review" in labelled.stdout
    )
    assert "merged them: Starbuck is Stubb (undo one with --split NAME)" in labelled.stdout
    assert dict(load_cast_file(saved_cast_path(data_paths, book)).edits.merges) == {"Starbuck": "Stubb"}
    assert len(fake.received) >= 1 and book_labels(data_paths, book).labels
