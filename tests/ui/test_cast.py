"""The cast panel through gradio_client: characters listed, voices mapped and saved, a character's
line heard in its own voice on the running server, and Generate queueing the cast."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from omni_web.book import load_book
from omni_web.cast import load_cast_file, saved_cast_path
from omni_web.catalog import get_entry
from tests.conftest import DATA_DIR
from tests.ui.conftest import MODEL
from tests.voice_clips import probe

ALICE = DATA_DIR / "pg11-alice.epub"


def test_cast_panel_maps_characters_and_plays_a_mapped_voice(ui_app, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(ALICE), api_name="/book_upload")
    use, dialogue, listing, character, voice, *_ = client.predict(MODEL, None, api_name="/cast_panel")
    assert use is False  # nothing mapped yet
    names = [label for label, _ in character["choices"]]
    assert names[0] == "Alice" and {"Hatter", "March Hare", "Dormouse", "Queen"} <= set(names)
    assert "Hatter" in listing and "Why is a raven like a writing-desk?" in listing
    assert ("Narrator's voice", "") in [tuple(c) for c in dialogue["choices"]]
    assert "speaker:Ryan" in [key for _, key in dialogue["choices"]]

    # A dialogue voice draws the checkbox, its menu and the table, never the character menus: a
    # character picked while it ran stays picked.
    use, dialogue, listing = client.predict(MODEL, "speaker:Ryan", api_name="/cast_dialogue")
    assert use is True and dialogue["value"] == "speaker:Ryan" and "Hatter" in listing
    # Drawn again (another model, the same book), the panel keeps the character picked.
    assert client.predict(MODEL, "Hatter", api_name="/cast_panel")[3]["value"] == "Hatter"
    _, _, listing, character, voice, *_, notice = client.predict(
        MODEL, "Hatter", "speaker:Eric", "", api_name="/cast_assign")
    assert "Hatter" in notice and "Eric" in notice and voice["value"] == "speaker:Eric"
    saved = load_cast_file(saved_cast_path(ui_app.paths, load_book(ALICE)))
    assert saved.dialogue.name == "Ryan" and saved.characters["Hatter"].name == "Eric" and saved.enabled
    row = next(r for r in listing.split("<tr>") if "<td>Hatter</td>" in r)
    assert "Eric" in row

    with pytest.raises(AppError, match="Start it in the Server tab"):
        client.predict(MODEL, "Hatter", api_name="/cast_hear")
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_SGL_REQUEST_LOG", str(log))  # inherited by the server started now
    ui_app.services.server.start(get_entry(MODEL))
    try:
        audio, notice = client.predict(MODEL, "Hatter", api_name="/cast_hear")
    finally:
        ui_app.services.server.stop()
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    assert [body["voice"] for body in sent] == ["Eric"]  # the third voice, not the narrator's nor Ryan
    assert sent[0]["input"] in notice and notice.startswith("Hatter: “")
    # The fake speaks 0.02 s per word: the whole sample line came back.
    assert abs(probe(Path(audio))["duration"] - 0.02 * len(sent[0]["input"].split())) < 0.05

    # Generate queues the saved cast with the job; unticking the panel queues one voice.
    _, job_id, *_ = client.predict([12], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    cast = ui_app.services.library.jobs.get(job_id).params["cast"]
    assert cast["dialogue"]["name"] == "Ryan" and cast["characters"] == [["Hatter", cast["characters"][0][1]]]
    assert cast["characters"][0][1]["name"] == "Eric"
    assert "one voice" in client.predict(False, api_name="/cast_use")
    _, job_id, *_ = client.predict([13], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    assert ui_app.services.library.jobs.get(job_id).params["cast"] is None


def test_cast_panel_without_a_book_says_what_to_do(ui_app) -> None:
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    with pytest.raises(AppError, match="Upload a book first"):
        client.predict(MODEL, None, api_name="/cast_hear")
    use, _, listing, *_ = client.predict(MODEL, None, api_name="/cast_panel")
    assert use is False and listing == ""


def test_a_voice_design_model_describes_each_voice_in_words(ui_app) -> None:
    design = "qwen3_tts_1_7b_voicedesign"
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(ALICE), api_name="/book_upload")
    panel = client.predict(design, None, api_name="/cast_panel")
    _, dialogue, _, _, voice, instructions, dialogue_text, *_ = panel
    assert dialogue["visible"] is False and voice["visible"] is False
    assert instructions["visible"] is True and dialogue_text["visible"] is True
    _, _, listing, _, _, instructions, *_, notice = client.predict(
        design, "Queen", None, "A shrill, imperious voice.", api_name="/cast_assign")
    assert "Queen" in notice and instructions["value"] == "A shrill, imperious voice."
    saved = load_cast_file(saved_cast_path(ui_app.paths, load_book(ALICE)))
    assert saved.characters["Queen"].instructions == "A shrill, imperious voice."
    assert "designed: A shrill, imperious voice." in listing


def _row(listing: str, name: str) -> str:
    return next((r for r in listing.split("<tr>") if r.startswith(f"<td>{name}</td>")), "")


def test_the_names_row_merges_renames_splits_and_hides_characters_as_the_cli_does(ui_app) -> None:
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(ALICE), api_name="/book_upload")
    panel = client.predict(MODEL, None, api_name="/cast_panel")
    _, _, listing, _, _, _, _, same_as, alias, hidden, hints = panel
    # Two rows the rules could not join are offered as one person, not joined.
    assert "**Footman** may be Frog-Footman" in hints or "**Frog-Footman** may be Footman" in hints
    hare = int(re.findall(r"<td>(\d+)</td>", _row(listing, "March Hare"))[0])
    hatter = int(re.findall(r"<td>(\d+)</td>", _row(listing, "Hatter"))[0])
    assert "Hatter" in [label for label, _ in same_as["choices"]] and not hidden["choices"]
    client.predict(MODEL, "Hatter", "speaker:Eric", "", api_name="/cast_assign")

    # The March Hare is the Hatter now: one row, his lines counted together, and the CLI's edit saved.
    notice = client.predict("March Hare", "Hatter", api_name="/cast_merge")
    assert "March Hare" in notice and "Hatter" in notice
    _, _, listing, *_ = client.predict(MODEL, None, api_name="/cast_panel")
    assert not _row(listing, "March Hare") and "March Hare" in _row(listing, "Hatter")
    assert f"<td>{hare + hatter}</td>" in _row(listing, "Hatter")
    saved = load_cast_file(saved_cast_path(ui_app.paths, load_book(ALICE)))
    assert saved.edits.merges == {"March Hare": "Hatter"}

    # Split off again; renamed, the Hatter keeps his voice; a hidden name leaves the list till shown.
    client.predict("Hatter", "March Hare", api_name="/cast_split")
    assert f"<td>{hare}</td>" in _row(client.predict(MODEL, None, api_name="/cast_panel")[2], "March Hare")
    client.predict("Hatter", "Mad Hatter", api_name="/cast_rename")
    client.predict("Dormouse", api_name="/cast_hide")
    _, _, listing, *_, hidden, _ = client.predict(MODEL, None, api_name="/cast_panel")
    assert "Eric" in _row(listing, "Mad Hatter") and not _row(listing, "Hatter")
    assert not _row(listing, "Dormouse") and [c[0] for c in hidden["choices"]] == ["Dormouse"]
    saved = load_cast_file(saved_cast_path(ui_app.paths, load_book(ALICE)))
    assert saved.edits.renames == {"Hatter": "Mad Hatter"} and saved.edits.hidden == ("Dormouse",)
    assert saved.characters["Mad Hatter"].name == "Eric"
    client.predict("Dormouse", api_name="/cast_unhide")
    assert _row(client.predict(MODEL, None, api_name="/cast_panel")[2], "Dormouse")

    with pytest.raises(AppError, match="Pick a character, then the character it is the same person as"):
        client.predict("Alice", None, api_name="/cast_merge")
