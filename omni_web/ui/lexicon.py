"""The Lexicon panel: how names and symbols are said, for this book or for every book.

List, add, edit and remove entries, hear one spoken in a sample sentence by the running server,
find the words a model may misread, and import or export the lexicon as a YAML file. Saving or
removing an entry says how many chunks of the loaded book it changes (only those are rendered
again). The panel is a reusable builder: Generate attaches it under its form, and any other tab
(the QA review) can attach its own copy with its own book, model and voice inputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.assemble import safe_filename
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import LexiconError
from omni_web.pronunciation import hear_entry, sample_sentence
from omni_web.text import (
    BookIdentity,
    CaseRule,
    LexiconEntry,
    LexiconStore,
    Pronouncer,
    book_identity,
    edit_impact,
    find_candidates,
)
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import esc, table

__all__ = ["SCOPE_BOOK", "SCOPE_GLOBAL", "LexiconRefs", "build_lexicon_panel"]

SCOPE_BOOK = "This book"
SCOPE_GLOBAL = "All books"
_CANDIDATES_SHOWN = 40
# (model key, *voice values) -> the voice a sample is spoken with.
VoiceOf = Callable[..., VoiceChoice]


@dataclass(frozen=True, slots=True)
class LexiconRefs:
    """The panel's components."""

    scope: gr.Radio
    listing: gr.HTML
    pick: gr.Dropdown
    written: gr.Textbox
    spoken: gr.Textbox
    regex: gr.Checkbox
    inside_words: gr.Checkbox
    case: gr.Dropdown
    note: gr.Textbox
    sample: gr.Textbox
    save: gr.Button
    remove: gr.Button
    hear: gr.Button
    audio: gr.Audio
    notice: gr.Markdown
    find: gr.Button
    candidates: gr.HTML
    candidate: gr.Dropdown
    import_file: gr.File
    export: gr.DownloadButton


def _book_path(value: Any) -> Path | None:
    """The book path in a form's book input: Generate's state dict, a plain path string, or nothing."""
    if isinstance(value, dict):
        value = value.get("path")
    return Path(value) if value else None


def _identity(ctx: UiContext, value: Any) -> tuple[Path | None, BookIdentity | None]:
    path = _book_path(value)
    return path, (
        book_identity(ctx.services.library.books.load(path, options=ctx.settings.read_options(ctx.paths)))
        if path is not None
        else None
    )


def _scope_identity(ctx: UiContext, scope: str, book: Any) -> BookIdentity | None:
    """The lexicon a scope edits: the loaded book's, or the global one."""
    _path, identity = _identity(ctx, book)
    if scope == SCOPE_BOOK:
        if identity is None:
            raise LexiconError("Load a book first to edit its own lexicon, or choose 'All books'.")
        return identity
    return None


def _entry(
    written: str, spoken: str, regex: bool, inside_words: bool, case: str, note: str = ""
) -> LexiconEntry:
    return LexiconEntry(
        written or "",
        spoken or "",
        regex=bool(regex),
        whole_word=not inside_words,
        case=CaseRule(case or "auto"),
        note=note or "",
    ).validated()


def _listing(ctx: UiContext, scope: str, book: Any) -> tuple[str, Any]:
    """(HTML table of the scope's entries, the entry picker's update)."""
    store = LexiconStore(ctx.paths)
    _path, identity = _identity(ctx, book)
    if scope == SCOPE_BOOK and identity is None:
        return '<div class="ow-dim">Load a book to see its own lexicon.</div>', gr.update(
            choices=[], value=None
        )
    target = identity if scope == SCOPE_BOOK else None
    lexicon = store.load(target)
    shadowed: set[str] = set()
    if target is None and identity is not None:
        shadowed = {e.key for e in store.load(identity).entries}
    rows = []
    for entry in lexicon.entries:
        options = [
            name for name, on in (("regex", entry.regex), ("inside words", not entry.whole_word)) if on
        ]
        if entry.case is not CaseRule.AUTO:
            options.append(f"case {entry.case.value}")
        if entry.key in shadowed:
            options.append("the book's entry wins")
        rows.append((entry.written, entry.spoken, ", ".join(options), entry.note))
    where = f"'{esc(identity.title)}'" if target is not None and identity else "every book"
    if not rows:
        html = f'<div class="ow-dim">No entries for {where} yet.</div>'
    else:
        html = f'<div class="ow-dim">{len(rows)} entries for {where}.</div>' + table(
            ["Written", "Spoken", "Options", "Note"], rows
        )
    names = [entry.written for entry in lexicon.entries]
    return html, gr.update(choices=names, value=None)


