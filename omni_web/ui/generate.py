"""Generate tab: upload an EPUB, pick chapters, model, voice and chunk size; Preview or Generate.

Generate only queues a job (the worker renders it); for a model whose per-request window is
smaller than the chunk size (Higgs: 80 words) a dialog asks first: set the chunk size to the cap,
keep it (audio may cut off), or cancel.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.assemble.cover import flattened_cover_image
from omni_web.book import Book, chapter_rows, load_book
from omni_web.book.summary import book_size
from omni_web.bookshelf import EBOOK_SUFFIXES, require_epub_name, store_book
from omni_web.catalog import CATALOG, get_entry
from omni_web.errors import BookError, ChapterSelectionError
from omni_web.jobs import Job
from omni_web.models import installed_keys
from omni_web.pipeline import ConvertRequest, chunk_size_conflict
from omni_web.pipeline.admission import model_switch_note, require_runnable
from omni_web.preview import preview_request
from omni_web.server import ServerStatus
from omni_web.ui.cast import build_cast_panel, request_cast, wire_cast_panel
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.firstrun import (
    FirstRunRefs,
    build_first_run,
    first_run_outputs,
    readiness_for,
    render_first_run,
)
from omni_web.ui.labels import model_picker_choices
from omni_web.ui.lexicon import build_lexicon_panel
from omni_web.ui.player import read_wav as _read_wav
from omni_web.ui.server_voices import render_server_voices
from omni_web.ui.voices import (
    VoiceRefs,
    build_voice_controls,
    render_voice_controls,
    voice_choice,
    wire_voice_controls,
)
from omni_web.ui.widgets import esc

__all__ = ["GenerateRefs", "book_header_html", "build", "chapter_choices"]

_CHUNK_AT = 6  # the chunk size's place in the form's values (the read-along box comes after it)


@dataclass(frozen=True, slots=True)
class GenerateRefs:
    """The Generate tab's components; ``submitted`` holds the id of the job a click queued."""

    epub: gr.File
    book: gr.State  # {"path", "all", "defaults"} of the loaded book (form state only)
    header: gr.HTML
    cover: gr.Image
    chapters: gr.CheckboxGroup
    select_all: gr.Button
    select_none: gr.Button
    select_defaults: gr.Button
    model: gr.Dropdown
    model_info: gr.Markdown
    voice: VoiceRefs
    chunk_words: gr.Slider
    preview: gr.Button
    preview_audio: gr.Audio
    generate: gr.Button
    dialog: gr.Column
    dialog_text: gr.Markdown
    dialog_clamp: gr.Button
    dialog_keep: gr.Button
    dialog_cancel: gr.Button
    notice: gr.Markdown
    submitted: gr.Textbox
    confirm: gr.Column  # a question before queueing: a twin job exists, or the model will be switched
    confirm_text: gr.Markdown
    confirm_go: gr.Button
    confirm_open: gr.Button
    confirm_cancel: gr.Button
    first_run: FirstRunRefs
    submit_events: tuple[Any, ...] = ()
    on_load: OnLoad | None = field(default=None)
    readalong: gr.Checkbox | None = None


def chapter_choices(book: Book) -> tuple[list[tuple[str, int]], list[int]]:
    """Checkbox labels ``  3. Title  ·  2,153 words`` (with why a chapter is not preselected)."""
    choices, selected = [], []
    for row in chapter_rows(book):
        reason = f"  ·  {row.reason}" if row.reason else ""
        choices.append((f"{row.number:>3}. {row.title}  ·  {row.size_str}{reason}", row.number))
        if row.selected:
            selected.append(row.number)
    return choices, selected


def book_header_html(book: Book) -> str:
    """Title, author and size of the loaded book."""
    meta = book.metadata
    return (
        f'<div class="ow-book"><div class="ow-book-title">{esc(meta.title or book.source_path.stem)}</div>'
        f'<div class="ow-book-author">{esc(meta.authors_str or "Unknown author")}</div>'
        f'<div class="ow-dim">{len(book.chapters)} chapters · {book_size(book).size_str}'
        f'{" · " + esc(meta.language) if meta.language else ""}</div></div>'
    )


