"""The Generate tab's cast panel: who speaks in the book, and which voice reads each of them.

Thin over :mod:`omni_web.cast`: the panel lists the book's characters (quotes, a sample line),
maps the dialogue and each character to one of the model's voices, saves the mapping to the book's
cast file at once (so a refresh, another browser or the CLI's ``--cast saved`` see it), and speaks
a character's sample line with its voice on the running server. Generate reads the saved cast.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.book import Book
from omni_web.cast import (
    Cast,
    CastFile,
    VoiceSpec,
    find_characters,
    load_cast_file,
    saved_cast_path,
)
from omni_web.cast.autocast import render_cast
from omni_web.cast.persona_llm import describer
from omni_web.catalog import VoiceMode, get_entry
from omni_web.client import VoiceKind
from omni_web.errors import BookError, VoiceError
from omni_web.preview import preview_cast_line
from omni_web.ui.cast_names import CastNameRefs, build_cast_names, name_choices, name_edits, picked
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.player import read_wav
from omni_web.ui.widgets import esc, table
from omni_web.voices import SAMPLE_SENTENCE, VoiceOption, voice_menu

__all__ = ["CastRefs", "build_cast_panel", "request_cast", "wire_cast_panel"]

_NO_VOICE = ""  # menu value: the dialogue voice (for a character) or the narrator (for the dialogue)
_LISTED = 40  # characters shown; the rest are rare speakers
_DIALOGUE_OUTPUTS = 3  # the checkbox, the dialogue menu and the table: what a dialogue voice changes


@dataclass(frozen=True, slots=True)
class CastRefs:
    """The cast panel's components."""

    use: gr.Checkbox
    dialogue: gr.Dropdown
    dialogue_instructions: gr.Textbox  # the dialogue voice of a voice-design model
    characters: gr.HTML
    character: gr.Dropdown
    voice: gr.Dropdown
    instructions: gr.Textbox
    assign: gr.Button
    hear: gr.Button
    audio: gr.Audio
    notice: gr.Markdown
    names: CastNameRefs


def build_cast_panel() -> CastRefs:
    """Create the panel (call inside the Generate tab's layout)."""
    with gr.Accordion("Cast: dialogue and characters in their own voices", open=False, elem_id="cast-panel"):
        use = gr.Checkbox(label="Read quoted speech in the cast's voices", elem_id="cast-use",
                          info="Saved with the book; quotes are found in its own quote style.")
        dialogue = gr.Dropdown(label="Dialogue voice", elem_id="cast-dialogue", interactive=True,
                               info="For every quote whose character has no voice of its own.")
        dialogue_instructions = gr.Textbox(label="Describe the dialogue voice", visible=False, lines=2,
                                           elem_id="cast-dialogue-instructions",
                                           info="For every quote whose character has no voice of its own.")
        characters = gr.HTML(elem_id="cast-characters")
        with gr.Row():
            character = gr.Dropdown(label="Character", elem_id="cast-character", interactive=True)
            voice = gr.Dropdown(label="Voice", elem_id="cast-voice", interactive=True)
        instructions = gr.Textbox(label="Describe the character's voice", visible=False, lines=2,
                                  elem_id="cast-instructions")
        with gr.Row():
            assign = gr.Button("Give the character this voice", size="sm", elem_id="cast-assign")
            hear = gr.Button("Hear the character", size="sm", elem_id="cast-hear")
        names = build_cast_names()
        audio = gr.Audio(label="Cast preview", interactive=False, autoplay=True, elem_id="cast-audio")
        notice = gr.Markdown(elem_id="cast-notice")
    return CastRefs(
        use,
        dialogue,
        dialogue_instructions,
        characters,
        character,
        voice,
        instructions,
        assign,
        hear,
        audio,
        notice,
        names,
    )


def _book(ctx: UiContext, state: dict | None) -> Book:
    if not state:
        raise BookError("Upload a book first.")
    return ctx.services.library.books.load(Path(state["path"]), options=ctx.settings.read_options(ctx.paths))


def _options(ctx: UiContext, model_key: str) -> list[VoiceOption]:
    # The same menu as the narrator's voice: speakers, presets, library clips, uploaded voices.
    return [
        o
        for o in voice_menu(get_entry(model_key), None, ctx.library.list())
        if o.kind is not VoiceKind.DESIGN
    ]


def _spec(option: VoiceOption | None, instructions: str) -> VoiceSpec | None:
    if option is None:
        return VoiceSpec(instructions=instructions) if instructions.strip() else None
    if option.kind is VoiceKind.CLONE and option.voice is not None:
        return VoiceSpec(clone=option.voice.name)
    if option.kind is VoiceKind.DEFAULT:
        return VoiceSpec(name="default")
    return VoiceSpec(name=option.name)


def _key_of(spec: VoiceSpec | None, options: list[VoiceOption]) -> str:
    for option in options:
        if spec is not None and _spec(option, "") == spec:
            return option.key
    return _NO_VOICE


