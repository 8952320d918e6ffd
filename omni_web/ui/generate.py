"""Generate tab: upload an EPUB, pick chapters, model, voice and chunk size; Preview or Generate.

This module lays the tab out and wires its parts: the book (:mod:`omni_web.ui.book_panel`), the
voice controls, and Generate with its questions (:mod:`omni_web.ui.submit_flow`), which only queues
a job (the worker renders it).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.bookshelf import EBOOK_SUFFIXES
from omni_web.catalog import CATALOG, get_entry
from omni_web.models import installed_keys
from omni_web.preview import preview_request
from omni_web.server import ServerStatus
from omni_web.ui import book_metadata, preset_save
from omni_web.ui.book_panel import estimate_html, load_upload, pick_chapters
from omni_web.ui.cast import build_cast_panel, wire_cast_panel
from omni_web.ui.cast_review import build_cast_sheet, wire_cast_sheet
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
from omni_web.ui.menu_watch import serving_identity, wire_menu_watch
from omni_web.ui.player import read_wav as _read_wav
from omni_web.ui.server_voices import render_server_voices
from omni_web.ui.submit_flow import SubmitRefs, build_request, wire_submit
from omni_web.ui.voices import (
    VoiceRefs,
    build_voice_controls,
    render_voice_controls,
    voice_choice,
    wire_voice_controls,
)
from omni_web.ui.widgets import esc

__all__ = ["GenerateRefs", "build"]


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
    estimate: gr.HTML | None = None  # the time the checked chapters should take (pipeline/estimate.py)
    server_seen: gr.State | None = None  # the server the menus were last rendered for (ui/menu_watch.py)


def _model_info(ctx: UiContext, key: str, downloaded_keys: set[str] | None = None, *,
                status: ServerStatus | None = None) -> str:
    entry = get_entry(key)
    if downloaded_keys is None:
        downloaded_keys = installed_keys(cache_dir=ctx.hf_cache_dir)
    status = status or ctx.services.server.status(max_age_s=2.0)
    if status.remote and status.hosts(key):
        # A remote server's model lives on its machine: nothing needs downloading here.
        state = f"served by the remote server at `{status.endpoint}`"
    elif key in downloaded_keys:
        state = "downloaded"
    else:
        # The same rule as the Server tab's Start and as Generate: only downloaded models run here.
        state = "not downloaded: download it in the **Models** tab before generating (the server starts " \
            "only downloaded models)"
    notes = f" {entry.vram_note}" if entry.vram_note else ""
    cap = (
        f" Requests carry at most {entry.max_words_per_request} words." if entry.max_words_per_request else ""
    )
    return f"**{entry.label}** ({entry.repo_id}): {state}.{notes}{cap}"


def _default_model(status: ServerStatus, downloaded: set[str]) -> str:
    if status.model_key:
        return status.model_key
    return next((entry.key for entry in CATALOG if entry.key in downloaded), CATALOG[0].key)


def build(ctx: UiContext) -> GenerateRefs:
    """Create the Generate tab's components and wire them (inside a ``gr.Tab``)."""
    first_run = build_first_run()
    with gr.Row(equal_height=False):
        with gr.Column(scale=5):
            # Other ebook formats are let through so our message (convert with Calibre) answers them.
            epub = gr.File(label="Book (EPUB, PDF, DOCX, ODT, FB2, MOBI/AZW3, HTML, Markdown, TXT)",
                           file_types=list(EBOOK_SUFFIXES), elem_id="gen-epub", height=120)
            with gr.Row(equal_height=False):
                cover = gr.Image(label="Cover", type="pil", interactive=False, height=220, show_label=False,
                                 elem_id="gen-cover", scale=1, min_width=140, buttons=[], visible=False)
                header = gr.HTML(elem_id="gen-book", scale=2)
            book_details = book_metadata.build()  # omni_web/ui/book_metadata.py: title, authors, series
            chapters = gr.CheckboxGroup(label="Chapters", elem_id="gen-chapters",
                                        elem_classes=["ow-chapters"],
                                        info="Front and back matter are unchecked; check what should "
                                             "be read.")
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
                cast_sheet = build_cast_sheet()
            chunk_words = gr.Slider(20, 400, step=10, label="Chunk size (words per request)",
                                    elem_id="gen-chunk",
                                    info="Longer chunks flow better; some models cap it (Higgs: 80).")
            readalong = gr.Checkbox(label="Read-along: EPUB 3 with the audio in sync, and subtitles",
                                    elem_id="gen-readalong", value=False)
            estimate = gr.HTML(elem_id="gen-estimate", padding=False)
            with gr.Row(elem_id="gen-actions", elem_classes=["ow-sticky-actions"]):
                preview = gr.Button("Preview", elem_id="gen-preview")
                generate = gr.Button("Generate audiobook", variant="primary", elem_id="gen-generate")
            preview_audio = gr.Audio(label="Preview", interactive=False, autoplay=True,
                                     elem_id="gen-preview-audio")
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
    book_metadata.wire(book, book_details)
    build_lexicon_panel(ctx, book=book, model=model, chunk_words=chunk_words, chapters=chapters,
                        voice_inputs=[voice.voice, voice.transcript, voice.instructions],
                        voice_of=lambda key, *values: voice_choice(ctx, key, *values))
    refs = GenerateRefs(epub, book, header, cover, chapters, select_all, select_none, select_defaults,
                        model, model_info, voice, chunk_words, preview, preview_audio, generate, dialog,
                        dialog_text, dialog_clamp, dialog_keep, dialog_cancel, notice, submitted, confirm,
                        confirm_text, confirm_go, confirm_open, confirm_cancel, first_run,
                        readalong=readalong,
                        estimate=estimate)
    wire_cast_panel(ctx, cast, book=refs.book, model=refs.model)
    wire_cast_sheet(ctx, cast_sheet, book=refs.book, model=refs.model)
    # Another book: the previous book's previews are not this one's.
    refs.book.change(lambda: (None, None), None, [refs.preview_audio, cast.audio], api_visibility="private",
                     show_progress="hidden")
    return _wire(ctx, refs)


