"""Delivery per line: the tag verb names how a quote is said, and each model gets it in its own
control (instructions, a leading token, a bracket cue) or not at all; the chunk's text stays the book's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.cast import Cast, tag_delivery
from omni_web.catalog import get_entry
from omni_web.client import SpeechRequest, VoiceChoice, build_speech_payload
from omni_web.pipeline import ConvertRequest, plan_conversion
from omni_web.settings import Settings
from tests.epub_builder import make_epub, xhtml

SCENE = [
    "The cabin was dark and the lamp swung on its hook.",
    "“They are coming,” Mary whispered. “Hide the letters.”",
    "“Let them come!” roared Ahab. “I fear no man.”",
    "“You will hang for this,” said Mary sadly.",
    "“Then I hang,” said Ahab.",
]


def test_tag_verbs_and_adverbs_name_the_delivery() -> None:
    assert tag_delivery(" she whispered, leaning close.", "") == "whispered"
    assert tag_delivery(" roared the Captain.", "") == "shouted"
    assert tag_delivery(", said Mary sadly. Then she left.", "") == "sad"
    assert tag_delivery(" he laughed.", "") == "laughing"
    assert tag_delivery("", "Then he snapped: ") == "angry"
    assert tag_delivery(" said Ahab.", "") is None
    assert tag_delivery(" said Ahab. She whispered nothing back.", "") is None  # another sentence


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("delivery")
    body = "<h1>The Cabin</h1>" + "".join(f"<p>{p}</p>" for p in SCENE)
    return load_book(make_epub(folder / "cabin.epub", (("c1.xhtml", xhtml(body)),), title="The Cabin"))


def _plan(book, model: str, cast: Cast):
    # The floor under the rules' "same paragraph as the tag" guess (0.55), so Mary's second quote is hers.
    cast = replace(cast, min_confidence=0.5)
    request = ConvertRequest(book_path=Path(book.source_path), model_key=model, voice=VoiceChoice.default(),
                             cast=cast)
    return plan_conversion(book, request, get_entry(model), Settings())


def _sent(model: str, item) -> dict:
    return build_speech_payload(
        get_entry(model), SpeechRequest(item.text, item.voice), inline_reference=False
    )


def test_each_model_gets_the_delivery_in_its_own_control(book) -> None:
    mary, ahab = VoiceChoice.speaker("Serena"), VoiceChoice.speaker("Eric")
    for model, expect in (
        ("qwen3_tts_0_6b_customvoice", "instructions"),
        ("fish_s2_pro", "[whispering] "),
        ("higgs_audio_v3_tts", "<|style:whispering|>"),
    ):
        entry = get_entry(model)
        if entry.voice_mode.value == "builtin_speakers":
            cast = Cast.of(characters={"Mary": mary, "Ahab": ahab}, delivery=True)
        else:
            cast = Cast.of(
                dialogue=VoiceChoice.default(), characters={"Mary": VoiceChoice.default()}, delivery=True
            )
        items = [i for i in _plan(book, model, cast).items if "Hide" in i.text or "come!" in i.text]
        whispered = next(i for i in items if "Hide" in i.text)
        assert (
            whispered.voice.delivery == "whispered" and whispered.text == '"Hide the letters."'
        )  # the book's words
        payload = _sent(model, whispered)
        if expect == "instructions":
            assert (
                payload["instructions"] == "Whisper the line, soft and breathy."
                and payload["voice"] == "Serena"
            )
            assert payload["input"] == whispered.text
            shouted = next(i for i in items if "come!" in i.text)
            assert _sent(model, shouted)["instructions"].startswith("Shout the line")
        else:
            assert payload["input"] == expect + whispered.text and "instructions" not in payload


def test_a_model_without_a_control_reads_plainly_and_delivered_lines_change_only_their_keys(book) -> None:
    cast = Cast.of(
        dialogue=VoiceChoice.preset("casual_male"),
        characters={"Mary": VoiceChoice.preset("neutral_female")},
        delivery=False,
    )
    plain = _plan(book, "voxtral_tts", cast)
    assert all(item.voice.delivery is None and "~" not in item.speaker for item in plain.items)
    hide = next(i for i in plain.items if "Hide" in i.text)
    assert build_speech_payload(
        get_entry("voxtral_tts"), SpeechRequest(hide.text, hide.voice), inline_reference=False
    ) == {"input": hide.text, "voice": "neutral_female", "response_format": "wav"}
    qwen = Cast.of(dialogue=VoiceChoice.speaker("Ryan"), characters={"Mary": VoiceChoice.speaker("Serena")})
    off, on = (
        _plan(book, "qwen3_tts_0_6b_customvoice", qwen),
        _plan(book, "qwen3_tts_0_6b_customvoice", replace(qwen, delivery=True)),
    )
    assert [i.text for i in off.items] == [i.text for i in on.items]  # the same requests, same words
    changed = {i.text for i, j in zip(off.items, on.items, strict=True) if i.key != j.key}
    assert changed == {i.text for i in on.items if i.voice.delivery}
    assert {i.voice.delivery for i in on.items} == {None, "whispered", "shouted", "sad"}


def test_a_designed_voice_keeps_its_description_and_adds_the_delivery() -> None:
    voice = VoiceChoice.design("An old sailor's rough, low voice").with_delivery("sad")
    payload = build_speech_payload(
        get_entry("qwen3_tts_1_7b_voicedesign"), SpeechRequest("Aye.", voice), inline_reference=False
    )
    assert (
        payload["instructions"]
        == "An old sailor's rough, low voice. Say the line sadly, with a heavy, low voice."
    )
    assert payload["task_type"] == "VoiceDesign" and payload["input"] == "Aye."