def _impact(
    ctx: UiContext,
    book: Any,
    model: str | None,
    chunk_words: Any,
    chapters: Any,
    before: Pronouncer,
    after: Pronouncer,
) -> str:
    path = _book_path(book)
    if path is None or not model:
        return ""
    chosen = None
    if chapters:
        chosen = [int(n) - 1 for n in chapters]
    impact = edit_impact(
        ctx.services.library.books.load(path, options=ctx.settings.read_options(ctx.paths)),
        before=before,
        after=after,
        entry=get_entry(model),
        settings=ctx.settings,
        chunk_words=int(chunk_words) if chunk_words else None,
        chapters=chosen,
    )
    return impact.summary


def build_lexicon_panel(
    ctx: UiContext,
    *,
    book: Any,
    model: Any,
    voice_inputs: Sequence[Any] = (),
    voice_of: VoiceOf = lambda _model, *_values: VoiceChoice.default(),
    chunk_words: Any | None = None,
    chapters: Any | None = None,
    api_prefix: str = "lexicon",
    elem_prefix: str = "lex",
    open: bool = False,  # noqa: A002 - the Accordion's own word
) -> LexiconRefs:
    """Create the panel (an accordion) where it is called, and wire it to the host's inputs.

    Args:
        book: a component whose value names the book: Generate's book state ``{"path": ...}`` or a
            path string (None: no book; only the global lexicon can be edited).
        model: the model key component (a sample is heard with it; chunks are counted as it cuts them).
        voice_inputs, voice_of: components and a function ``voice_of(model, *values)`` giving the voice.
        chunk_words, chapters: optional components for counting chunks as the job will (chapter numbers).
        api_prefix, elem_prefix: distinct per copy of the panel in one app.
    """
    with gr.Accordion("Pronunciation lexicon", open=open, elem_id=f"{elem_prefix}-panel"):
        gr.Markdown("How names and symbols are said: **written form → what the narrator is sent** "
                    "(e.g. *Hermione → her-MY-oh-nee*). Whole words, case-aware; a book's own entries win.")
        scope = gr.Radio([SCOPE_BOOK, SCOPE_GLOBAL], value=SCOPE_BOOK, label="Lexicon",
                         elem_id=f"{elem_prefix}-scope")
        listing = gr.HTML(elem_id=f"{elem_prefix}-list", padding=False)
        pick = gr.Dropdown(label="Edit an entry", choices=[], interactive=True, elem_id=f"{elem_prefix}-pick")
        with gr.Row():
            written = gr.Textbox(label="Written", placeholder="Hermione", elem_id=f"{elem_prefix}-written")
            spoken = gr.Textbox(label="Spoken", placeholder="her-MY-oh-nee", elem_id=f"{elem_prefix}-spoken")
        with gr.Row():
            case = gr.Dropdown([("case-aware", "auto"), ("exact case", "exact"), ("any case", "ignore")],
                               value="auto", label="Case", elem_id=f"{elem_prefix}-case")
            inside_words = gr.Checkbox(label="Also inside words", elem_id=f"{elem_prefix}-inside")
            regex = gr.Checkbox(label="Regular expression", elem_id=f"{elem_prefix}-regex")
        note = gr.Textbox(label="Note", elem_id=f"{elem_prefix}-note")
        sample = gr.Textbox(label="Sample sentence", elem_id=f"{elem_prefix}-sample",
                            placeholder="Empty: the book's first sentence with the word")
        with gr.Row():
            save = gr.Button("Save entry", variant="primary", size="sm", elem_id=f"{elem_prefix}-save")
            hear = gr.Button("Hear it", size="sm", elem_id=f"{elem_prefix}-hear")
            remove = gr.Button("Remove", variant="stop", size="sm", elem_id=f"{elem_prefix}-remove")
        audio = gr.Audio(label="Sample", interactive=False, autoplay=True, elem_id=f"{elem_prefix}-audio")
        notice = gr.Markdown(elem_id=f"{elem_prefix}-notice")
        with gr.Accordion("Words to check", open=False):
            find = gr.Button("Find words a model may misread", size="sm", elem_id=f"{elem_prefix}-find")
            candidates = gr.HTML(elem_id=f"{elem_prefix}-candidates", padding=False)
            candidate = gr.Dropdown(label="Fix a word from the list", choices=[], interactive=True,
                                    elem_id=f"{elem_prefix}-candidate",
                                    info="Puts it in Written with its first sentence as the sample.")
        with gr.Row():
            import_file = gr.File(label="Import YAML", file_types=[".yaml", ".yml"], height=90,
                                  elem_id=f"{elem_prefix}-import")
            export = gr.DownloadButton("Export YAML", size="sm", elem_id=f"{elem_prefix}-export")
    refs = LexiconRefs(scope, listing, pick, written, spoken, regex, inside_words, case, note, sample, save,
                       remove,
                       hear, audio, notice, find, candidates, candidate, import_file, export)
    _wire(ctx, refs, book=book, model=model, voice_inputs=list(voice_inputs), voice_of=voice_of,
          chunk_words=chunk_words, chapters=chapters, api_prefix=api_prefix)
    return refs


