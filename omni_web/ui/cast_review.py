"""The Generate tab's cast sheet: voices picked for the main characters, the LLM pass, the review list.

Thin over :mod:`omni_web.cast`: "Pick a voice for every main character" turns the cast's ``auto``
on (the app picks from the model's speakers or designs voices, :mod:`omni_web.cast.autocast`);
the sheet lists each character with the voice that reads them and a play button on one of their
lines; "Label unsure quotes with the LLM" runs the pass set in Settings and says what it cost;
the review list shows the quotes still below the floor, and one click gives one its speaker.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.book import Book
from omni_web.cast import find_characters, load_cast_file, saved_cast_path
from omni_web.cast.autocast import ready_cast_file
from omni_web.cast.persona_llm import describer
from omni_web.cast.review import assign_quote, cast_names, joined_summary, review_list, run_llm_pass
from omni_web.catalog import get_entry
from omni_web.errors import BookError, VoiceError
from omni_web.preview import preview_cast_line
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.player import read_wav
from omni_web.ui.widgets import esc, table

__all__ = ["CastSheetRefs", "build_cast_sheet", "wire_cast_sheet"]

_SHEET = 16  # characters on the sheet (the main cast)
_REVIEW = 12  # quotes shown in the review list at once
_NARRATOR = "(the narrator)"
_MARKS = "\"'“”‘’«» "


@dataclass(frozen=True, slots=True)
class CastSheetRefs:
    """The cast sheet's components."""

    auto: gr.Checkbox
    sheet: gr.HTML
    version: gr.Number  # bumped after every change, so the play buttons are drawn again
    play: gr.Column  # where the play buttons are drawn
    llm: gr.Button
    review: gr.HTML
    quote: gr.Dropdown
    speaker: gr.Dropdown
    assign: gr.Button
    audio: gr.Audio
    notice: gr.Markdown


def build_cast_sheet() -> CastSheetRefs:
    """Create the section (inside the Generate tab, under the cast panel); the play buttons are
    drawn by :func:`wire_cast_sheet`."""
    with gr.Accordion("Cast sheet: voices for every character, the LLM, quotes to review", open=False,
                      elem_id="cast-sheet-panel"):
        auto = gr.Checkbox(label="Pick a voice for every main character", elem_id="cast-auto",
                           info="From the model's own voices by gender and age, or voices designed from a "
                                "description; your own choices above always win. The next book of a series "
                                "starts with the same voices.")
        sheet = gr.HTML(elem_id="cast-sheet")
        play = gr.Column(elem_id="cast-sheet-play")
        version = gr.Number(value=0, visible=False)
        with gr.Row():
            llm = gr.Button("LLM: join names, label unsure quotes", size="sm", elem_id="cast-llm-run")
        review = gr.HTML(elem_id="cast-review")
        with gr.Row():
            quote = gr.Dropdown(label="Quote", elem_id="cast-review-quote", interactive=True)
            speaker = gr.Dropdown(label="Who says it", elem_id="cast-review-speaker", interactive=True)
        assign = gr.Button("Give the quote this speaker", size="sm", elem_id="cast-review-assign")
        audio = gr.Audio(
            label="Character's line", interactive=False, autoplay=True, elem_id="cast-sheet-audio"
        )
        notice = gr.Markdown(elem_id="cast-sheet-notice")
    return CastSheetRefs(auto, sheet, version, play, llm, review, quote, speaker, assign, audio, notice)


def _book(ctx: UiContext, state: dict | None) -> Book:
    if not state:
        raise BookError("Upload a book first.")
    return ctx.services.library.books.load(Path(state["path"]), options=ctx.settings.read_options(ctx.paths))


def _sheet(ctx: UiContext, book: Book, model_key: str) -> tuple[bool, str, list[tuple[str, str]]]:
    """The auto box, the sheet's table and (name, line) for each play button."""
    entry = get_entry(model_key)
    cast = ready_cast_file(ctx.paths, book, entry, ctx.library, describe=describer(ctx.settings))
    voices = cast.voices_for(entry)
    people = find_characters(book, min_confidence=cast.min_confidence, edits=cast.edits)[:_SHEET]
    rows = []
    for person in people:
        spec = voices.get(person.name)
        who = "you" if person.name in cast.characters else ("picked" if spec is not None else "")
        rows.append([person.name, str(person.quotes), spec.label if spec else "dialogue voice", who])
    html = (
        table(["Character", "Lines", "Voice", "Chosen by"], rows)
        if rows
        else "No quoted speech with a speaker was found in this book."
    )
    return cast.auto, html, [(p.name, p.sample) for p in people if p.name in voices]


def _bare(quote: str) -> str:
    return quote.strip(_MARKS)


def _review(ctx: UiContext, book: Book) -> tuple[str, Any, Any]:
    """The review table, the quote menu and the speaker menu (defaulting to the best guess)."""
    every = review_list(ctx.paths, book, limit=100_000)
    quotes = every[:_REVIEW]
    names = cast_names(ctx.paths, book)
    if not quotes:
        return (
            "No quote is left below the cast's floor.",
            gr.update(choices=[], value=None),
            gr.update(choices=[], value=None),
        )
    rows = [
        [
            f"ch {q.chapter_number}",
            f"“{esc(_bare(q.text))[:140]}”",
            esc(q.guess or "?") + (f" ({q.confidence:.2f})" if q.guess else ""),
        ]
        for q in quotes
    ]
    first = quotes[0]
    menu = [(f"ch {q.chapter_number} · {_bare(q.text)[:60]}", q.key) for q in quotes]
    speakers = [*names, _NARRATOR]
    guess = first.guess if first.guess in names else (names[0] if names else _NARRATOR)
    return (
        f"<p><b>{len(every)} quotes to review</b> (below the floor; the first {len(quotes)} here):</p>"
        + table(["Chapter", "Quote", "Best guess"], rows),
        gr.update(choices=menu, value=first.key),
        gr.update(choices=speakers, value=guess),
    )