def _wire(ctx: UiContext, refs: GenerateRefs) -> GenerateRefs:
    wire_voice_controls(ctx, refs.voice, refs.model)
    v = refs.voice
    form = [refs.book, refs.chapters, refs.model, v.voice, v.transcript, v.instructions, refs.chunk_words,
            refs.readalong]
    first_run_out = first_run_outputs(refs.first_run)

    @guarded
    def load() -> tuple[Any, ...]:
        # One look at the cache and one at the server serve the whole form.
        downloaded = installed_keys(cache_dir=ctx.hf_cache_dir)
        status = ctx.services.server.status()
        key = _default_model(status, downloaded)
        picker = gr.update(choices=model_picker_choices(downloaded), value=key)
        first_run = render_first_run(readiness_for(ctx, status=status, downloaded=downloaded))
        return (picker, _model_info(ctx, key, downloaded, status=status), ctx.settings.chunk_size_words,
                *render_voice_controls(ctx, key, status=status), *render_server_voices(ctx, key,
                                                                                       status=status),
                *first_run, serving_identity(status))

    def follow_server(key: str, keep: str | None, status: ServerStatus) -> tuple[Any, ...]:
        return (_model_info(ctx, key, status=status), *render_voice_controls(ctx, key, keep, status=status),
                *render_server_voices(ctx, key, status=status))

    @guarded
    def upload(file: str | None, loaded: dict | None = None) -> tuple[Any, ...]:
        return load_upload(ctx, file, loaded)

    @guarded
    def preview(*values: Any) -> tuple[Any, str]:
        request = build_request(ctx, *values)
        with tempfile.TemporaryDirectory(prefix="omni-preview-") as tmp:
            result = preview_request(request, paths=ctx.paths, settings=ctx.settings,
                                     server=ctx.services.server,
                                     out_path=Path(tmp) / "preview.wav")
            return _read_wav(result.path), f"Preview: “{esc(result.text)}”"

    refs.epub.change(upload, [refs.epub, refs.book], [refs.book, refs.header, refs.cover, refs.chapters,
                                                      refs.notice, refs.epub],
                     api_name="book_upload", concurrency_limit=4)
    # One queue, in order, for the three buttons: "None" then "All" must end with all checked.
    picks = {"api_visibility": "private", "concurrency_limit": 1, "concurrency_id": "chapter-pick"}
    refs.select_all.click(pick_chapters("all"), [refs.book], refs.chapters, **picks)
    refs.select_defaults.click(pick_chapters("defaults"), [refs.book], refs.chapters, **picks)
    refs.select_none.click(lambda: [], None, refs.chapters, **picks)
    for trigger in (refs.chapters.change, refs.model.change):
        trigger(guarded(lambda book, chapters, key: estimate_html(ctx, book, chapters, key)),
                [refs.book, refs.chapters, refs.model], refs.estimate, api_visibility="private",
                show_progress="hidden")
    refs.model.change(guarded(lambda key: _model_info(ctx, key)), [refs.model], refs.model_info,
                      api_visibility="private")
    refs.preview.click(preview, form, [refs.preview_audio, refs.notice], api_name="preview",
                       concurrency_limit=1,
                       concurrency_id="gpu-server")
    preset_save.build(ctx, form)  # "Save these settings as a preset" (omni_web/ui/preset_save.py)
    events = wire_submit(ctx, SubmitRefs.of(refs), form)
    refs.first_run.timer.tick(guarded(lambda: render_first_run(readiness_for(ctx))), None, first_run_out,
                              show_progress="hidden", api_name="first_run_check")
    menus = [refs.model_info, v.voice, v.help, v.transcript, v.save_transcript, v.transcribe, v.instructions,
             v.server.info, v.server.listing, v.server.pick]
    seen = wire_menu_watch(ctx, model=refs.model, voice=v.voice, outputs=menus, render=follow_server)
    on_load = OnLoad(load, [], [refs.model, refs.model_info, refs.chunk_words, *menus[1:], *first_run_out,
                                seen])
    return replace(refs, submit_events=events, on_load=on_load, server_seen=seen)