def _wire(
    ctx: UiContext,
    refs: LexiconRefs,
    *,
    book: Any,
    model: Any,
    voice_inputs: list[Any],
    voice_of: VoiceOf,
    chunk_words: Any | None,
    chapters: Any | None,
    api_prefix: str,
) -> None:
    store = LexiconStore(ctx.paths)
    _wire_entries(
        ctx,
        refs,
        store,
        book=book,
        model=model,
        chunk_words=chunk_words,
        chapters=chapters,
        api_prefix=api_prefix,
    )
    _wire_hear(
        ctx, refs, book=book, model=model, voice_inputs=voice_inputs, voice_of=voice_of, api_prefix=api_prefix
    )
    _wire_tools(ctx, refs, store, book=book, api_prefix=api_prefix)


def _wire_entries(ctx: UiContext, refs: LexiconRefs, store: LexiconStore, *, book: Any, model: Any,
                  chunk_words: Any | None, chapters: Any | None, api_prefix: str) -> None:
    """The listing, picking an entry into the fields, Save and Remove (with their impact on the job)."""
    fields = [refs.written, refs.spoken, refs.regex, refs.inside_words, refs.case, refs.note]
    counting = [c for c in (chunk_words, chapters) if c is not None]

    def counts(values: Sequence[Any]) -> tuple[Any, Any]:
        values = list(values)
        size = values.pop(0) if chunk_words is not None else None
        chosen = values.pop(0) if chapters is not None else None
        return size, chosen

    @guarded
    def show(scope: str, book_value: Any) -> tuple[Any, ...]:
        return _listing(ctx, scope, book_value)

    @guarded
    def fill(scope: str, book_value: Any, written: str | None) -> tuple[Any, ...]:
        if not written:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
        entry = store.load(_scope_identity(ctx, scope, book_value)).find(written)
        if entry is None:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
        return entry.written, entry.spoken, entry.regex, not entry.whole_word, entry.case.value, entry.note

    @guarded
    def save(scope: str, book_value: Any, model_key: str | None, *values: Any) -> tuple[Any, ...]:
        size, chosen = counts(values[: len(counting)])
        picked = values[len(counting)]
        entry = _entry(*values[len(counting) + 1:])
        target = _scope_identity(ctx, scope, book_value)
        _path, identity = _identity(ctx, book_value)
        before = store.pronouncer(identity)
        lexicon = store.load(target)
        old = lexicon.find(picked) if picked else None
        if old is not None and old.key != entry.key:  # the written form was edited: replace, not add
            lexicon = lexicon.without(picked)
        store.save(lexicon.with_entry(entry), target)
        impact = _impact(ctx, book_value, model_key, size, chosen, before, store.pronouncer(identity))
        message = f"Saved **{esc(entry.written)} → {esc(entry.spoken)}**. {esc(impact)}".strip()
        return (*_listing(ctx, scope, book_value), message)

    @guarded
    def remove(scope: str, book_value: Any, model_key: str | None, *values: Any) -> tuple[Any, ...]:
        size, chosen = counts(values[: len(counting)])
        written = values[len(counting)] or ""
        target = _scope_identity(ctx, scope, book_value)
        _path, identity = _identity(ctx, book_value)
        before = store.pronouncer(identity)
        store.save(store.load(target).without(written), target)
        impact = _impact(ctx, book_value, model_key, size, chosen, before, store.pronouncer(identity))
        return (*_listing(ctx, scope, book_value), f"Removed **{esc(written)}**. {esc(impact)}".strip())

    listed = [refs.listing, refs.pick]
    refs.scope.change(show, [refs.scope, book], listed, api_name=f"{api_prefix}_list", show_progress="hidden")
    if hasattr(book, "change"):
        book.change(show, [refs.scope, book], listed, api_visibility="private", show_progress="hidden")
    refs.pick.change(fill, [refs.scope, book, refs.pick], fields, api_name=f"{api_prefix}_pick",
                     show_progress="hidden")
    refs.save.click(save, [refs.scope, book, model, *counting, refs.pick, *fields], [*listed, refs.notice],
                    api_name=f"{api_prefix}_save", concurrency_limit=2)
    refs.remove.click(remove, [refs.scope, book, model, *counting, refs.pick], [*listed, refs.notice],
                      api_name=f"{api_prefix}_remove", concurrency_limit=2)