def _render(ctx: UiContext, state: dict | None, model_key: str, version: float) -> tuple[Any, ...]:
    if not state:
        empty = gr.update(choices=[], value=None)
        return False, "", "", empty, empty, version
    book = _book(ctx, state)
    auto, sheet, _ = _sheet(ctx, book, model_key)
    return (auto, sheet, *_review(ctx, book), (version or 0) + 1)


def _set_auto(
    ctx: UiContext, state: dict | None, model_key: str, on: bool, version: float
) -> tuple[Any, ...]:
    book = _book(ctx, state)
    path = saved_cast_path(ctx.paths, book)
    cast = load_cast_file(path)
    cast = replace(
        cast,
        auto=bool(on),
        enabled=True if on else cast.enabled,
        book=cast.book or book.metadata.title or book.source_path.stem,
    )
    cast.save(path)
    return _render(ctx, state, model_key, version)


def _run_llm(ctx: UiContext, state: dict | None, model_key: str, version: float) -> tuple[Any, ...]:
    run = run_llm_pass(ctx.paths, _book(ctx, state), ctx.settings)
    fell = (
        f"; {run.fell_back} of {run.windows} windows kept the rules' labels ({run.errors[-1]})"
        if run.fell_back
        else ""
    )
    told = (
        f"The LLM labelled the unsure quotes: {len(run.labels.labels)} labels saved "
        f"({run.usage.summary}){fell}. {joined_summary(run, 'split any that is wrong on the Names row')}"
    ).strip()
    return (*_render(ctx, state, model_key, version), told)


def _assign(
    ctx: UiContext, state: dict | None, model_key: str, key: str | None, who: str | None, version: float
) -> tuple[Any, ...]:
    if not key or not who:
        raise VoiceError("Pick a quote and who says it.")
    chapter, quote = (int(part) for part in key.split(":"))
    label = assign_quote(ctx.paths, _book(ctx, state), chapter, quote, "" if who == _NARRATOR else who)
    told = f"That quote is {esc(who)}'s now; the next render redoes only its chunk."
    return (*_render(ctx, state, model_key, version), told if label else "")


def _hear(ctx: UiContext, state: dict | None, model_key: str, name: str, line: str) -> tuple[Any, str]:
    """One character's line spoken in the voice the cast gives them, on the running server."""
    book = _book(ctx, state)
    entry = get_entry(model_key)
    voice = (
        ready_cast_file(ctx.paths, book, entry, ctx.library).to_cast(entry, ctx.library).character_voice(name)
    )
    if voice is None:
        raise VoiceError(
            f"{name} has no voice of their own yet; turn on 'Pick a voice for every main character'."
        )
    with tempfile.TemporaryDirectory(prefix="omni-sheet-") as tmp:
        result = preview_cast_line(
            model_key,
            voice,
            line,
            paths=ctx.paths,
            server=ctx.services.server,
            out_path=Path(tmp) / "line.wav",
        )
        return read_wav(result.path), f"{esc(name)}: “{esc(result.text)}”"


def wire_cast_sheet(ctx: UiContext, refs: CastSheetRefs, *, book: gr.State, model: gr.Dropdown) -> None:
    """Connect the sheet to the loaded book and the model picker, and draw its play buttons."""
    outputs = [refs.auto, refs.sheet, refs.review, refs.quote, refs.speaker, refs.version]
    render = guarded(lambda state, key, version: _render(ctx, state, key, version))
    # One queue for everything that redraws the sheet, taken in order: a redraw started before the
    # user ticked "auto" can no longer land after the ticked one and draw the sheet as it was.
    serial = {"concurrency_id": "cast-sheet", "concurrency_limit": 1}
    book.change(render, [book, model, refs.version], outputs, api_name="cast_sheet", **serial)
    model.change(render, [book, model, refs.version], outputs, api_visibility="private", **serial)
    refs.auto.input(
        guarded(lambda state, key, on, version: _set_auto(ctx, state, key, on, version)),
        [book, model, refs.auto, refs.version],
        outputs,
        api_name="cast_auto",
        **serial,
    )
    refs.llm.click(
        guarded(lambda state, key, version: _run_llm(ctx, state, key, version)),
        [book, model, refs.version],
        [*outputs, refs.notice],
        api_name="cast_llm",
        concurrency_limit=1,
    )
    refs.assign.click(
        guarded(lambda *values: _assign(ctx, *values)),
        [book, model, refs.quote, refs.speaker, refs.version],
        [*outputs, refs.notice],
        api_name="cast_review_assign",
        **serial,
    )

    with refs.play:
        _play_buttons(ctx, refs, book=book, model=model)


def _play_buttons(ctx: UiContext, refs: CastSheetRefs, *, book: gr.State, model: gr.Dropdown) -> None:
    """A play button per voiced character, drawn again whenever the sheet changes."""

    @gr.render(inputs=[book, model], triggers=[refs.version.change])
    def play_buttons(state: dict | None, key: str) -> None:
        if not state or not key:
            return
        _, _, lines = _sheet(ctx, _book(ctx, state), key)
        with gr.Row():
            for name, line in lines:
                button = gr.Button(f"▶ {name}", size="sm", elem_classes=["cast-play"])
                button.click(
                    guarded(lambda state, key, who=name, said=line: _hear(ctx, state, key, who, said)),
                    [book, model],
                    [refs.audio, refs.notice],
                    concurrency_limit=1,
                    concurrency_id="gpu-server",
                    api_visibility="private",
                )