def _cover(book: Book) -> Any:
    # Transparency laid on white, as in the m4b (an RGBA cover otherwise shows as a black box).
    return flattened_cover_image(book.cover.data) if book.cover is not None else None


def _model_info(ctx: UiContext, key: str, downloaded_keys: set[str] | None = None) -> str:
    entry = get_entry(key)
    if downloaded_keys is None:
        downloaded_keys = installed_keys(cache_dir=ctx.hf_cache_dir)
    downloaded = key in downloaded_keys
    # The same rule as the Server tab's Start and as Generate: only downloaded models run here.
    state = "downloaded" if downloaded else "not downloaded: download it in the **Models** tab before " \
        "generating (the server starts only downloaded models)"
    notes = f" {entry.vram_note}" if entry.vram_note else ""
    cap = f" Requests carry at most {entry.max_words_per_request} words." if entry.max_words_per_request else ""
    return f"**{entry.label}** ({entry.repo_id}): {state}.{notes}{cap}"


def _default_model(status: ServerStatus, downloaded: set[str]) -> str:
    if status.model_key:
        return status.model_key
    return next((entry.key for entry in CATALOG if entry.key in downloaded), CATALOG[0].key)


def _request(ctx: UiContext, book: dict | None, chapters: list[int], model: str, voice: str | None,
             transcript: str, instructions: str, chunk_words: float, readalong: bool = False) -> ConvertRequest:
    if not book:
        raise BookError("Upload an EPUB first.")
    if not chapters:
        raise ChapterSelectionError("No chapter is selected; check at least one.")
    choice = voice_choice(ctx, model, voice, transcript, instructions)
    return ConvertRequest(book_path=Path(book["path"]), model_key=model, voice=choice,
                          chapters=tuple(sorted(int(n) for n in chapters)), chunk_words=int(chunk_words),
                          cast=request_cast(ctx, Path(book["path"]), model), readalong=bool(readalong))


def _queued(ctx: UiContext, job: Job) -> str:
    position = ctx.services.jobs.queue_position(job.id)
    where = "it starts now" if position <= 1 else f"position {position} in the queue"
    return f"Queued **{esc(job.title)}** as job `{job.id}` ({where}). Follow it in the **Jobs** tab."