def _render(ctx: UiContext, state: dict | None, model_key: str, keep: str | None = None) -> tuple[Any, ...]:
    """Checkbox, dialogue menu, table, character menu, voice menu, the two description boxes, and
    the names row's menus (see :func:`name_choices`)."""
    if not state:
        empty = gr.update(choices=[], value=None)
        blank = (False, empty, "", empty, empty, gr.update(visible=False), gr.update(visible=False))
        return *blank, *name_choices([], None, [])
    book = _book(ctx, state)
    cast = load_cast_file(saved_cast_path(ctx.paths, book))
    design = get_entry(model_key).voice_mode is VoiceMode.INSTRUCTIONS
    options = [] if design else _options(ctx, model_key)
    people = find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits)[:_LISTED]
    voices = cast.voices_for(get_entry(model_key))  # a person's choices and the app's picks for the model
    rows = [
        [p.name, ", ".join(p.aliases), str(p.quotes), _voice_label(voices, p.name), f"“{p.sample[:120]}”"]
        for p in people
    ]
    rows += [
        [name, "", "0", spec.label, "(mapped; not found)"]
        for name, spec in cast.characters.items()
        if name not in {p.name for p in people}
    ]
    html = (
        table(["Character", "Also called", "Quotes", "Voice", "Sample line"], rows)
        if rows
        else "No quoted speech with a speaker was found in this book."
    )
    names = [p.name for p in people]
    menu = [("Narrator's voice", _NO_VOICE)] + [(o.label, o.key) for o in options]
    chosen = keep if keep in names else (names[0] if names else None)
    characters_menu = gr.update(choices=names, value=chosen)
    return (
        cast.enabled and (cast.dialogue is not None or bool(voices)),
        gr.update(choices=menu, value=_key_of(cast.dialogue, options), visible=not design),
        html,
        characters_menu,
        gr.update(
            choices=[("Dialogue voice", _NO_VOICE)] + [(o.label, o.key) for o in options],
            value=_key_of(cast.characters.get(chosen or ""), options),
            visible=not design,
        ),
        gr.update(visible=design, value=_instructions(cast.characters.get(chosen or ""))),
        gr.update(visible=design, value=_instructions(cast.dialogue)),
        *name_choices(people, chosen, cast.edits.hidden),
    )


def _instructions(spec: VoiceSpec | None) -> str:
    return (spec.instructions or "") if spec is not None else ""


def _voice_label(voices: dict[str, VoiceSpec], name: str) -> str:
    spec = voices.get(name)
    return spec.label if spec is not None else "dialogue voice"


def _option(options: list[VoiceOption], key: str | None) -> VoiceOption | None:
    return next((o for o in options if o.key == key), None) if key else None


def request_cast(ctx: UiContext, book_path: Path, model_key: str) -> Cast | None:
    """The cast Generate renders with: the book's saved cast when it is on (None: one voice)."""
    book = ctx.services.library.books.load(book_path, options=ctx.settings.read_options(ctx.paths))
    return render_cast(ctx.paths, book, get_entry(model_key), ctx.library, describe=describer(ctx.settings))


def _save(ctx: UiContext, state: dict | None, change: Callable[[CastFile], CastFile]) -> CastFile:
    """Apply ``change`` to the book's saved cast file and write it at once."""
    loaded = _book(ctx, state)
    path = saved_cast_path(ctx.paths, loaded)
    cast = change(load_cast_file(path))
    if not cast.book:
        cast = replace(cast, book=loaded.metadata.title or loaded.source_path.stem)
    cast.save(path)
    return cast


def _set_use(ctx: UiContext, state: dict | None, use: bool) -> str:
    if not state:
        return ""
    _save(ctx, state, lambda cast: replace(cast, enabled=bool(use)))
    return "Generate reads quotes in the cast's voices." if use else "Generate reads everything in one voice."


def _set_dialogue(
    ctx: UiContext, state: dict | None, model_key: str, spec: VoiceSpec | None
) -> tuple[Any, ...]:
    """The checkbox, dialogue menu and table drawn again; the character menus are left alone, so a
    character picked while this ran stays picked."""
    _save(ctx, state, lambda cast: replace(cast, dialogue=spec, enabled=True if spec else cast.enabled))
    return _render(ctx, state, model_key)[:_DIALOGUE_OUTPUTS]


def _assign(
    ctx: UiContext, state: dict | None, model_key: str, name: str | None, key: str | None, text: str
) -> tuple[Any, ...]:
    if not name:
        raise VoiceError("Pick a character first.")
    spec = _spec(_option(_options(ctx, model_key), key), text or "")
    _save(ctx, state, lambda cast: replace(cast.with_character(name, spec), enabled=True))
    return (
        *_render(ctx, state, model_key, keep=name),
        f"**{esc(name)}** is read by {esc(spec.label) if spec else 'the dialogue voice'}.",
    )


def _pick(
    ctx: UiContext, state: dict | None, model_key: str, name: str | None, names: dict[str, dict]
) -> tuple[Any, ...]:
    """The voice of the character picked, and the names row's menus for them."""
    cast = load_cast_file(saved_cast_path(ctx.paths, _book(ctx, state))) if state else CastFile()
    spec = cast.characters.get(name or "")
    voice = gr.update(value=_key_of(spec, _options(ctx, model_key)))
    return voice, _instructions(spec), *picked(names, name)


