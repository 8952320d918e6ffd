"""A cast through the pipeline: chunks by speaker, keys by voice, and what the (fake) server is sent."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from omni_web.book import PauseKind, load_book
from omni_web.cast import DIALOGUE, NARRATOR, Cast, book_quote_style, chapter_dialogue
from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, VoiceChoice
from omni_web.errors import UnknownVoice, VoiceError
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, plan_conversion, run_conversion
from omni_web.settings import Settings
from omni_web.text import spoken_form
from tests.conftest import DATA_DIR
from tests.epub_builder import make_epub, xhtml

MODEL = "qwen3_tts_0_6b_customvoice"
FAST = {"FAKE_SGL_SECONDS_PER_WORD": "0.004"}
ALICE = DATA_DIR / "pg11-alice.epub"
TEA_PARTY = 12  # "CHAPTER VII. A Mad Tea-Party"

PEQUOD = [
    "The deck was wet and the crew stood waiting for the captain to come up from below.",
    "“Call me when the whale blows,” said Ahab, “and not a moment later.”",
    "“Aye, sir,” Starbuck said.",
    "“Do you think it will come tonight?” asked Stubb.",
    "Nobody answered him. The wind rose over the water.",
]


def pequod(tmp_path: Path) -> Path:
    body = "<h1>Chapter One</h1>" + "".join(f"<p>{p}</p>" for p in PEQUOD)
    return make_epub(tmp_path / "pequod.epub", (("c1.xhtml", xhtml(body)),), title="The Pequod")


def request(book: Path, cast: Cast | None = None, **kwargs) -> ConvertRequest:
    return ConvertRequest(
        book_path=book, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), cast=cast, **kwargs
    )


def test_chunks_never_mix_narration_and_speech_and_pauses_stay_natural() -> None:
    book = load_book(ALICE)
    entry = get_entry(MODEL)
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"))
    plan = plan_conversion(book, request(ALICE, cast, chapters=(TEA_PARTY,)), entry, Settings())
    work = plan.chapters[0]
    dialogue = chapter_dialogue(work.chapter, book_quote_style(book, [work.chapter]))
    speech = spoken_form(book, entry=entry, settings=Settings())  # normalisation and lexicon, as sent
    spans = {True: [], False: []}
    for paragraph in dialogue.paragraphs:
        for span in paragraph.spans:
            spans[span.is_dialogue].append(speech.spoken(span.text))
    spans[False].append(speech.spoken(work.chapter.title))
    for chunk, item in zip(work.chunks, work.items, strict=True):
        speech = chunk.speaker != NARRATOR
        assert item.voice == (cast.dialogue if speech else VoiceChoice.speaker("Vivian"))
        # Every chunk is (a piece of) one span of its own kind: never narration and speech together.
        assert any(chunk.text in text for text in spans[speech]), chunk
        assert speech == chunk.text.startswith('"') or len(chunk.text.split()) > 20
    kinds = [c.pause_after for c in work.chunks]
    assert kinds.count(PauseKind.CHAPTER_END) == 1 and kinds[-1] is PauseKind.CHAPTER_END
    assert PauseKind.CLAUSE in kinds  # '"Have some wine,"' | 'the March Hare said …'
    pauses = dict(zip(work.chunks, work.pauses_ms, strict=True))
    clause = next(c for c in work.chunks if c.text == '"Have some wine,"')
    assert (
        clause.pause_after is PauseKind.CLAUSE and pauses[clause] == Settings().pause_between_chunks_ms // 2
    )
    # Without a cast, the chapter is chunked exactly as before (no speaker labels at all).
    single = plan_conversion(book, request(ALICE, chapters=(TEA_PARTY,)), entry, Settings()).chapters[0]
    assert {c.speaker for c in single.chunks} == {NARRATOR} and len(single.chunks) < len(work.chunks)


def test_a_characters_voice_is_part_of_its_chunks_keys_only() -> None:
    book = load_book(ALICE)
    entry = get_entry(MODEL)
    dialogue = VoiceChoice.speaker("Ryan")
    before = plan_conversion(
        book, request(ALICE, Cast.of(dialogue=dialogue), chapters=(TEA_PARTY,)), entry, Settings()
    )
    after = plan_conversion(
        book,
        request(
            ALICE,
            Cast.of(dialogue=dialogue, characters={"Hatter": VoiceChoice.speaker("Eric")}),
            chapters=(TEA_PARTY,),
        ),
        entry,
        Settings(),
    )
    changed = [(a, b) for a, b in zip(before.items, after.items, strict=True) if a.key != b.key]
    assert changed and all(
        b.speaker == "Hatter" and b.voice == VoiceChoice.speaker("Eric") for _, b in changed
    )
    hatter = [item for item in after.items if item.speaker == "Hatter"]
    assert len(changed) == len(hatter) >= 20
    # Narration keeps the key it has without any cast, so adding a cast re-renders no narration.
    plain = {
        item.text: item.key
        for item in plan_conversion(book, request(ALICE, chapters=(TEA_PARTY,)), entry, Settings()).items
    }
    same_text = [i for i in after.items if i.speaker == NARRATOR and i.text in plain]
    assert len(same_text) >= 5 and all(i.key == plain[i.text] for i in same_text)
    # A low-confidence quote falls back to the dialogue voice.
    strict = plan_conversion(
        book,
        request(
            ALICE,
            Cast.of(
                dialogue=dialogue, characters={"Hatter": VoiceChoice.speaker("Eric")}, min_confidence=0.99
            ),
            chapters=(TEA_PARTY,),
        ),
        entry,
        Settings(),
    )
    assert {i.speaker for i in strict.items} == {NARRATOR, DIALOGUE}


# The fake speaks 0.004 s a word, which is no speech: QA (test_qa_pipeline.py) would retake every chunk.
NO_QA = Settings(qa_level="off")


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_convert_sends_narration_as_a_and_quotes_as_b_and_resumes(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={**FAST, "FAKE_SGL_REQUEST_LOG": str(log)})
    book = pequod(tmp_path)
    cast = Cast.of(dialogue=VoiceChoice.speaker("ryan"))
    with SpeechClient(server.base_url) as client:
        result = run_conversion(request(book, cast), paths=data_paths, settings=NO_QA, client=client)
    sent = read_log(log)
    by_voice: dict[str, list[str]] = {}
    for body in sent:
        by_voice.setdefault(body["voice"], []).append(body["input"])
    assert set(by_voice) == {"Vivian", "Ryan"}  # the server's spelling, resolved before any request
    assert all(text.startswith('"') and text.endswith('"') for text in by_voice["Ryan"])
    assert not any('"' in text for text in by_voice["Vivian"])
    assert '"Call me when the whale blows,"' in by_voice["Ryan"] and "said Ahab" in by_voice["Vivian"]
    assert "Nobody answered him. The wind rose over the water." in by_voice["Vivian"]
    assert result.m4b is not None and result.chunks_total == len(sent)
    # Resume: the same run renders nothing; mapping Starbuck to a third voice renders only his quote.
    with SpeechClient(server.base_url) as client:
        again = run_conversion(request(book, cast), paths=data_paths, settings=NO_QA, client=client)
        assert again.chunks_cached == again.chunks_total and len(read_log(log)) == len(sent)
        third = Cast.of(
            dialogue=VoiceChoice.speaker("ryan"), characters={"Starbuck": VoiceChoice.speaker("eric")}
        )
        run_conversion(request(book, third), paths=data_paths, settings=NO_QA, client=client)
    extra = read_log(log)[len(sent) :]
    assert [(b["voice"], b["input"]) for b in extra] == [("Eric", '"Aye, sir,"')]


@pytest.mark.parametrize(
    ("cast", "error", "match"),
    [
        (
            Cast.of(dialogue=VoiceChoice.speaker("Nobody")),
            UnknownVoice,
            "for the dialogue: Unknown voice 'Nobody'.*Vivian",
        ),
        (
            Cast.of(characters={"Ahab": VoiceChoice.design("A gruff old sailor")}),
            VoiceError,
            "for Ahab: .*design",
        ),
        (Cast.of(characters={"Ahab": VoiceChoice.uploaded("sailor")}), VoiceError, "for Ahab: .*uploaded"),
    ],
)
def test_every_cast_voice_is_checked_before_any_request(
    data_paths: DataPaths, fake_server, tmp_path: Path, cast: Cast, error: type, match: str
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(MODEL, env={**FAST, "FAKE_SGL_REQUEST_LOG": str(log)})
    with SpeechClient(server.base_url) as client, pytest.raises(error, match=match):
        run_conversion(request(pequod(tmp_path), cast), paths=data_paths, settings=NO_QA, client=client)
    assert read_log(log) == []


def test_a_cast_round_trips_through_job_params(tmp_path: Path) -> None:
    cast = Cast.of(
        dialogue=VoiceChoice.speaker("Ryan"),
        characters={
            "Ahab": VoiceChoice.clone(tmp_path / "ahab.wav", "Hello."),
            "Stubb": VoiceChoice.design("Cheerful"),
        },
        min_confidence=0.7,
    )
    original = request(tmp_path / "b.epub", cast)
    assert ConvertRequest.from_dict(json.loads(json.dumps(original.to_dict()))) == original
    assert ConvertRequest.from_dict(request(tmp_path / "b.epub").to_dict()).cast is None
    assert replace(original, cast=Cast()).cast.active is False


def test_dash_dialogue_and_the_lexicon_go_through_the_cast(tmp_path: Path) -> None:
    from omni_web.text import Lexicon, LexiconEntry, Pronouncer

    body = "".join(
        f"<p>{p}</p>"
        for p in [
            "Llovía sobre el puerto de Valparaíso desde el amanecer.",
            "—¿Vienes, Quijano? —preguntó Juan—. Son las 3 y media.",
            "—No —respondió Quijano.",
        ]
    )
    book_path = make_epub(
        tmp_path / "puerto.epub", (("c1.xhtml", xhtml(f"<h1>Uno</h1>{body}")),), title="Puerto", language="es"
    )
    book = load_book(book_path)
    lexicon = Pronouncer(Lexicon().merged([LexiconEntry("Quijano", "Kijano")])[0])
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"), characters={"Quijano": VoiceChoice.speaker("Eric")})
    plan = plan_conversion(book, request(book_path, cast), get_entry(MODEL), Settings(), pronouncer=lexicon)
    said = [(item.speaker, item.voice.name, item.text) for item in plan.items]
    # Juan has no voice of his own: his line is read under the dialogue voice's label, the lexicon
    # applying inside the quote.
    assert (DIALOGUE, "Ryan", "¿Vienes, Kijano?") in said
    assert any(who == NARRATOR and "preguntó Juan" in text for who, _, text in said)
    assert any(who == "Quijano" and voice == "Eric" and text.startswith("No") for who, voice, text in said)
    spoken = " ".join(text for *_, text in said)
    assert "Quijano" not in spoken and "—" not in spoken and "3" not in spoken  # normalised ("tres")


def test_qa_retakes_keep_each_chunks_voice_and_resume_renders_nothing(
    data_paths: DataPaths, fake_server, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        MODEL,
        env={
            "FAKE_SGL_FAULTS": "cut,silent",
            "FAKE_SGL_FAULT_SHARE": "0.15",
            "FAKE_SGL_REQUEST_LOG": str(log),
            "FAKE_SGL_SLOTS": "8",
        },
    )
    settings = Settings(chunk_size_words=40, qa_level="basic")
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"), characters={"Hatter": VoiceChoice.speaker("Eric")})
    job = request(ALICE, cast, chapters=(TEA_PARTY,))
    plan = plan_conversion(load_book(ALICE), job, get_entry(MODEL), settings)
    expected: dict[str, set[str]] = {}
    for item in plan.items:
        expected.setdefault(item.text, set()).add(item.voice.name)
    with SpeechClient(server.base_url) as client:
        result = run_conversion(job, paths=data_paths, settings=settings, client=client)
    sent = read_log(log)
    assert len(sent) > len({i.key for i in plan.items})  # QA retook faulty takes
    for body in sent:  # every take, first or retake, in the chunk's own voice
        assert body["voice"] in expected[body["input"]], body
    assert {"Vivian", "Ryan", "Eric"} <= {body["voice"] for body in sent}
    assert result.m4b is not None
    with SpeechClient(server.base_url) as client:
        again = run_conversion(job, paths=data_paths, settings=settings, client=client)
    assert len(read_log(log)) == len(sent) and again.chunks_cached == again.chunks_total


def test_speakers_read_in_one_voice_share_a_request_and_attributions_stay_with_them() -> None:
    book = load_book(ALICE)
    entry = get_entry(MODEL)
    ryan = VoiceChoice.speaker("Ryan")
    plain = len(plan_conversion(book, request(ALICE), entry, Settings()).items)
    alice_only = plan_conversion(book, request(ALICE, Cast.of(characters={"Alice": ryan})), entry, Settings())
    everyone = len(plan_conversion(book, request(ALICE, Cast.of(dialogue=ryan)), entry, Settings()).items)
    # Only Alice has a voice: the others' quotes and the "said the Hatter" between them are the
    # narrator's, read in one request with the narration around them (was 2,107 requests).
    assert len(alice_only.items) < 1.65 * plain < everyone, (plain, len(alice_only.items), everyone)
    assert {i.speaker for i in alice_only.items} == {NARRATOR, "Alice"}
    assert all(
        i.voice == (ryan if i.speaker == "Alice" else VoiceChoice.speaker("Vivian")) for i in alice_only.items
    )
    assert any(i.text.startswith('"There isn\'t any," said the March Hare') for i in alice_only.items)