def _wire_hear(
    ctx: UiContext,
    refs: LexiconRefs,
    *,
    book: Any,
    model: Any,
    voice_inputs: list[Any],
    voice_of: VoiceOf,
    api_prefix: str,
) -> None:
    """Hear: the entry's sample sentence spoken with the job's model and voice."""
    fields = [refs.written, refs.spoken, refs.regex, refs.inside_words, refs.case, refs.note]

    @guarded
    def hear(scope: str, book_value: Any, model_key: str | None, *values: Any) -> tuple[Any, ...]:
        if not model_key:
            raise LexiconError("Choose a model first: the sample is spoken with the job's model and voice.")
        voice_values = values[: len(voice_inputs)]
        entry = _entry(*values[len(voice_inputs) : len(voice_inputs) + 5])
        sample_text = values[-1] or ""
        path = _book_path(book_value)
        with tempfile.TemporaryDirectory(prefix="omni-lexicon-") as tmp:
            result = hear_entry(
                entry,
                model_key=model_key,
                voice=voice_of(model_key, *voice_values),
                book_path=path,
                sample=sample_text,
                for_book=scope == SCOPE_BOOK and path is not None,
                paths=ctx.paths,
                settings=ctx.settings,
                server=ctx.services.server,
                out_path=Path(tmp) / "sample.wav",
            )
            audio = result.path.read_bytes()
        out = Path(tempfile.mkdtemp(prefix="omni-lexicon-")) / "sample.wav"
        out.write_bytes(audio)
        return str(out), f"Sent: “{esc(result.text)}”"

    refs.hear.click(
        hear,
        [refs.scope, book, model, *voice_inputs, *fields[:5], refs.sample],
        [refs.audio, refs.notice],
        api_name=f"{api_prefix}_hear",
        concurrency_limit=1,
        concurrency_id="gpu-server",
    )


