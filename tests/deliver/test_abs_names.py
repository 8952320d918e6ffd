"""Narrators and book folders as Audiobookshelf's real name parser reads them.

The expected outputs of ``parse_name_string`` below were produced by running ABS v2.36.0's own
``server/utils/parsers/parseNameString.js`` under Node on the same strings; the fake re-implements
it, and every narrator and folder name omni-web writes must come back from it whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.assemble.records import AudiobookTags
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.deliver.layout import OutputLayout, book_place, claim_name, is_library_folder, narrator_label
from omni_web.deliver.names import kept_whole
from tests.fakes.abs_names import parse_name_string
from tests.fakes.fake_abs import folder_structure

ABS_2_36 = [  # input → what ABS 2.36.0's parseNameString.js returns (run under Node)
    ("Qwen3-TTS 0.6B CustomVoice (Vivian)", ["Qwen3-TTS 0.6B CustomVoice"]),
    ("Vivian, Qwen3-TTS 0.6B CustomVoice", ["Qwen3-TTS 0.6B CustomVoice Vivian"]),
    ("Uncle Fu, Qwen3-TTS 0.6B CustomVoice", ["Uncle Fu", "Qwen3-TTS 0.6B CustomVoice"]),
    ("Smith, Jon & Smith, Jane", ["Jon Smith", "Jane Smith"]),
    ("Jon Smith and Jane Doe", ["Jon Smith", "Jane Doe"]),
    ("dr john smith jr", ["John Smith"]),
    ("Mr. John Q. von Smith, Jr., PhD", ["John Q. von Smith", "Jr.", "PhD"]),
    ("VIVIAN - QWEN3", ["Vivian - Qwen3"]),
    ("a, b, c", ["b a"]),
    ("John (Johnny) 'JJ' Smith", ["John 'JJ' Smith"]),
    ("Le Guin, Ursula K.", ["Ursula K. Le Guin"]),
    ("Captain Nemo - Higgs Audio v3 TTS", ["Nemo - Higgs Audio v3 TTS"]),
    ("Tom of the Hill - M 2", ["Tom of the Hill - M"]),
]
MODEL = get_entry("qwen3_tts_0_6b_customvoice")
TAGS = AudiobookTags(title="Hefty Water", author="Ann Writer", series="The Water Cycle", series_part="2")


@pytest.mark.parametrize(("text", "names"), ABS_2_36)
def test_the_fake_parses_names_as_audiobookshelf_does(text: str, names: list[str]) -> None:
    assert parse_name_string(text) == names


@pytest.mark.parametrize(
    "voice", ["Vivian", "Uncle_Fu", "Smith, Jane", "Captain Nemo", "Tom and Jerry (2)", "Ryan Jr"]
)
def test_every_narrator_shape_is_kept_whole_in_tags_and_folder_names(voice: str, tmp_path: Path) -> None:
    choice = VoiceChoice.speaker(voice)
    narrator = narrator_label(MODEL, choice)
    assert parse_name_string(narrator) == [narrator]  # composer tag, reader.txt
    for tags in (TAGS, AudiobookTags(title="Hefty Water", author="Ann Writer")):
        names = []
        for _ in range(2):  # the second is a numbered copy of the first
            name = claim_name(tmp_path, tags, MODEL, choice, layout=OutputLayout.LIBRARY, claimed=names)
            names.append(name)
            place = book_place(tmp_path, tags, name, layout=OutputLayout.LIBRARY)
            read = folder_structure(place.folder.relative_to(tmp_path).as_posix())
            assert read["narrators"] == [narrator] and read["authors"] == ["Ann Writer"], (name, read)
            assert is_library_folder(place.folder)
        assert read["title"] == "Hefty Water (2)" and names[0] != names[1]
        if tags.series:
            assert read["series"] == [{"name": "The Water Cycle", "sequence": "2"}]


def test_voice_and_model_stay_apart_and_two_voices_are_two_narrators() -> None:
    vivian, fu = (narrator_label(MODEL, VoiceChoice.speaker(v)) for v in ("Vivian", "Uncle_Fu"))
    assert vivian == "Vivian - Qwen3-TTS 0.6B CustomVoice" and fu == "Uncle Fu - Qwen3-TTS 0.6B CustomVoice"
    assert kept_whole("dots.tts (MeanFlow)") == "dots.tts MeanFlow"
    assert parse_name_string(kept_whole("Dr Who & Rose; Martha")) == [kept_whole("Dr Who & Rose; Martha")]


def test_a_book_without_an_author_gets_no_made_up_author_folder(tmp_path: Path) -> None:
    tags = AudiobookTags(title="Hefty Water", series="The Water Cycle", series_part="2")
    name = claim_name(tmp_path, tags, MODEL, VoiceChoice.speaker("Vivian"), layout=OutputLayout.LIBRARY)
    place = book_place(tmp_path, tags, name, layout=OutputLayout.LIBRARY)
    assert place.folder.parent == tmp_path, place.folder
    read = folder_structure(place.folder.relative_to(tmp_path).as_posix())
    assert read["authors"] == [] and read["title"] == "Hefty Water"
    assert read["narrators"] == ["Vivian - Qwen3-TTS 0.6B CustomVoice"]
