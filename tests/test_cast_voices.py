"""A voice for every main character with no click: a 30-character novel cast from the model's own
speakers by gender and age, on a voice-design model with described voices, and on a clone model
with voices designed on Qwen3-TTS VoiceDesign (the fake server) and then cloned by the Base model;
the next book of the series reuses the voices."""

from __future__ import annotations

import json
import os
import re
import signal
from dataclasses import replace
from pathlib import Path

import pytest

from omni_web.book import load_book
from omni_web.cast import CastFile, VoiceSpec, load_cast_file, saved_cast_path
from omni_web.cast.autocast import ready_cast_file, render_cast
from omni_web.cast.casting import guess_personas
from omni_web.cast.characters import find_characters
from omni_web.cast.design import VOICE_DESIGN_MODEL, pending_designs
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.jobs import JobContext, JobStore
from omni_web.library import CONVERT_JOB, make_convert_runner
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.server import ServerManager
from omni_web.server.process import signal_group
from omni_web.server.record import load_record, record_matches_process
from omni_web.settings import Settings, save_settings
from omni_web.voices import VoiceLibrary
from tests.epub_builder import make_epub, xhtml
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni

CUSTOM = get_entry("qwen3_tts_0_6b_customvoice")
BASE = get_entry("qwen3_tts_0_6b_base")
DESIGN = get_entry(VOICE_DESIGN_MODEL)
# (name, gender): honorifics and pronouns tell them apart; lines fall from 31 to 2.
PEOPLE = [
    ("Mr. Abbott", "male"), ("Mrs. Bell", "female"), ("Captain Crane", "male"), ("Miss Dale", "female"),
    ("Edgar", "male"), ("Fanny", "female"), ("Uncle Giles", "male"), ("Aunt Hester", "female"),
    ("Ivo", "male"), ("Juno", "female"), ("Kit", "male"), ("Lena", "female"), ("Milo", "male"),
    ("Nora", "female"), ("Otto", "male"), ("Pia", "female"), ("Quill", "male"), ("Rosa", "female"),
    ("Silas", "male"), ("Tess", "female"), ("Ugo", "male"), ("Vera", "female"), ("Wendel", "male"),
    ("Xenia", "female"), ("Yorick", "male"), ("Zelda", "female"), ("Amos", "male"), ("Beryl", "female"),
    ("Cyril", "male"), ("Dora", "female"),
]
LINES = ("The tide is turning and we must go.", "I never said that to anyone at all.",
         "Bring the lantern here before it is dark.", "Nobody knows the road better than I do.")


def novel(path: Path, title: str, *, series: str = "", people=PEOPLE, most: int = 31) -> Path:
    """Chapters where each character speaks, most often the first named (``most`` lines)."""
    paragraphs = []
    for rank, (name, gender) in enumerate(people):
        pronoun = "He" if gender == "male" else "She"
        for k in range(max(2, most - rank)):
            paragraphs.append(f"“{LINES[k % len(LINES)]}” said {name}. {pronoun} looked at the sea.")
    chapters = [paragraphs[i:i + 60] for i in range(0, len(paragraphs), 60)]
    docs = tuple((f"c{n}.xhtml", xhtml(f"<h1>Chapter {n + 1}</h1>" + "".join(f"<p>{p}</p>" for p in chapter)))
                 for n, chapter in enumerate(chapters))
    meta = f'<meta name="calibre:series" content="{series}"/>' if series else ""
    return make_epub(path, docs, title=title, author="Ann Writer", extra_meta=meta)


@pytest.fixture(scope="module")
def thirty(tmp_path_factory):
    return load_book(novel(tmp_path_factory.mktemp("novel") / "thirty.epub", "Thirty Voices", series="Tides"))


def _auto(paths: DataPaths, book) -> None:
    CastFile(book=book.metadata.title, auto=True).save(saved_cast_path(paths, book))


