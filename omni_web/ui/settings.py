"""Settings tab: the values that persist in ``settings.yaml`` in the data root."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr

from omni_web.errors import SettingsError
from omni_web.master import PRESETS
from omni_web.qa.asr_models import QA_ASR_MODELS
from omni_web.settings import Settings
from omni_web.ui import audiobookshelf, automation, llm_settings, storage
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.transcriber import (
    TranscriberRefs,
    build_transcriber_box,
    transcriber_status_html,
    wire_transcriber_box,
)

__all__ = ["SettingsRefs", "build", "settings_values"]

WHISPER_SIZES = ("tiny", "base", "small", "medium", "large-v3")
# The form's fields, in the order of SettingsRefs.fields and of the save handler's arguments.
FIELDS = (
    "web_port", "server_port", "remote_url", "chunk_size_words", "concurrency", "pause_between_chunks_ms",
    "pause_after_heading_ms", "pause_between_chapters_ms", "output_dir", "output_format", "also_mp3_chapters",
    "transcription_model", "text_normalization", "qa_level", "qa_model", "qa_takes", "loudness",
    "footnotes", "remote_patience_s", "qa_voice", "tables",
)


def setting_error_in_words(message: str, labels: Mapping[str, str]) -> str:
    """A settings rule as the form names the field: ``Invalid setting: “SGLang-Omni port” must be
    between 1 and 65535.``, not ``server_port must ...`` (the settings file's key)."""
    for name, label in labels.items():
        if message.startswith(f"Invalid setting: {name} "):
            return message.replace(f"Invalid setting: {name} ", f"Invalid setting: “{label}” ", 1)
    return message


@dataclass(frozen=True, slots=True)
class SettingsRefs:
    """The Settings tab's components (``fields`` follow FIELDS)."""

    fields: tuple[Any, ...]
    save: gr.Button
    status: gr.Markdown
    transcriber: TranscriberRefs
    on_load: OnLoad | None = field(default=None)


def settings_values(settings: Settings) -> list[Any]:
    """The form values for ``settings`` (concurrency None shows as 0, output folder "" as empty)."""
    values = [getattr(settings, name) for name in FIELDS]
    values[FIELDS.index("concurrency")] = settings.concurrency or 0
    return values


def _port_now(ctx: UiContext) -> str:
    """Which port this app listens on now, and why it may differ from the saved value."""
    saved = ctx.settings.web_port
    now = ctx.web_port or saved
    if now == saved:
        return f"This app is running on port **{now}**."
    return (f"This app is running on port **{now}** (given with `--port`); the saved port {saved} is used "
            "when webapp.py starts without `--port`.")


def _servers_and_rendering() -> tuple[Any, ...]:
    """The left column: servers and rendering."""
    with gr.Column():
        gr.Markdown("#### Servers")
        web_port = gr.Number(label="Web UI port", precision=0, info="Used at the next start of webapp.py.")
        port_now = gr.Markdown(elem_id="settings-web-port-now")
        server_port = gr.Number(label="SGLang-Omni port", precision=0,
                                info="Where the managed sgl-omni server listens.")
        remote_url = gr.Textbox(label="SGLang-Omni remote URL", placeholder="empty: use a local server",
                                info="An sgl-omni server elsewhere (http://host:port).")
        patience = gr.Number(
            label="Wait for a remote server that went away (seconds)",
            precision=0,
            elem_id="settings-remote-patience",
            info="A job whose server we did not start (the remote URL, --api-url) waits this "
            "long for it to come back, then stops with its finished chunks kept "
            "(Resume goes on). 0: stop at once.",
        )
        gr.Markdown("#### Rendering")
        chunk = gr.Slider(20, 400, step=10, label="Chunk size (words per request)")
        concurrency = gr.Number(
            label="Requests in flight",
            precision=0,
            minimum=0,
            maximum=256,
            info="0 = the model's default (Qwen3-TTS: 16, others: 8).",
        )
        normalization = gr.Dropdown(
            [("per model (catalog)", "auto"), ("always", "on"), ("never", "off")],
            label="Spell out numbers, abbreviations, roman numerals",
            info="Per model: off for models that normalise by themselves (ZONOS2).",
        )
        footnotes = gr.Radio(
            [("skip", "skip"), ("read after their paragraph", "end-of-paragraph")],
            label="Footnotes",
            elem_id="settings-footnotes",
            info='Never read mid-sentence; read after the paragraph as "Note: ..." (every book format).',
        )
        tables = gr.Radio(
            [("read each row as a sentence", "rows"), ('a short "Table: ..." note', "note")],
            label="Tables",
            elem_id="settings-tables",
            info="DOCX, ODT, HTML and EPUB books; a table's cells are never run together.",
        )
    servers = (web_port, port_now, server_port, remote_url, patience)
    return (*servers, chunk, concurrency, normalization, footnotes, tables)


def _pauses_output_and_qa(ctx: UiContext) -> tuple[tuple[Any, ...], TranscriberRefs]:
    """The right column: pauses, output, mastering, transcription and audio QA."""
    with gr.Column():
        gr.Markdown("#### Pauses (milliseconds)")
        pause_chunk = gr.Number(label="Between chunks", precision=0, minimum=0)
        pause_heading = gr.Number(label="After a heading", precision=0, minimum=0)
        pause_chapter = gr.Number(label="Between chapters", precision=0, minimum=0)
        gr.Markdown("#### Output")
        output_dir = gr.Textbox(
            label="Output folder",
            placeholder=str(ctx.paths.outputs_dir),
            info="Empty = outputs/ in the data root. The page serves files from a new "
            "folder after the app restarts.",
        )
        output_format = gr.Radio(["m4b", "mp3"], label="Book format")
        also_mp3 = gr.Checkbox(label="Also export MP3 chapters (Audiobookshelf layout)")
        loudness = gr.Dropdown(
            [(p.label, p.name) for p in PRESETS.values()],
            label="Loudness (mastering)",
            elem_id="settings-loudness",
            info="Every chapter is leveled and normalised to this target; the Jobs tab "
            "shows each chapter's measured levels.",
        )
        whisper = gr.Dropdown(
            list(WHISPER_SIZES),
            label="Transcription model (faster-whisper)",
            info="Used for reference-clip transcripts.",
        )
        transcriber = build_transcriber_box()
        gr.Markdown("#### Audio QA")
        qa_level = gr.Radio(
            ["off", "basic", "asr"],
            label="Check every chunk",
            elem_id="settings-qa-level",
            info="basic: cut-offs, loops, silence, clipping (free). asr: also transcribe each "
            "chunk and compare it with the text (CPU, beside the render).",
        )
        qa_model = gr.Dropdown(
            [m.size for m in QA_ASR_MODELS],
            label="QA speech-recognition model",
            allow_custom_value=True,
            elem_id="settings-qa-model",
            info="A faster-whisper size (.en = English only) or a model folder; "
            "download it in the Models tab. Runs on the GPU when it fits beside "
            "the TTS server, else on the CPU.",
        )
        qa_takes = gr.Number(
            label="Takes per chunk before it is flagged",
            precision=0,
            minimum=1,
            maximum=10,
            elem_id="settings-qa-takes",
        )
        qa_voice = gr.Checkbox(
            label="Hear who reads each take (asr level)",
            elem_id="settings-qa-voice",
            info="A speaker embedding tells a take read in another voice (on the CPU, beside the "
            "render). Pace, pitch and loudness are compared at every checked level.",
        )
    fields = (
        pause_chunk,
        pause_heading,
        pause_chapter,
        output_dir,
        output_format,
        also_mp3,
        loudness,
        whisper,
        qa_level,
        qa_model,
        qa_takes,
        qa_voice,
    )
    return fields, transcriber


def build(ctx: UiContext) -> SettingsRefs:
    """Create the Settings tab's components and wire them (inside a ``gr.Tab``)."""
    gr.Markdown(f"Saved in `{ctx.paths.settings_file}`; every browser and the CLI read the same file.")
    with gr.Row(equal_height=False):
        left = _servers_and_rendering()
        right, transcriber = _pauses_output_and_qa(ctx)
    (web_port, port_now, server_port, remote_url, patience, chunk, concurrency, normalization, footnotes,
     tables) = left
    (pause_chunk, pause_heading, pause_chapter, output_dir, output_format, also_mp3, loudness, whisper,
     qa_level, qa_model, qa_takes, qa_voice) = right
    save = gr.Button("Save settings", variant="primary", elem_id="settings-save")
    status = gr.Markdown(elem_id="settings-status")
    abs_fields, abs_saved = audiobookshelf.build(ctx)  # delivery, layout, migrate
    llm_fields, llm_saved = llm_settings.build(ctx)  # the cast's optional LLM labeller
    fields = (web_port, server_port, remote_url, chunk, concurrency, pause_chunk, pause_heading,
              pause_chapter,
              output_dir, output_format, also_mp3, whisper, normalization, qa_level, qa_model, qa_takes,
              loudness,
              footnotes, patience, qa_voice, tables)
    refs = SettingsRefs(fields, save, status, transcriber)
    labels = {name: str(box.label) for name, box in zip(FIELDS, fields, strict=True) if box.label}

    @guarded
    def save_all(*values: Any) -> str:
        changes = dict(zip(FIELDS, values, strict=True))
        for name in ("web_port", "server_port", "chunk_size_words", "pause_between_chunks_ms",
                     "pause_after_heading_ms", "pause_between_chapters_ms"):
            changes[name] = int(changes[name] or 0)
        changes["concurrency"] = int(changes["concurrency"] or 0) or None
        patience = changes["remote_patience_s"]  # an emptied box keeps the saved value
        changes["remote_patience_s"] = ctx.settings.remote_patience_s if patience is None else float(patience)
        changes["qa_takes"] = int(changes["qa_takes"] or 3)
        changes["qa_model"] = (changes["qa_model"] or "").strip()
        changes["qa_voice"] = bool(changes["qa_voice"])
        changes["tables"] = changes["tables"] or ctx.settings.tables
        changes["remote_url"] = (changes["remote_url"] or "").strip()
        changes["output_dir"] = (changes["output_dir"] or "").strip()
        try:
            settings = dataclasses.replace(ctx.settings, **changes).validate()
        except SettingsError as exc:
            raise SettingsError(setting_error_in_words(str(exc), labels)) from exc
        ctx.save_settings(settings)
        return f"Saved. Output folder: `{settings.output_path(ctx.paths)}`."

    box_load = wire_transcriber_box(ctx, transcriber, whisper)

    @guarded
    def load() -> list[Any]:
        values = settings_values(ctx.settings)
        return [*values, *box_load.fn(values[FIELDS.index("transcription_model")]), _port_now(ctx),
                *abs_saved(),
                *llm_saved()]

    save.click(save_all, list(fields), status, api_name="settings_save").success(
        guarded(lambda size: transcriber_status_html(ctx, size)), [whisper], transcriber.status,
        api_visibility="private")
    auto_outputs, auto_load = automation.build(ctx)  # presets, rules, inbox, notifications, API tokens
    storage.build(ctx)  # omni_web/ui/storage.py: sizes by kind, pruning

    def load_all() -> list[Any]:
        return [*load(), *auto_load()]

    return replace(refs, on_load=OnLoad(load_all, [], [*fields, *box_load.outputs, port_now, *abs_fields,
                                                       *llm_fields, *auto_outputs]))
