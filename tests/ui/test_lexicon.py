"""The Lexicon panel on the Generate tab, through gradio_client: an entry added in the UI changes what
the server is sent and re-renders only the chunks holding the word (checked on the fake server's
request log); hear an entry, candidates, import and export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from gradio_client import handle_file
from gradio_client.exceptions import AppError

from tests.test_text_pipeline import _book
from tests.ui.conftest import MODEL
from tests.ui.helpers import wait_for

BOOK = "This book"
ALL = "All books"


def _inputs(log: Path) -> list[str]:
    return (
        [json.loads(line)["input"] for line in log.read_text(encoding="utf-8").splitlines()]
        if log.exists()
        else []
    )


def _generate(client, ui_app) -> None:
    notice, job_id, *_ = client.predict([1, 2, 3], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    assert job_id, notice
    wait_for(
        lambda: ui_app.services.library.jobs.get(job_id).state.finished,
        timeout_s=180,
        what="the job to finish",
    )
    assert ui_app.services.library.jobs.get(job_id).state.value == "done"


def test_an_entry_added_in_the_ui_changes_what_is_sent_and_rerenders_only_its_chunks(
    ui_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "requests.jsonl"
    monkeypatch.setenv("FAKE_SGL_REQUEST_LOG", str(log))  # inherited by the server the job starts
    book = _book(tmp_path / "numbers.epub")
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(book), api_name="/book_upload")
    listing, _pick = client.predict(BOOK, api_name="/lexicon_list")
    assert "No entries for 'Numbers and Names'" in listing
    _generate(client, ui_app)
    first = _inputs(log)
    assert "Hermione waited until ten thirty PM on the twelfth of March." in first

    listing, pick, notice = client.predict(
        BOOK,
        MODEL,
        120,
        [1, 2, 3],
        None,
        "Hermione",
        "her-MY-oh-nee",
        False,
        False,
        "auto",
        "a witch",
        api_name="/lexicon_save",
    )
    assert "her-MY-oh-nee" in listing and "a witch" in listing
    assert "This changes 2 chunks of" in notice and "chapters 1, 2" in notice
    assert pick["choices"] == [["Hermione", "Hermione"]] or [c[0] for c in pick["choices"]] == ["Hermione"]
    written, spoken, regex, inside, case, note = client.predict(BOOK, "Hermione", api_name="/lexicon_pick")
    assert (written, spoken, regex, inside, case, note) == (
        "Hermione",
        "her-MY-oh-nee",
        False,
        False,
        "auto",
        "a witch",
    )

    # Hear it: the book's first sentence with the word, spoken by the running server.
    before_hear = len(_inputs(log))
    if not ui_app.services.server.status().hosts(MODEL):
        from omni_web.catalog import get_entry

        ui_app.services.server.start(get_entry(MODEL))
    audio, sent = client.predict(
        BOOK,
        MODEL,
        "speaker:Vivian",
        "",
        "",
        "Hermione",
        "her-MY-oh-nee",
        False,
        False,
        "auto",
        "",
        api_name="/lexicon_hear",
    )
    assert Path(audio).stat().st_size > 1000
    assert "her-MY-oh-nee waited until ten thirty PM" in sent
    assert _inputs(log)[before_hear:] == ["her-MY-oh-nee waited until ten thirty PM on the twelfth of March."]

    _generate(client, ui_app)
    again = _inputs(log)[before_hear + 1 :]
    # Only the two chunks holding the word are requested again (QA may ask for more than one take of each).
    assert set(again) == {
        "her-MY-oh-nee waited until ten thirty PM on the twelfth of March.",
        "I think I shall see her-MY-oh-nee again, said Missus Hudson.",
    }

    candidates, words = client.predict(api_name="/lexicon_candidates")
    assert "Hermione ✓" in candidates and "Watson" in candidates
    assert "Watson" in [c[0] for c in words["choices"]] and "Hermione" not in [c[0] for c in words["choices"]]
    written, spoken, sample = client.predict("Watson", api_name="/lexicon_use_candidate")
    assert (written, spoken) == ("Watson", "") and sample.startswith("In 1851 Dr. Watson paid")

    exported = Path(client.predict(BOOK, api_name="/lexicon_export"))
    data = yaml.safe_load(exported.read_text(encoding="utf-8"))
    assert data["entries"] == [{"written": "Hermione", "spoken": "her-MY-oh-nee", "note": "a witch"}]
    source = tmp_path / "import.yaml"
    source.write_text("Watson: WOT-sun\nHudson: HUD-sun\n", encoding="utf-8")
    listing, _pick, notice, _file = client.predict(handle_file(source), ALL, api_name="/lexicon_import")
    assert "Imported 2 new" in notice and "WOT-sun" in listing

    listing, _pick = client.predict(BOOK, api_name="/lexicon_list")  # back to the book's lexicon
    assert "book's entry wins" not in listing and "her-MY-oh-nee" in listing
    listing, _pick, notice = client.predict(
        BOOK, MODEL, 120, [1, 2, 3], "Hermione", api_name="/lexicon_remove"
    )
    assert "Removed" in notice and "This changes 2 chunks" in notice and "No entries" in listing
    with pytest.raises(AppError, match="not a valid regular expression"):
        client.predict(
            ALL, MODEL, 120, [1], None, "(x", "y", True, False, "auto", "", api_name="/lexicon_save"
        )
    # Editing an entry's written form replaces it instead of adding a second one.
    client.predict(ALL, api_name="/lexicon_list")
    client.predict(ALL, "Watson", api_name="/lexicon_pick")
    listing, _pick, _notice = client.predict(
        ALL,
        MODEL,
        120,
        [1, 2, 3],
        "Watson",
        "Watsons",
        "WOT-sunz",
        False,
        False,
        "auto",
        "",
        api_name="/lexicon_save",
    )
    assert "WOT-sunz" in listing and "WOT-sun<" not in listing and "Hudson" in listing


def test_the_review_panel_edits_the_lexicon_of_the_reviewed_jobs_book(ui_app, tmp_path: Path) -> None:
    book = _book(tmp_path / "numbers.epub")
    client = ui_app.client()
    client.predict(api_name="/generate_load")
    client.predict(handle_file(book), api_name="/book_upload")
    notice, job_id, *_ = client.predict([1, 2, 3], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate")
    assert job_id, notice
    wait_for(
        lambda: ui_app.services.library.jobs.get(job_id).state.finished,
        timeout_s=180,
        what="the job to finish",
    )

    # Picking the job in the Jobs tab points the review's lexicon at that job's book and model.
    client.predict(job_id, api_name="/review_lexicon_job")
    listing, _pick = client.predict(BOOK, api_name="/review_lexicon_list")
    assert "No entries for 'Numbers and Names'" in listing
    listing, _pick, notice = client.predict(
        BOOK, None, "Hermione", "her-MY-oh-nee", False, False, "auto", "", api_name="/review_lexicon_save"
    )
    assert "her-MY-oh-nee" in listing, notice
    # The same book lexicon Generate edits: the next job of this book speaks the new form.
    generate_listing, _ = client.predict(BOOK, api_name="/lexicon_list")
    assert "her-MY-oh-nee" in generate_listing