def test_built_in_speakers_by_gender_and_age_distinct_and_never_the_narrators(tmp_path, thirty) -> None:
    paths = DataPaths(tmp_path)
    _auto(paths, thirty)
    cast = ready_cast_file(paths, thirty, CUSTOM, VoiceLibrary(paths))
    picked = cast.voices_for(CUSTOM)
    assert len(picked) == 8 and len({v.name for v in picked.values()}) == 8  # nine speakers, one narrates
    assert "Vivian" not in {v.name for v in picked.values()}
    traits = {name: (gender, age) for name, gender, age in CUSTOM.speaker_traits}
    genders = dict(PEOPLE)
    top = [name for name, _ in PEOPLE[:8]]
    assert sorted(picked) == sorted(top)  # the main characters: most lines first
    matched = sum(traits[v.name][0] == genders[n] for n, v in picked.items())
    assert matched >= 7, {n: v.name for n, v in picked.items()}
    assert traits[picked["Uncle Giles"].name] == ("male", "old")
    assert load_cast_file(saved_cast_path(paths, thirty)).picked_for == CUSTOM.key  # saved: the CLI sees it
    # A person's choice wins and the app's picks move out of its way.
    chosen = replace(cast, characters={"Edgar": VoiceSpec(name="Uncle_Fu")})
    chosen.save(saved_cast_path(paths, thirty))
    again = ready_cast_file(paths, thirty, CUSTOM, VoiceLibrary(paths)).voices_for(CUSTOM)
    assert again["Edgar"].name == "Uncle_Fu"
    resolved = render_cast(paths, thirty, CUSTOM, VoiceLibrary(paths))
    assert resolved is not None and resolved.character_voice("Mrs. Bell") == VoiceChoice.speaker(
        picked["Mrs. Bell"].name
    )


def test_a_voice_design_model_gets_a_distinct_description_per_main_character(tmp_path, thirty) -> None:
    paths = DataPaths(tmp_path)
    _auto(paths, thirty)
    picked = ready_cast_file(paths, thirty, DESIGN, VoiceLibrary(paths)).voices_for(DESIGN)
    assert len(picked) == 12 and len({v.instructions for v in picked.values()}) == 12
    assert picked["Mrs. Bell"].instructions.startswith("A woman's")
    assert picked["Uncle Giles"].instructions.startswith("An old man's")


def test_the_next_book_of_the_series_reuses_the_voices_with_no_click(tmp_path, thirty) -> None:
    paths = DataPaths(tmp_path)
    _auto(paths, thirty)
    first = ready_cast_file(paths, thirty, CUSTOM, VoiceLibrary(paths))
    first = replace(first, characters={"Fanny": VoiceSpec(name="Ono_Anna")})  # a person's earlier choice
    first.save(saved_cast_path(paths, thirty))
    # Book two: the same series; two new characters take the lead, the old ones speak less.
    people = [("Hugo", "male"), ("Ida", "female"), *PEOPLE[:10]]
    second = load_book(novel(tmp_path / "two.epub", "Thirty Voices II", series="Tides", people=people))
    cast = ready_cast_file(paths, second, CUSTOM, VoiceLibrary(paths))
    voices = cast.voices_for(CUSTOM)
    for name, spec in first.voices_for(CUSTOM).items():
        assert voices[name] == spec, name  # every earlier voice, the user's choice included
    assert voices["Fanny"].name == "Ono_Anna"
    assert saved_cast_path(paths, second).is_file() and cast.series == "Tides"
    # No series metadata: the same author and shared characters find it too.
    third = load_book(novel(tmp_path / "three.epub", "Another Tide", people=PEOPLE[:6]))
    assert (
        ready_cast_file(paths, third, CUSTOM, VoiceLibrary(paths)).voices_for(CUSTOM)["Fanny"].name
        == "Ono_Anna"
    )
    other = load_book(novel(tmp_path / "other.epub", "Unrelated", people=[("Hugo", "male"), ("Zed", "male")]))
    assert not ready_cast_file(paths, other, BASE, VoiceLibrary(paths)).voices_for(BASE)


@pytest.fixture
def manager(data_paths):
    install_fake_sgl_omni(data_paths.backend_venv)
    log = data_paths.root / "requests.jsonl"
    os.environ["FAKE_SGL_REQUEST_LOG"] = str(log)
    os.environ["FAKE_SGL_SECONDS_PER_WORD"] = "0.15"
    settings = Settings(server_port=free_port(), start_timeout_s=60)
    save_settings(data_paths, settings)  # the job runner reads the data root's settings
    manager = ServerManager(data_paths, settings, poll_interval_s=0.1)
    yield manager, log
    os.environ.pop("FAKE_SGL_REQUEST_LOG", None)
    os.environ.pop("FAKE_SGL_SECONDS_PER_WORD", None)
    record = load_record(data_paths)
    if record is not None and record_matches_process(record):
        signal_group(record.pgid, signal.SIGKILL)