def _hear(ctx: UiContext, state: dict | None, model_key: str, name: str | None) -> tuple[Any, str]:
    """A character's sample line (or the dialogue's) spoken in its voice on the running server."""
    loaded = _book(ctx, state)
    entry = get_entry(model_key)
    cast = load_cast_file(saved_cast_path(ctx.paths, loaded))
    people = {p.name: p for p in find_characters(loaded, min_confidence=cast.min_confidence, min_quotes=1)}
    resolved = cast.to_cast(entry, ctx.library)
    speaker = name or ""
    voice = resolved.character_voice(speaker) or resolved.dialogue
    if voice is None:
        raise VoiceError(f"Give {speaker or 'the dialogue'} a voice first (or set the dialogue voice).")
    line = people[speaker].sample if speaker in people and people[speaker].sample else SAMPLE_SENTENCE
    with tempfile.TemporaryDirectory(prefix="omni-cast-") as tmp:
        result = preview_cast_line(
            model_key,
            voice,
            line,
            paths=ctx.paths,
            server=ctx.services.server,
            out_path=Path(tmp) / "cast.wav",
        )
        return read_wav(result.path), f"{esc(speaker or 'Dialogue')}: “{esc(result.text)}”"


def wire_cast_panel(ctx: UiContext, refs: CastRefs, *, book: gr.State, model: gr.Dropdown) -> None:
    """Connect the panel to the loaded book and the model picker."""
    outputs = [
        refs.use,
        refs.dialogue,
        refs.characters,
        refs.character,
        refs.voice,
        refs.instructions,
        refs.dialogue_instructions,
        refs.names.same_as,
        refs.names.alias,
        refs.names.hidden,
        refs.names.hints,
        refs.names.names,
    ]
    render = guarded(lambda state, key, keep: _render(ctx, state, key, keep=keep))
    picked = guarded(
        lambda state, key, choice: _set_dialogue(
            ctx, state, key, _spec(_option(_options(ctx, key), choice), "")
        )
    )
    described = guarded(
        lambda state, key, text: _set_dialogue(
            ctx, state, key, VoiceSpec(instructions=text.strip()) if (text or "").strip() else None
        )
    )
    # The character picked stays picked when the model changes, or a new book names them too.
    book.change(render, [book, model, refs.character], outputs, api_name="cast_panel", concurrency_limit=4)
    model.change(render, [book, model, refs.character], outputs, api_visibility="private")
    refs.use.input(
        guarded(lambda state, use: _set_use(ctx, state, use)),
        [book, refs.use],
        refs.notice,
        api_name="cast_use",
    )
    dialogue_outputs = outputs[:_DIALOGUE_OUTPUTS]
    refs.dialogue.input(picked, [book, model, refs.dialogue], dialogue_outputs, api_name="cast_dialogue")
    for event in (refs.dialogue_instructions.submit, refs.dialogue_instructions.blur):
        event(
            described, [book, model, refs.dialogue_instructions], dialogue_outputs, api_visibility="private"
        )
    refs.character.input(
        guarded(lambda state, key, name, names: _pick(ctx, state, key, name, names)),
        [book, model, refs.character, refs.names.names],
        [refs.voice, refs.instructions, refs.names.same_as, refs.names.alias],
        api_visibility="private",
    )
    _wire_names(ctx, refs, book=book, model=model, outputs=outputs)
    refs.assign.click(
        guarded(lambda *values: _assign(ctx, *values)),
        [book, model, refs.character, refs.voice, refs.instructions],
        [*outputs, refs.notice],
        api_name="cast_assign",
    )
    refs.hear.click(
        guarded(lambda state, key, name: _hear(ctx, state, key, name)),
        [book, model, refs.character],
        [refs.audio, refs.notice],
        api_name="cast_hear",
        concurrency_limit=1,
        concurrency_id="gpu-server",
    )


def _wire_names(ctx: UiContext, refs: CastRefs, *, book: gr.State, model: gr.Dropdown, outputs: list) -> None:
    """The names row: each edit is saved, said in the notice, and the panel drawn again with it."""
    names = refs.names
    redraw = guarded(lambda state, key, keep: _render(ctx, state, key, keep=keep))

    def edit(action: str) -> Callable[..., str]:
        def handler(state: dict | None, *values: str | None) -> str:
            return name_edits(lambda change: _save(ctx, state, change))[action](*values)

        return guarded(handler)

    for button, action, inputs in (
        (names.merge, "merge", [refs.character, names.same_as]),
        (names.rename, "rename", [refs.character, names.new_name]),
        (names.split, "split", [refs.character, names.alias]),
        (names.hide, "hide", [refs.character]),
        (names.unhide, "unhide", [names.hidden]),
    ):
        done = button.click(edit(action), [book, *inputs], refs.notice, api_name=f"cast_{action}")
        keep = names.new_name if action == "rename" else refs.character
        done.success(redraw, [book, model, keep], outputs, api_visibility="private")