def _wire_tools(ctx: UiContext, refs: LexiconRefs, store: LexiconStore, *, book: Any,
                api_prefix: str) -> None:
    """The sample sentence, the hard-word finder, import and export."""
    listed = [refs.listing, refs.pick]

    @guarded
    def sample_for(book_value: Any, written: str, regex: bool) -> Any:
        path = _book_path(book_value)
        if not written or path is None:
            return gr.skip()
        try:
            entry = LexiconEntry(written, written, regex=bool(regex)).validated()
        except LexiconError:
            return gr.skip()
        return sample_sentence(ctx.services.library.books.load(path,
                                                               options=ctx.settings.read_options(ctx.paths)),
                                                               entry)

    @guarded
    def find(book_value: Any) -> tuple[str, Any]:
        path, identity = _identity(ctx, book_value)
        if path is None:
            raise LexiconError("Load a book first: the words are looked for in its chapters.")
        found = find_candidates(ctx.services.library.books.load(path,
                                                                options=ctx.settings.read_options(ctx.paths)),
                                                                pronouncer=store.pronouncer(identity),
                                                                limit=_CANDIDATES_SHOWN)
        if not found:
            return '<div class="ow-dim">Nothing looks hard to read.</div>', gr.update(choices=[], value=None)
        rows = [(c.word + (" ✓" if c.in_lexicon else ""), str(c.count), c.kinds_str, str(c.chapter_number),
                 c.sentence) for c in found]
        words = [c.word for c in found if not c.in_lexicon]
        return (table(["Word", "Count", "Why", "Chapter", "First sentence"], rows),
                gr.update(choices=words, value=None))

    @guarded
    def use_candidate(book_value: Any, word: str | None) -> tuple[Any, ...]:
        path = _book_path(book_value)
        if not word or path is None:
            return gr.skip(), gr.skip(), gr.skip()
        book = ctx.services.library.books.load(path, options=ctx.settings.read_options(ctx.paths))
        sentence = sample_sentence(book, LexiconEntry(word, word).validated())
        return word, "", sentence

    @guarded
    def import_file(file: str | None, scope: str, book_value: Any) -> tuple[Any, ...]:
        if not file:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        target = _scope_identity(ctx, scope, book_value)
        added, replaced = store.import_file(Path(file), target)
        return (*_listing(ctx, scope, book_value), f"Imported {added} new and {replaced} replaced entries.",
                None)

    @guarded
    def export(scope: str, book_value: Any) -> str:
        target = _scope_identity(ctx, scope, book_value)
        name = f"lexicon-{safe_filename(target.title, fallback='book', max_bytes=60) if target else 'global'}.yaml"
        out = Path(tempfile.mkdtemp(prefix="omni-lexicon-")) / name
        store.export_file(out, target)
        return str(out)

    refs.written.blur(sample_for, [book, refs.written, refs.regex], refs.sample, api_visibility="private",
                      show_progress="hidden")
    refs.find.click(find, [book], [refs.candidates, refs.candidate], api_name=f"{api_prefix}_candidates",
                    concurrency_limit=2)
    refs.candidate.change(use_candidate, [book, refs.candidate], [refs.written, refs.spoken, refs.sample],
                          api_name=f"{api_prefix}_use_candidate", show_progress="hidden")
    refs.import_file.upload(import_file, [refs.import_file, refs.scope, book], [*listed, refs.notice,
                            refs.import_file], api_name=f"{api_prefix}_import")
    refs.export.click(export, [refs.scope, book], refs.export, api_name=f"{api_prefix}_export")