@pytest.mark.slow
def test_designed_on_voice_design_then_cloned_by_the_base_model(manager, data_paths, tmp_path) -> None:
    """Through the job runner: the job serves VoiceDesign once for all five designs, saves them to
    the library with their transcript, then serves the Base model, which clones them."""
    server, log = manager
    people = PEOPLE[:5]
    book = load_book(novel(tmp_path / "five.epub", "Five Voices", people=people, most=6))
    _auto(data_paths, book)
    library = VoiceLibrary(data_paths)
    cast = render_cast(data_paths, book, BASE, library)
    designs = pending_designs(cast)
    assert sorted(d.character for d in designs) == sorted(name for name, _ in people)
    narrator = tmp_path / "narrator.wav"
    narrator.write_bytes(_narrator_clip())
    request = ConvertRequest(
        book_path=Path(book.source_path),
        model_key=BASE.key,
        voice=VoiceChoice.clone(narrator),
        chapters=(1,),
        cast=cast,
        output_dir=str(tmp_path / "out"),
    )
    store = JobStore(data_paths.jobs_db)
    job = store.enqueue(CONVERT_JOB, request.to_dict(), title="Five Voices")
    messages: list[str] = []
    ctx = JobContext(store, job)
    ctx.report = lambda progress: messages.append(str(progress.get("message") or ""))  # type: ignore[method-assign]
    result = make_convert_runner(data_paths, server)(job, ctx)
    assert Path(result["m4b"]).is_file()
    assert any("Designing 5 character voices" in m for m in messages)
    for design in designs:
        voice = library.get(design.clip.stem)
        assert voice.transcript == design.transcript and voice.duration_s > 2
    assert pending_designs(render_cast(data_paths, book, BASE, library)) == []
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    designed = [s for s in sent if s.get("task_type") == "VoiceDesign"]
    cloned = [s for s in sent if s.get("ref_text") == designs[0].transcript]  # the characters' lines
    assert len(designed) == 5 and {s["instructions"] for s in designed} == {d.description for d in designs}
    assert len({s["ref_audio"] for s in cloned}) == 5  # five clips, one per character
    assert sent.index(designed[-1]) < sent.index(cloned[0])  # designed first, then the book on Base
    assert load_record(data_paths).model_key == BASE.key  # the server was switched back for the book


def _narrator_clip() -> bytes:
    """A few seconds of the fake's speech-like audio as the narrator's clip."""
    from tests.fakes.fake_sgl_omni_audio import synthesize_pcm, wav_bytes

    pcm = synthesize_pcm(
        "the narrator reads the book aloud to everyone who listens tonight",
        voice_key="narrator",
        rate=24000,
        channels=1,
        seconds_per_word=0.4,
    )
    return wav_bytes(pcm, rate=24000, channels=1)


def test_personas_from_the_llm_describe_the_designed_voices_and_a_bad_answer_keeps_the_books(
    tmp_path, thirty
) -> None:
    from omni_web.cast.persona_llm import llm_personas
    from omni_web.llm import ChatClient
    from tests.fakes.fake_chat import FakeChat, serve_fake_chat

    def casting(user: str) -> str:
        ids = re.findall(r"^C(\d+): ", user, flags=re.M)
        return json.dumps(
            {
                "characters": [
                    {
                        "id": f"C{n}",
                        "gender": "female" if int(n) % 2 else "male",
                        "age": "old",
                        "voice": f"Voice number {n}, low and slow.",
                    }
                    for n in ids
                ]
            }
        )

    paths = DataPaths(tmp_path)
    _auto(paths, thirty)
    with serve_fake_chat(FakeChat(answer=casting)) as url:
        client = ChatClient(url)
        picked = ready_cast_file(
            paths,
            thirty,
            DESIGN,
            VoiceLibrary(paths),
            describe=lambda book, people: llm_personas(book, people, client),
        ).voices_for(DESIGN)
    assert picked["Mr. Abbott"].instructions == "Voice number 1, low and slow."
    assert len({v.instructions for v in picked.values()}) == len(picked) == 12
    people = find_characters(thirty)[:3]
    with serve_fake_chat(FakeChat(answer=lambda user: "I would cast Meryl Streep.")) as url:
        kept = llm_personas(thirty, people, ChatClient(url))
    assert [p.description for p in kept.values()] == [
        p.description for p in guess_personas(thirty, people).values()
    ]
