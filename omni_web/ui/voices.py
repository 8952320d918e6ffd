"""The Generate tab's voice controls: a menu that fits the model, a clip's transcript, voice-design
instructions, and adding clips to the voice library.

The menu comes from :func:`omni_web.voices.voice_menu`: built-in speakers (from the server's
``GET /v1/audio/voices`` when a server hosting the model answers), Voxtral presets, library clips,
voices uploaded to the server, or one "describe the voice" entry.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.catalog import VoiceMode, get_entry
from omni_web.client import VoiceCatalog, VoiceChoice, VoiceKind
from omni_web.errors import OmniWebError, TranscriberNotInstalled, VoiceError
from omni_web.server import ServerStatus
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.server_voices import ServerVoiceRefs, build_server_voices, wire_server_voices
from omni_web.voices import (
    CLIP_ADVICE,
    VoiceOption,
    option_for_key,
    transcribe_clip,
    transcript_cache_dir,
    transcript_warning,
    voice_menu,
)

__all__ = [
    "VoiceRefs",
    "build_voice_controls",
    "render_voice_controls",
    "voice_choice",
    "voice_details",
    "wire_voice_controls",
]

_log = logging.getLogger(__name__)

_MODE_HELP = {
    VoiceMode.BUILTIN_SPEAKERS: "This model speaks with its built-in speakers.",
    VoiceMode.PRESET_VOICES: "This model speaks with its preset voices.",
    VoiceMode.CLONE_REQUIRED: "This model clones a reference clip: pick one from the voice library (or add "
                              "one "
    "below), or a voice uploaded to the server.",
    VoiceMode.DEFAULT_OR_CLONE: "This model narrates with its default voice, or clones a reference clip.",
    VoiceMode.INSTRUCTIONS: "This model designs a voice from your description.",
}


@dataclass(frozen=True, slots=True)
class VoiceRefs:
    """The voice components (created inside the Generate tab)."""

    voice: gr.Dropdown
    help: gr.Markdown
    transcript: gr.Textbox
    save_transcript: gr.Button
    transcribe: gr.Button
    instructions: gr.Textbox
    clip: gr.Audio
    clip_name: gr.Textbox
    clip_transcript: gr.Textbox
    add_clip: gr.Button
    server: ServerVoiceRefs


def _server_voices(ctx: UiContext, model_key: str, status: ServerStatus | None = None) -> VoiceCatalog | None:
    """The voices of a healthy server hosting ``model_key``, or None (no such server).

    ``status`` is a server status the caller already has (None: ask the server now).
    """
    status = status or ctx.services.server.status()
    if not status.hosts(model_key):
        return None
    try:
        return ctx.services.server_voices.catalog(status.endpoint)
    except OmniWebError as exc:
        # The menu falls back to the catalog's voices; say why in the log rather than nowhere.
        _log.warning("Could not list the voices of the server at %s: %s", status.endpoint, exc)
        return None


def _options(ctx: UiContext, model_key: str, status: ServerStatus | None = None) -> list[VoiceOption]:
    entry = get_entry(model_key)
    return voice_menu(entry, _server_voices(ctx, model_key, status), ctx.library.list())


def voice_details(
    ctx: UiContext, model_key: str, voice_key: str | None, *, options: list[VoiceOption] | None = None
) -> tuple[Any, ...]:
    """Help text and the transcript / instructions fields for the chosen voice.

    ``options`` is the menu the caller already built (None: build it, asking the server).
    """
    entry = get_entry(model_key)
    option = None
    if voice_key:
        try:
            option = option_for_key(options if options is not None else _options(ctx, model_key), voice_key)
        except VoiceError:
            option = None
    clone = option is not None and option.kind is VoiceKind.CLONE and option.voice is not None
    help_lines = [_MODE_HELP[entry.voice_mode]]
    if clone:
        warning = transcript_warning(entry, option.voice)
        help_lines.append(f"Clip **{option.voice.name}**: {option.voice.duration_str}. {CLIP_ADVICE}")
        if warning:
            help_lines.append(f"⚠ {warning}")
    design = entry.voice_mode is VoiceMode.INSTRUCTIONS
    return (
        "\n\n".join(help_lines),
        gr.update(visible=clone, value=(option.voice.transcript or "") if clone else ""),
        gr.update(visible=clone),
        gr.update(visible=clone),
        gr.update(visible=design),
    )


def render_voice_controls(
    ctx: UiContext, model_key: str, keep: str | None = None, *, status: ServerStatus | None = None
) -> tuple[Any, ...]:
    """Updates for the voice menu (keeping ``keep`` when it is still offered) and its details.

    ``status`` is a server status the caller already has (None: ask the server now).
    """
    options = _options(ctx, model_key, status)
    keys = [option.key for option in options]
    try:  # the same voice under the key this menu spells it (a server lists "vivian" for "Vivian")
        value = option_for_key(options, keep).key if keep else None
    except VoiceError:
        value = None
    value = value or (keys[0] if keys else None)
    menu = gr.update(choices=[(option.label, option.key) for option in options], value=value)
    if not options:
        menu = gr.update(choices=[], value=None)
    return (menu, *voice_details(ctx, model_key, value, options=options))


def voice_choice(
    ctx: UiContext, model_key: str, voice_key: str | None, transcript: str, instructions: str
) -> VoiceChoice:
    """The request's voice; a clone's edited transcript is saved to the library first.

    Raises:
        VoiceError: nothing chosen, or the choice does not fit the model.
    """
    entry = get_entry(model_key)
    if entry.voice_mode is VoiceMode.INSTRUCTIONS:
        return VoiceChoice.design(instructions or "")
    if not voice_key:
        hint = " Add a reference clip below." if entry.needs_reference else ""
        raise VoiceError(f"Pick a voice for {entry.label}.{hint}")
    option = option_for_key(_options(ctx, model_key), voice_key)
    if option.kind is VoiceKind.CLONE and option.voice is not None:
        if (transcript or "").strip() != (option.voice.transcript or ""):
            option = VoiceOption(
                option.kind,
                option.name,
                option.label,
                ctx.library.set_transcript(option.voice.name, transcript),
            )
    return option.to_choice(paths=ctx.paths, instructions=instructions)


def build_voice_controls(
    *, library_column: gr.Column | None = None, server_column: gr.Column | None = None
) -> VoiceRefs:
    """Create the voice components (call inside the Generate tab's layout).

    ``library_column`` and ``server_column``: where the two tall sections (add a clip, voices on
    the server) go, so the columns stay balanced and the main actions in view; default: here.
    """
    # Menus rebuilt by events (a model switch, the server watch) take their value as typed: an event
    # that reads the menu between its new choices and its new value would otherwise fail on Gradio's
    # own check ("Value: default is not in the list of choices: [...]", in keys no user knows), and
    # the handlers already tell a stale choice in words (omni_web/voices/server_voices.py option_for_key).
    voice = gr.Dropdown(label="Voice", elem_id="gen-voice", interactive=True, allow_custom_value=True)
    help_md = gr.Markdown(elem_id="gen-voice-help")
    transcript = gr.Textbox(
        label="Transcript of the clip",
        lines=2,
        visible=False,
        elem_id="gen-transcript",
        info="What the clip says, word for word. Cloning is better with it.",
    )
    with gr.Row():
        save_transcript = gr.Button(
            "Save transcript", size="sm", visible=False, elem_id="gen-save-transcript"
        )
        transcribe = gr.Button("Transcribe with Whisper", size="sm", visible=False, elem_id="gen-transcribe")
    instructions = gr.Textbox(
        label="Describe the voice",
        lines=2,
        visible=False,
        elem_id="gen-instructions",
        placeholder="A warm adult female narrator with a British accent, speaking calmly.",
    )
    with (
        library_column or contextlib.nullcontext(),
        gr.Accordion("Add a reference clip to the voice library", open=False, elem_id="gen-add-clip"),
    ):
        gr.Markdown(
            f"Upload or record the voice to clone. {CLIP_ADVICE} Silence is trimmed, long clips are cut "
            "at a pause near 30 s."
        )
        clip = gr.Audio(label="Clip", sources=["upload", "microphone"], type="filepath", elem_id="gen-clip")
        clip_name = gr.Textbox(
            label="Name",
            placeholder="narrator",
            elem_id="gen-clip-name",
            info="Letters, digits, - and _ (the file name is used when empty).",
        )
        clip_transcript = gr.Textbox(label="Transcript (optional)", lines=2, elem_id="gen-clip-transcript")
        add_clip = gr.Button("Add to the voice library", elem_id="gen-clip-add")
    with server_column or contextlib.nullcontext():
        server = build_server_voices()
    return VoiceRefs(
        voice,
        help_md,
        transcript,
        save_transcript,
        transcribe,
        instructions,
        clip,
        clip_name,
        clip_transcript,
        add_clip,
        server,
    )


def wire_voice_controls(ctx: UiContext, refs: VoiceRefs, model: gr.Dropdown) -> None:
    """Connect the voice controls to the model picker and the library."""
    details_out = [refs.help, refs.transcript, refs.save_transcript, refs.transcribe, refs.instructions]
    menu_out = [refs.voice, *details_out]

    def clone_name(model_key: str, voice_key: str | None) -> str:
        option = option_for_key(_options(ctx, model_key), voice_key or "")
        if option.voice is None:
            raise VoiceError("Pick a clip from the voice library first.")
        return option.voice.name

    def save(model_key: str, voice_key: str | None, text: str) -> str:
        ctx.library.set_transcript(clone_name(model_key, voice_key), text)
        gr.Info("Transcript saved.")
        return text

    def transcribe(model_key: str, voice_key: str | None) -> str:
        voice = ctx.library.get(clone_name(model_key, voice_key))
        try:
            text = transcribe_clip(
                voice.wav_path,
                model_size=ctx.settings.transcription_model,
                cache_dir=transcript_cache_dir(ctx.paths),
                hf_cache_dir=ctx.hf_cache_dir,
                loader=ctx.whisper_loader,
            )
        except TranscriberNotInstalled as exc:
            raise VoiceError(
                f"The transcription model faster-whisper '{exc.size}' ({exc.repo_id}) is not downloaded. "
                "Install it in the Settings tab (Transcription model: Install), or type the transcript "
                "yourself."
            ) from exc
        ctx.library.set_transcript(voice.name, text)
        return text

    def add(model_key: str, clip: str | None, name: str, text: str) -> tuple[Any, ...]:
        if not clip:
            raise VoiceError("Choose or record a clip first.")
        voice = ctx.library.add(Path(clip), name=(name or "").strip() or None, transcript=text)
        notes = " ".join(voice.notes)
        gr.Info(f"Added '{voice.name}' ({voice.duration_str}). {notes}".strip())
        return (
            *render_voice_controls(ctx, model_key, keep=f"{VoiceKind.CLONE.value}:{voice.name}"),
            None,
            "",
            "",
        )

    model.change(
        guarded(lambda key, keep: render_voice_controls(ctx, key, keep)),
        [model, refs.voice],
        menu_out,
        api_name="voice_menu",
    )
    refs.voice.change(
        guarded(lambda key, voice: voice_details(ctx, key, voice)),
        [model, refs.voice],
        details_out,
        api_visibility="private",
    )
    refs.save_transcript.click(
        guarded(save), [model, refs.voice, refs.transcript], refs.transcript, api_name="voice_save_transcript"
    )
    refs.transcribe.click(
        guarded(transcribe),
        [model, refs.voice],
        refs.transcript,
        api_name="voice_transcribe",
        concurrency_limit=1,
    )
    refs.add_clip.click(
        guarded(add),
        [model, refs.clip, refs.clip_name, refs.clip_transcript],
        [*menu_out, refs.clip, refs.clip_name, refs.clip_transcript],
        api_name="voice_add_clip",
        concurrency_limit=2,
    )
    wire_server_voices(
        ctx, refs.server, model, refs.voice, menu_out, lambda key, keep: render_voice_controls(ctx, key, keep)
    )