def build(ctx: UiContext) -> GenerateRefs:
    """Create the Generate tab's components and wire them (inside a ``gr.Tab``)."""
    first_run = build_first_run()
    with gr.Row(equal_height=False):
        with gr.Column(scale=5):
            # Other ebook formats are let through so our message (convert with Calibre) answers them.
            epub = gr.File(label="EPUB", file_types=list(EBOOK_SUFFIXES), elem_id="gen-epub", height=120)
            with gr.Row(equal_height=False):
                cover = gr.Image(label="Cover", type="pil", interactive=False, height=220, show_label=False,
                                 elem_id="gen-cover", scale=1, min_width=140, buttons=[], visible=False)
                header = gr.HTML(elem_id="gen-book", scale=2)
            chapters = gr.CheckboxGroup(label="Chapters", elem_id="gen-chapters", elem_classes=["ow-chapters"],
                                        info="Front and back matter are unchecked; check what should be read.")
            with gr.Row():
                select_all = gr.Button("All", size="sm")
                select_none = gr.Button("None", size="sm")
                select_defaults = gr.Button("Suggested", size="sm")
            # The voice library's tall sections live here, so the right column's actions stay in view.
            with gr.Column(elem_id="gen-library") as library:
                pass
        with gr.Column(scale=4):
            # Filled below: the server-voices section goes under the preview, out of the actions' way.
            server_slot = gr.Column(render=False, elem_id="gen-server-slot")
            model = gr.Dropdown(model_picker_choices(set()), label="Model", elem_id="gen-model",
                                elem_classes=["ow-mono"], interactive=True,
                                info="● = downloaded. tts: narrates with its own voices, clone: clones a "
                                     "reference clip, design: a voice from your description.")
            model_info = gr.Markdown(elem_id="gen-model-info")
            voice = build_voice_controls(library_column=library, server_column=server_slot)
            with library:  # tall when open: on the left, like the clip section
                cast = build_cast_panel()
            chunk_words = gr.Slider(20, 400, step=10, label="Chunk size (words per request)", elem_id="gen-chunk",
                                    info="Longer chunks flow better; some models cap it (Higgs: 80).")
            readalong = gr.Checkbox(label="Read-along: EPUB 3 with the audio in sync, and subtitles",
                                    elem_id="gen-readalong", value=False)
            with gr.Row(elem_id="gen-actions", elem_classes=["ow-sticky-actions"]):
                preview = gr.Button("Preview", elem_id="gen-preview")
                generate = gr.Button("Generate audiobook", variant="primary", elem_id="gen-generate")
            preview_audio = gr.Audio(label="Preview", interactive=False, autoplay=True, elem_id="gen-preview-audio")
            server_slot.render()
            with gr.Column(visible=False, elem_id="gen-dialog", elem_classes=["ow-dialog"]) as dialog:
                dialog_text = gr.Markdown(padding=True)
                with gr.Row():
                    dialog_clamp = gr.Button("Set Chunk to 80", variant="primary", elem_id="gen-dialog-clamp")
                    dialog_keep = gr.Button("Keep", elem_id="gen-dialog-keep")
                    dialog_cancel = gr.Button("Cancel", elem_id="gen-dialog-cancel")
            with gr.Column(visible=False, elem_id="gen-confirm", elem_classes=["ow-dialog"]) as confirm:
                confirm_text = gr.Markdown(padding=True, elem_id="gen-confirm-text")
                with gr.Row():
                    confirm_go = gr.Button("Queue it", variant="primary", elem_id="gen-confirm-go")
                    confirm_open = gr.Button("Open that job", variant="primary", elem_id="gen-confirm-open")
                    confirm_cancel = gr.Button("Cancel", elem_id="gen-confirm-cancel")
            notice = gr.Markdown(elem_id="gen-notice")
            submitted = gr.Textbox(visible=False, elem_id="gen-submitted")
    book = gr.State(None)
    build_lexicon_panel(ctx, book=book, model=model, chunk_words=chunk_words, chapters=chapters,
                        voice_inputs=[voice.voice, voice.transcript, voice.instructions],
                        voice_of=lambda key, *values: voice_choice(ctx, key, *values))
    refs = GenerateRefs(epub, book, header, cover, chapters, select_all, select_none, select_defaults,
                        model, model_info, voice, chunk_words, preview, preview_audio, generate, dialog,
                        dialog_text, dialog_clamp, dialog_keep, dialog_cancel, notice, submitted, confirm,
                        confirm_text, confirm_go, confirm_open, confirm_cancel, first_run, readalong=readalong)
    wire_cast_panel(ctx, cast, book=refs.book, model=refs.model)
    return _wire(ctx, refs)


