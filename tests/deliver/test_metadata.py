"""The book's metadata with the user's corrections: in the request, the tags, the folder, the sidecars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omni_web.assemble.metadata import ChapterMark
from omni_web.book import load_book
from omni_web.deliver.metadata import audiobook_tags, editable_values, metadata_overrides, tags_for_paths
from omni_web.deliver.sidecars import Narration, abs_metadata, sidecar_files
from omni_web.errors import BookError
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.services import AppServices
from omni_web.ui.submit_flow import build_request
from tests.conftest import DATA_DIR
from tests.fakes.fake_abs import opf_file

BOOK = DATA_DIR / "hefty-water-series.epub"


def test_only_changed_fields_travel_and_a_bad_number_is_refused() -> None:
    meta = load_book(BOOK).metadata
    own = editable_values(meta)
    assert own["authors"] == "Ann Writer" and own["series_index"] == "2"
    edits = {**own, "title": "Heavy  Water", "authors": "Ann Writer; Bo Second", "series_index": "3"}
    assert metadata_overrides(edits, own) == (("title", "Heavy Water"), ("authors", "Ann Writer; Bo Second"),
                                              ("series_index", "3"))
    with pytest.raises(BookError, match="not a number"):
        metadata_overrides({"series_index": "two"}, own)
    book = load_book(BOOK)
    pairs = metadata_overrides(edits, own)
    tags = audiobook_tags(book, pairs, narrator="N", comment="")
    assert (tags.title, tags.author, tags.series, tags.series_part) == (
        "Heavy Water",
        "Ann Writer and Bo Second",
        "The Water Cycle",
        "3",
    )
    assert tags.isbn == "9780306406157" and tags_for_paths(book, pairs).title == "Heavy Water"
    round_trip = ConvertRequest.from_dict(
        ConvertRequest(book_path=BOOK, model_key="m", metadata=pairs).to_dict()
    )
    assert round_trip.metadata == pairs and round_trip.output_layout == "library"
    # A job stored before layouts existed reads back as flat (where its files are).
    legacy = {k: v for k, v in round_trip.to_dict().items() if k != "output_layout"}
    assert ConvertRequest.from_dict(legacy).output_layout == "flat"


def test_the_generate_form_sends_the_corrections_and_they_name_the_folder(data_paths: DataPaths) -> None:
    services = AppServices.create(data_paths)  # not started: the job waits in the queue

    from omni_web.ui.context import UiContext

    own = editable_values(load_book(BOOK).metadata)
    state = {"path": str(BOOK), "meta": own, "edits": {**own, "title": "Heavy Water"}}
    request = build_request(
        UiContext(services), state, [1, 2], "qwen3_tts_0_6b_customvoice", "speaker:Vivian", "", "", 120
    )
    assert request.metadata == (("title", "Heavy Water"),)
    job = services.library.submit_conversion(request)
    assert job.params["output_name"] == "Vol 2 - Heavy Water {Vivian - Qwen3-TTS 0.6B CustomVoice}"


def test_sidecars_carry_every_field_in_abs_forms(tmp_path: Path) -> None:
    meta = load_book(BOOK).metadata
    narration = Narration("Qwen3-TTS 0.6B CustomVoice (Vivian)", "Vivian", "Qwen3-TTS 0.6B CustomVoice")
    doc = abs_metadata(meta, narration, [ChapterMark("One", 0, 1500), ChapterMark("Two", 1500, 4000)])
    assert doc["series"] == ["The Water Cycle #2"] and doc["genres"] == ["Fiction", "Water"]
    assert doc["chapters"] == [
        {"id": 0, "start": 0.0, "end": 1.5, "title": "One"},
        {"id": 1, "start": 1.5, "end": 4.0, "title": "Two"},
    ]
    assert (doc["publishedYear"], doc["publisher"], doc["language"]) == ("2012", "Sample Press", "en")
    files = sidecar_files(meta, narration, [ChapterMark("One", 0, 1500)], stem="Hefty Water")
    assert set(files) == {"metadata.json", "Hefty Water.opf", "desc.txt", "reader.txt"}
    assert json.loads(files["metadata.json"])["narrators"] == [narration.narrator]
    (tmp_path / "Hefty Water.opf").write_bytes(files["Hefty Water.opf"])
    opf = opf_file(tmp_path / "Hefty Water.opf")  # read as ABS's parseOpfMetadata does
    assert opf["series"] == [{"name": "The Water Cycle", "sequence": "2"}] and opf["isbn"] == "9780306406157"
    assert opf["narrators"] == [narration.narrator] and opf["authors"] == ["Ann Writer"]
    assert files["reader.txt"].decode().splitlines()[0] == narration.narrator
