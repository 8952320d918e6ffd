"""Generate tab handlers through gradio_client: book upload, model picker, voice menus, clips,
and the Higgs chunk-size dialog."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from omni_web.catalog import CAPABILITY_COLUMNS, CATALOG, get_entry
from tests.conftest import DATA_DIR
from tests.ui.conftest import MODEL
from tests.ui.helpers import cache_model
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak, probe


def _labels(update: dict) -> list[str]:
    return [label for label, _ in update["choices"]]


def test_upload_shows_title_author_cover_and_preselected_chapters(ui_app):
    client = ui_app.client()
    header, cover, chapters, notice, _ = client.predict(handle_file(DATA_DIR / "wasteland.epub"),
                                                     api_name="/book_upload")
    assert "The Waste Land" in header and "T.S. Eliot" in header and "7 chapters" in header
    assert cover["visible"] is True and cover["value"].endswith((".webp", ".png", ".jpg", ".jpeg"))
    labels = _labels(chapters)
    assert (
        labels[0].startswith("  1. The Waste Land") and "35 words" in labels[0] and "title page" in labels[0]
    )
    assert "595 words" in labels[1]
    assert "notes" in labels[6]
    assert chapters["value"] == [2, 3, 4, 5, 6]  # title page and notes are not read by default
    kept = list((ui_app.paths.state_dir / "books").glob("*.epub"))
    assert len(kept) == 1 and kept[0].read_bytes() == (DATA_DIR / "wasteland.epub").read_bytes()


def test_a_file_that_is_not_an_epub_gets_a_clear_message_in_its_own_name(ui_app, tmp_path):
    fake = tmp_path / "notreally.epub"
    fake.write_text("just some text")
    header, cover, chapters, notice, box = ui_app.client().predict(handle_file(fake), api_name="/book_upload")
    # Said once, under the box (where the book would show): not again in the notice line.
    assert "Not loaded" in header and "notreally.epub" in header and re.search(r"(?i)epub|zip", header)
    assert not re.search(r"[0-9a-f]{16}-notreally", header)  # not the stored copy's name
    assert not re.search(r"BadZipFile|Error:|Exception", header)  # no Python class names
    assert notice == "" and box is None and chapters["choices"] == []  # the box is cleared
    assert not list((ui_app.paths.state_dir / "books").glob("*notreally*"))  # nothing kept


def test_formats_no_reader_opens_are_told_to_convert_with_calibre(ui_app, tmp_path):
    for name in ("Moby Dick.rtf", "story.lit", "notes.doc"):
        other = tmp_path / name
        other.write_bytes(b"{\\rtf1 not a book omni-web reads")
        header, _cover, _chapters, notice, box = ui_app.client().predict(
            handle_file(other), api_name="/book_upload"
        )
        assert name in header and "Calibre" in header and "ebook-convert" in header, header
        assert notice == "" and box is None


def test_a_damaged_pdf_is_refused_as_a_pdf(ui_app, tmp_path):
    other = tmp_path / "Moby Dick.pdf"
    other.write_bytes(b"%PDF-1.4 not really")
    header, _cover, _chapters, notice, box = ui_app.client().predict(
        handle_file(other), api_name="/book_upload"
    )
    assert "Moby Dick.pdf" in header and "damaged PDF" in header, header
    assert notice == "" and box is None


def test_model_picker_reads_as_a_table(ui_app):
    picker, info, chunk, *_ = ui_app.client().predict(api_name="/generate_load")
    labels = _labels(picker)
    assert picker["value"] == MODEL  # the one downloaded model is the default
    assert picker["choices"][0][1] == MODEL and labels[0].startswith("● ")
    assert all(label.startswith("  ") for label in labels[1:])  # not downloaded: an empty mark column
    assert len(labels) == len(CATALOG)
    for word in CAPABILITY_COLUMNS:
        starts = {label.index(f" {word}") + 1 for label in labels if f" {word}" in label}
        assert len(starts) == 1, f"'{word}' is not in one column: {starts}"
    column = {
        word: min(text.index(word) for text in labels if f" {word}" in text) for word in CAPABILITY_COLUMNS
    }
    assert column["tts"] < column["clone"] < column["design"]
    assert "downloaded" in info and chunk == 120


def test_page_open_looks_at_the_server_once(ui_app, monkeypatch):
    server = ui_app.services.server
    looks: list[object] = []
    real_status = server.status
    monkeypatch.setattr(server, "status", lambda: looks.append(1) or real_status())
    picker, *_ = ui_app.client().predict(api_name="/generate_load")
    assert picker["value"] == MODEL
    assert len(looks) == 1  # the default model, the voice menu and the server-voices box share it


@pytest.mark.parametrize(
    ("model", "first_voice", "instructions_visible"),
    [
        ("qwen3_tts_0_6b_customvoice", "speaker:Vivian", False),
        ("voxtral_tts", None, False),
        ("higgs_audio_v3_tts", "default", False),
        ("qwen3_tts_1_7b_voicedesign", "design", True),
    ],
)
def test_voice_menu_fits_the_model(ui_app, model, first_voice, instructions_visible):
    menu, help_text, transcript, instructions = ui_app.client().predict(model, None, api_name="/voice_menu")
    keys = [key for _, key in menu["choices"]]
    if first_voice is not None:
        assert keys[0] == first_voice
    if model == "voxtral_tts":
        assert {"preset:casual_male", "preset:neutral_female"} <= set(keys)
    assert menu["value"] == keys[0]
    assert instructions["visible"] is instructions_visible
    assert transcript["visible"] is False
    assert help_text


def test_added_clip_appears_in_clone_menus_with_its_transcript(ui_app, tmp_path):
    client = ui_app.client()
    clip = espeak(EIGHT_SECONDS_TEXT, tmp_path / "My Narrator.wav")
    menu, help_text, transcript, instructions, *_ = client.predict(
        "higgs_audio_v3_tts", handle_file(clip), "narrator", EIGHT_SECONDS_TEXT, api_name="/voice_add_clip"
    )
    assert "clone:narrator" in [key for _, key in menu["choices"]]
    assert menu["value"] == "clone:narrator"
    assert transcript["visible"] is True and transcript["value"] == EIGHT_SECONDS_TEXT
    assert "10-20 s of clean speech" in help_text
    stored = ui_app.paths.voices_dir / "narrator.wav"
    assert (
        stored.is_file()
        and (ui_app.paths.voices_dir / "narrator.txt").read_text().strip() == EIGHT_SECONDS_TEXT
    )
    # A clone-only model offers the same clip; CustomVoice (built-in speakers only) does not.
    custom_menu, *_ = client.predict(MODEL, None, api_name="/voice_menu")
    assert "clone:narrator" not in [key for _, key in custom_menu["choices"]]
    base_menu, *_ = client.predict("qwen3_tts_0_6b_base", None, api_name="/voice_menu")
    assert [key for _, key in base_menu["choices"]] == ["clone:narrator"]
    with pytest.raises(AppError, match="(?i)whisper|transcri"):  # no faster-whisper weights in this cache
        client.predict("qwen3_tts_0_6b_base", "clone:narrator", api_name="/voice_transcribe")
    saved = client.predict(
        "qwen3_tts_0_6b_base", "clone:narrator", "Edited words.", api_name="/voice_save_transcript"
    )
    assert saved == "Edited words."
    assert (ui_app.paths.voices_dir / "narrator.txt").read_text().strip() == "Edited words."


def test_generate_refuses_without_a_book_or_chapters(ui_app):
    client = ui_app.client()
    client.predict(api_name="/generate_load")  # what the page does when it opens
    with pytest.raises(AppError, match="Upload a book first"):
        client.predict([], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    with pytest.raises(AppError, match="No chapter is selected"):
        client.predict([], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    client.predict("qwen3_tts_1_7b_voicedesign", None, api_name="/voice_menu")
    with pytest.raises(AppError, match="description of the voice"):
        client.predict([1], "qwen3_tts_1_7b_voicedesign", "design", "", "", 120, api_name="/generate")


def test_preview_speaks_the_first_sentences_on_the_running_server(ui_app):
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    with pytest.raises(AppError, match="Start it in the Server tab"):
        client.predict([2], MODEL, "speaker:Vivian", "", "", 120, api_name="/preview")
    ui_app.services.server.start(get_entry(MODEL))
    try:
        audio, notice = client.predict([2], MODEL, "speaker:Vivian", "", "", 120, api_name="/preview")
    finally:
        ui_app.services.server.stop()
    assert notice.startswith("Preview: “") and notice != "Preview: “The Switch”"  # body text, not the title
    facts = probe(Path(audio))
    assert facts["sample_rate"] == 24000 and facts["duration"] > 0.2  # the fake speaks 0.02 s per word


def test_a_model_that_is_not_downloaded_is_refused_as_start_would(ui_app):
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    info = client.predict("higgs_audio_v3_tts", None, api_name="/voice_menu")
    before = {job.id for job in ui_app.services.library.jobs.list()}
    with pytest.raises(
        AppError, match="Higgs Audio v3 TTS .* is not downloaded. Download it in the Models tab"
    ):
        client.predict([2], "higgs_audio_v3_tts", "default", "", "", 80, api_name="/generate")
    assert {job.id for job in ui_app.services.library.jobs.list()} == before
    assert info is not None


def test_higgs_with_a_large_chunk_asks_first_and_set_chunk_clamps_the_run(ui_app):
    higgs_repo = cache_model(ui_app.cache_dir, "higgs_audio_v3_tts").parent.parent
    try:
        _higgs_dialog(ui_app)
    finally:
        shutil.rmtree(higgs_repo)  # the other tests see one downloaded model


def _higgs_dialog(ui_app):
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    client.predict("higgs_audio_v3_tts", None, api_name="/voice_menu")
    before = {job.id for job in ui_app.services.library.jobs.list()}
    notice, job_id, dialog_text, chunk, _ = client.predict(
        [2], "higgs_audio_v3_tts", "default", "", "", 120, api_name="/generate"
    )
    assert job_id == "" and notice == ""
    assert "80 words" in dialog_text and "120" in dialog_text
    assert {job.id for job in ui_app.services.library.jobs.list()} == before  # nothing queued yet
    notice, job_id, dialog_text, chunk, _ = client.predict(
        [2], "higgs_audio_v3_tts", "default", "", "", 120, api_name="/generate_clamped"
    )
    assert chunk == 80 and job_id and "Queued" in notice
    job = ui_app.services.library.jobs.get(job_id)
    assert job.params["chunk_words"] == 80 and job.params["chapters"] == [2]
    assert job.params["voice"]["kind"] == "default"
    notice, kept_id, _, chunk, _ = client.predict(
        [2], "higgs_audio_v3_tts", "default", "", "", 120, api_name="/generate_keep"
    )
    kept = ui_app.services.library.jobs.get(kept_id).params
    assert chunk == 120 and kept["chunk_words"] == 120 and kept["keep_over_cap"] is True
    assert job.params["keep_over_cap"] is False
    for queued in (job_id, kept_id):  # no Higgs server here: do not leave them to the worker
        ui_app.services.library.jobs.request_cancel(queued)