def _wire(ctx: UiContext, refs: GenerateRefs) -> GenerateRefs:
    wire_voice_controls(ctx, refs.voice, refs.model)
    v = refs.voice
    form = [refs.book, refs.chapters, refs.model, v.voice, v.transcript, v.instructions, refs.chunk_words,
            refs.readalong]
    dialog_out = [refs.dialog, refs.dialog_text, refs.dialog_clamp]
    confirm_out = [refs.confirm, refs.confirm_text, refs.confirm_go, refs.confirm_open]
    submit_out = [refs.notice, refs.submitted, *dialog_out, refs.chunk_words, *confirm_out]
    first_run_out = first_run_outputs(refs.first_run)

    def answer(notice: Any = "", job_id: Any = "", *, dialog: Any = None, confirm: Any = None,
               chunk: Any = None) -> tuple[Any, ...]:
        """The submit outputs: ``dialog`` = (text, clamp label) shows the chunk question, ``confirm`` =
        (text, show "Queue it", show "Open that job") the other one; both hidden otherwise."""
        dialog_part = (gr.update(visible=True), dialog[0], gr.update(value=dialog[1])) if dialog else \
            (gr.update(visible=False), gr.skip(), gr.skip())
        confirm_part = (gr.update(visible=True), confirm[0], gr.update(visible=confirm[1]),
                        gr.update(visible=confirm[2])) if confirm else \
            (gr.update(visible=False), gr.skip(), gr.skip(), gr.skip())
        return (notice, job_id, *dialog_part, gr.skip() if chunk is None else chunk, *confirm_part)

    @guarded
    def load() -> tuple[Any, ...]:
        # One look at the cache and one at the server serve the whole form.
        downloaded = installed_keys(cache_dir=ctx.hf_cache_dir)
        status = ctx.services.server.status()
        key = _default_model(status, downloaded)
        picker = gr.update(choices=model_picker_choices(downloaded), value=key)
        first_run = render_first_run(readiness_for(ctx, status=status, downloaded=downloaded))
        return (picker, _model_info(ctx, key, downloaded), ctx.settings.chunk_size_words,
                *render_voice_controls(ctx, key, status=status), *render_server_voices(ctx, key, status=status),
                *first_run)

    @guarded
    def upload(file: str | None, loaded: dict | None = None) -> tuple[Any, ...]:
        cleared = (None, "", gr.update(value=None, visible=False), gr.update(choices=[], value=[]))
        if not file:
            # The box emptied: forget the loaded book; with none loaded (a refused file, cleared by
            # us) the refusal under the box stays.
            return (*cleared, gr.skip(), gr.skip()) if loaded else gr.skip()
        name = Path(file).name  # Gradio keeps the user's file name on its copy
        try:
            require_epub_name(name)
            book = load_book(Path(file))
            kept = store_book(ctx.paths, Path(file), name=name)
        except BookError as exc:
            # Said once, under the box where the book would show, in the user's file name (no toast
            # repeating it); the box is cleared for another try.
            refused = f'<div class="ow-book-refused" role="alert"><b>Not loaded:</b> {esc(str(exc))}</div>'
            return (None, refused, *cleared[2:], "", None)
        choices, selected = chapter_choices(book)
        state = {"path": str(kept), "all": [n for _, n in choices], "defaults": selected}
        cover = _cover(book)
        return (state, book_header_html(book), gr.update(value=cover, visible=cover is not None),
                gr.update(choices=choices, value=selected), "", gr.skip())

    @guarded
    def preview(*values: Any) -> tuple[Any, str]:
        request = _request(ctx, *values)
        with tempfile.TemporaryDirectory(prefix="omni-preview-") as tmp:
            result = preview_request(request, paths=ctx.paths, settings=ctx.settings, server=ctx.services.server,
                                     out_path=Path(tmp) / "preview.wav")
            return _read_wav(result.path), f"Preview: “{esc(result.text)}”"

    def submit(values: tuple[Any, ...], chunk_words: int, *, keep_over_cap: bool = False) -> tuple[Any, ...]:
        request = replace(_request(ctx, *values), chunk_words=chunk_words, keep_over_cap=keep_over_cap)
        job = ctx.services.submit_conversion(request)
        return answer(_queued(ctx, job), job.id, chunk=chunk_words)

    def twin_question(twin: Job) -> tuple[Any, ...]:
        text = (f"A job for this exact request already exists: **{esc(twin.title)}** (job `{twin.id}`, "
                f"{twin.state.value}). Open it instead of queueing a twin? In the Jobs tab it can be resumed "
                "or run again; to compare, pick another voice, model, chapters or chunk size.")
        return answer(confirm=(text, False, True))

    @guarded
    def generate(*values: Any) -> tuple[Any, ...]:
        request = _request(ctx, *values)
        twin = ctx.services.find_twin(request)
        if twin is not None:
            return twin_question(twin)
        entry = get_entry(request.model_key)
        status = ctx.services.server.status()
        remote_url = ctx.settings.remote_url
        require_runnable(entry, downloaded=installed_keys(cache_dir=ctx.hf_cache_dir), status=status,
                         remote_url=remote_url)
        switch = model_switch_note(entry, status=status, remote_url=remote_url)
        cap = chunk_size_conflict(entry, int(values[_CHUNK_AT]))
        if cap is not None:
            text = (f"**{entry.label}** voices at most **{cap} words** per request; longer chunks get cut off "
                    f"mid-sentence. Your chunk size is **{int(values[_CHUNK_AT])}**.\n\nSet it to {cap} for this run, "
                    f"keep {int(values[_CHUNK_AT])} (audio may cut off), or cancel?")
            return answer(dialog=(text + (f"\n\n{switch}" if switch else ""), f"Set Chunk to {cap}"))
        if switch is not None:
            return answer(confirm=(switch + "\n\nQueue the job?", True, False))
        return submit(values, int(values[_CHUNK_AT]))

    @guarded
    def confirmed(*values: Any) -> tuple[Any, ...]:
        return submit(values, int(values[_CHUNK_AT]))

    @guarded
    def open_twin(*values: Any) -> tuple[Any, ...]:
        twin = ctx.services.find_twin(_request(ctx, *values))
        if twin is None:
            return answer("That job is gone; press Generate again to queue a new one.")
        return answer(f"Opened job `{twin.id}` ({esc(twin.title)}) in the **Jobs** tab.", twin.id)

    @guarded
    def clamp(*values: Any) -> tuple[Any, ...]:
        cap = chunk_size_conflict(get_entry(values[2]), int(values[_CHUNK_AT])) or int(values[_CHUNK_AT])
        return submit(values, cap)

    @guarded
    def keep(*values: Any) -> tuple[Any, ...]:
        # The user accepted that audio may cut off: the chunker must not clamp to the model's cap.
        return submit(values, int(values[_CHUNK_AT]), keep_over_cap=True)

    def pick(kind: str):
        def select(book: dict | None) -> list[int]:
            return (book or {}).get(kind, [])
        return select

    refs.epub.change(upload, [refs.epub, refs.book], [refs.book, refs.header, refs.cover, refs.chapters, refs.notice,
                                           refs.epub], api_name="book_upload", concurrency_limit=4)
    refs.select_all.click(pick("all"), [refs.book], refs.chapters, api_visibility="private")
    refs.select_defaults.click(pick("defaults"), [refs.book], refs.chapters, api_visibility="private")
    refs.select_none.click(lambda: [], None, refs.chapters, api_visibility="private")
    refs.model.change(guarded(lambda key: _model_info(ctx, key)), [refs.model], refs.model_info,
                      api_visibility="private")
    refs.preview.click(preview, form, [refs.preview_audio, refs.notice], api_name="preview", concurrency_limit=1,
                       concurrency_id="gpu-server")
    events = (
        refs.generate.click(generate, form, submit_out, api_name="generate", concurrency_limit=4),
        refs.dialog_clamp.click(clamp, form, submit_out, api_name="generate_clamped", concurrency_limit=4),
        refs.dialog_keep.click(keep, form, submit_out, api_name="generate_keep", concurrency_limit=4),
        refs.confirm_go.click(confirmed, form, submit_out, api_name="generate_confirmed", concurrency_limit=4),
        refs.confirm_open.click(open_twin, form, submit_out, api_name="generate_open_twin"),
    )
    refs.dialog_cancel.click(lambda: gr.update(visible=False), None, refs.dialog, api_visibility="private")
    refs.confirm_cancel.click(lambda: gr.update(visible=False), None, refs.confirm, api_visibility="private")
    refs.first_run.timer.tick(guarded(lambda: render_first_run(readiness_for(ctx))), None, first_run_out,
                              show_progress="hidden", api_name="first_run_check")
    on_load = OnLoad(load, [], [refs.model, refs.model_info, refs.chunk_words, v.voice, v.help, v.transcript,
                                v.save_transcript, v.transcribe, v.instructions,
                                v.server.info, v.server.listing, v.server.pick, *first_run_out])
    return replace(refs, submit_events=events, on_load=on_load)
