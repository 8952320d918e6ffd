"""Presets and rules: a saved preset shapes a job; a rule picks one from the book's metadata with no click."""

from __future__ import annotations

import pytest

from omni_web.errors import PresetError
from omni_web.library import Preset, Rule
from omni_web.pipeline.request import ConvertRequest
from omni_web.services import AppServices
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.fixture
def services(data_paths) -> AppServices:
    return AppServices.create(data_paths)


def _night(**changes) -> Preset:
    base = {
        "name": "Night",
        "model_key": MODEL,
        "voice": {"kind": "speaker", "name": "Ryan"},
        "qa_level": "off",
        "loudness": "podcast",
        "output_format": "mp3",
        "readalong": True,
        "chapters": "all",
    }
    return Preset.from_dict({**base, **changes})


def test_a_rule_applies_a_preset_without_a_click(services) -> None:
    services.library.presets.save(_night())
    services.library.presets.save(
        _night(
            name="Poems",
            voice={"kind": "speaker", "name": "Vivian"},
            chapters="default",
            output_format="m4b",
            readalong=False,
        )
    )
    services.library.presets.set_rules(
        [
            Rule("language", "fr", "Night"),
            Rule("author", "eliot", "Poems"),
            Rule("subject", "fantasy", "Night"),
        ]
    )
    alice = services.library.submit_book(DATA_DIR / "pg11-alice.epub")  # subject "Fantasy fiction"
    waste = services.library.submit_book(DATA_DIR / "wasteland.epub")  # author T.S. Eliot
    a, w = ConvertRequest.from_dict(alice.params), ConvertRequest.from_dict(waste.params)
    assert (a.voice.name, a.output_format, a.readalong, a.qa_level, a.loudness) == (
        "Ryan",
        "mp3",
        True,
        "off",
        "podcast",
    )
    assert a.chapters is not None and len(a.chapters) >= 10  # "all": front matter too
    assert (w.voice.name, w.output_format, w.chapters) == ("Vivian", "m4b", None)
    with pytest.raises(PresetError, match="No settings"):
        services.library.submit_book(DATA_DIR / "hefty-water.epub")  # no author, no subject: no rule matches
    fallback = services.library.submit_book(
        DATA_DIR / "hefty-water.epub", fallback="Poems"
    )  # the inbox's preset
    assert ConvertRequest.from_dict(fallback.params).voice.name == "Vivian"


def test_presets_are_checked_and_round_trip(services) -> None:
    request = ConvertRequest(
        book_path=DATA_DIR / "pg11-alice.epub", model_key=MODEL, qa_level="asr", readalong=True
    )
    saved = services.library.presets.save(Preset.from_request("From Generate", request))
    assert services.library.presets.get("from generate") == saved
    assert saved.request_for(DATA_DIR / "hefty-water.epub").qa_level == "asr"
    with pytest.raises(PresetError, match="Unknown preset field"):
        Preset.from_dict({"name": "x", "model_key": MODEL, "colour": "red"})
    with pytest.raises(PresetError, match="Bad chapter selection|chapter"):
        _night(chapters="1-x")
    with pytest.raises(PresetError, match="No preset named 'Nope'"):
        services.library.presets.set_rules([Rule("author", "a", "Nope")])
    with pytest.raises(PresetError, match="field must be one of"):
        services.library.presets.set_rules([Rule("colour", "a", "From Generate")])
    services.library.presets.set_rules([Rule("author", "carroll", "From Generate")])
    services.library.presets.delete("From Generate")
    assert services.library.presets.rules() == [] and services.library.presets.presets() == []
