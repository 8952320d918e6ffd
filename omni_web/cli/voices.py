"""``python -m omni_web voices ...``: the reference-clip library, transcripts and server voices.

Subcommands: ``list [--server]``, ``add FILE [--name N] [--transcript TEXT | --transcribe]``,
``transcript NAME [TEXT | --transcribe | --clear]``, ``rename OLD NEW``, ``remove NAME [--server]``,
``upload NAME --consent TEXT``, ``preview VOICE``, ``transcriber install|status``.
Commands that talk to a server use the one ``server status`` shows (the managed server, the
configured port, or the Settings remote URL), or ``--api-url``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from omni_web.catalog import CatalogEntry, VoiceMode, get_entry
from omni_web.client import SpeechClient, VoiceKind
from omni_web.errors import OmniWebError, ServerNotRunning, SettingsError, VoiceError
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.settings import Settings, load_settings
from omni_web.voices import transcribe
from omni_web.voices.clip import CLIP_ADVICE, SUPPORTED_EXTENSIONS
from omni_web.voices.library import Voice, VoiceLibrary
from omni_web.voices.preview import SAMPLE_SENTENCE, preview_voice
from omni_web.voices.server_voices import (
    VoiceOption,
    delete_server_voice,
    list_server_voices,
    transcript_warning,
    upload_library_voice,
    voice_menu,
)

__all__ = ["register"]

_KINDS = ", ".join(ext.lstrip(".") for ext in SUPPORTED_EXTENSIONS)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``voices`` and its subcommands."""
    parser = subparsers.add_parser(
        "voices",
        help="manage reference clips (voices/), transcripts and voices uploaded to the server",
        description=f"Reference clips for voice cloning. {CLIP_ADVICE}",
    )
    commands = parser.add_subparsers(dest="voices_command", metavar="SUBCOMMAND", required=True)

    listing = commands.add_parser(
        "list", help="list the library (or, with --server, the server's uploaded voices)"
    )
    listing.add_argument(
        "--server", action="store_true", help="list the voices uploaded to the server instead"
    )
    _add_endpoint(listing)
    listing.set_defaults(handler=_list)

    add = commands.add_parser(
        "add",
        help=f"add a clip ({_KINDS}); {CLIP_ADVICE}",
        description=(
            f"Add a reference clip: it is checked, made mono 16-bit WAV, trimmed of leading and trailing "
            f"silence and stored as voices/<name>.wav. {CLIP_ADVICE} Clips under 3 s of speech are refused; "
            "longer than 30 s they are cut at a pause."
        ),
    )
    add.add_argument("file", type=Path, metavar="FILE", help=f"the recording ({_KINDS})")
    add.add_argument(
        "--name", metavar="N", help="voice name (default: the file name); letters, digits, . _ -"
    )
    said = add.add_mutually_exclusive_group()
    said.add_argument("--transcript", metavar="TEXT", help="what the clip says")
    said.add_argument("--transcribe", action="store_true", help="transcribe it locally with faster-whisper")
    add.add_argument("--overwrite", action="store_true", help="replace a voice of the same name")
    _add_model_size(add)
    add.set_defaults(handler=_add)

    text = commands.add_parser("transcript", help="show, set, transcribe or clear a voice's transcript")
    text.add_argument("name", metavar="NAME")
    how = text.add_mutually_exclusive_group()
    how.add_argument("text", nargs="?", metavar="TEXT", help="the new transcript")
    how.add_argument(
        "--transcribe", action="store_true", help="transcribe the clip locally with faster-whisper"
    )
    how.add_argument("--clear", action="store_true", help="remove the transcript")
    _add_model_size(text)
    text.set_defaults(handler=_transcript)

    rename = commands.add_parser("rename", help="rename a library voice")
    rename.add_argument("old", metavar="OLD")
    rename.add_argument("new", metavar="NEW")
    rename.add_argument("--overwrite", action="store_true", help="replace a voice already called NEW")
    rename.set_defaults(handler=_rename)

    remove = commands.add_parser(
        "remove", help="delete a library voice (or, with --server, an uploaded voice)"
    )
    remove.add_argument("name", metavar="NAME")
    remove.add_argument(
        "--server", action="store_true", help="delete the voice uploaded to the server instead"
    )
    _add_endpoint(remove)
    remove.set_defaults(handler=_remove)

    upload = commands.add_parser(
        "upload",
        help="store a library voice (clip + transcript) on the server",
        description=(
            "Upload a library voice to the server (POST /v1/audio/voices) with its transcript as ref_text. "
            "Higgs, MOSS-TTS, MOSS-TTS Local, dots.tts, Fish S2-Pro and Qwen3-TTS Base then use it by name."
        ),
    )
    upload.add_argument("name", metavar="NAME")
    upload.add_argument("--as", dest="server_name", metavar="N", help="name on the server (default: NAME)")
    upload.add_argument(
        "--consent",
        required=True,
        metavar="TEXT",
        help="the speaker's consent statement (the server requires one)",
    )
    _add_endpoint(upload)
    upload.set_defaults(handler=_upload)

    preview = commands.add_parser(
        "preview",
        help="speak a sample sentence with a voice on the running server",
        description=(
            "Speak a sample sentence with a voice of the hosted model. VOICE is a library voice, a built-in "
            "speaker or preset, an uploaded voice, or a menu key (clone:NAME, uploaded:NAME, speaker:NAME, "
            "preset:NAME, default, design)."
        ),
    )
    preview.add_argument("voice", metavar="VOICE")
    preview.add_argument(
        "--out", type=Path, metavar="FILE", help="where to write the WAV (default: preview.wav)"
    )
    preview.add_argument("--text", default=SAMPLE_SENTENCE, help="the sentence to speak")
    preview.add_argument("--instructions", metavar="TEXT", help="the voice description (voice design models)")
    preview.add_argument("--model", metavar="KEY", help="catalog key of the hosted model (default: detected)")
    _add_endpoint(preview)
    preview.set_defaults(handler=_preview)

    whisper = commands.add_parser(
        "transcriber", help="install or inspect the faster-whisper model for transcripts"
    )
    whisper_commands = whisper.add_subparsers(dest="transcriber_command", metavar="ACTION", required=True)
    install = whisper_commands.add_parser("install", help="download the model into the Hugging Face cache")
    _add_model_size(install)
    install.set_defaults(handler=_transcriber_install)
    status = whisper_commands.add_parser("status", help="say whether the model is downloaded")
    _add_model_size(status)
    status.set_defaults(handler=_transcriber_status)


def _add_model_size(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--size",
        "--model-size",
        dest="model_size",
        metavar="SIZE",
        help="faster-whisper size (default: the transcription_model setting); one of "
             f"{', '.join(transcribe.WHISPER_MODELS)}",
    )


def _add_endpoint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-url", metavar="URL", help="the sgl-omni server to use (default: the one `server status` shows)"
    )
    parser.add_argument(
        "--inline-reference",
        action="store_true",
        help="send clips as base64 data URLs even to a loopback URL (e.g. an SSH tunnel to a remote server)",
    )


# --- context --------------------------------------------------------------------------------------


def _context() -> tuple[DataPaths, Settings, VoiceLibrary]:
    paths = data_root_from_env().ensure()
    settings = load_settings(paths)
    return paths, settings, VoiceLibrary(paths)


def _model_size(args: argparse.Namespace, settings: Settings) -> str:
    return (getattr(args, "model_size", None) or settings.transcription_model).strip()


def _connect(
    args: argparse.Namespace, paths: DataPaths, settings: Settings
) -> tuple[SpeechClient, str | None]:
    """A client for the server to use, and the catalog key of the model it hosts (if known)."""
    from omni_web.server.discovery import catalog_key_for, probe_endpoint
    from omni_web.server.manager import ServerManager

    inline = getattr(args, "inline_reference", False)
    if args.api_url:
        try:
            dataclasses.replace(settings, remote_url=args.api_url.strip()).validate()
        except SettingsError as exc:
            raise SettingsError(f"{exc} (check --api-url)") from None
        probe = probe_endpoint(args.api_url)
        if not probe.reachable:
            raise ServerNotRunning(f"Nothing answers at {args.api_url}. Check the URL, or start the server.")
        client = SpeechClient(probe.base_url, local_server=False if inline else None)
        return client, catalog_key_for(probe.model_ids)
    status = ServerManager(paths, settings).status()
    if not status.healthy:
        raise ServerNotRunning(
            f"No healthy sgl-omni server at {status.endpoint or 'the configured port'} "
            f"({status.state.value}). "
            "Start one (python -m omni_web server start --model KEY) or pass --api-url URL."
        )
    local = False if inline else (True if status.owned else None)
    return SpeechClient(status.endpoint, local_server=local), status.model_key


# --- library --------------------------------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    if args.server:
        client, key = _connect(args, paths, settings)
        with client:
            catalog = list_server_voices(client)
        print(f"Server {client.base_url} ({key or 'unknown model'}):")
        if not catalog.uploaded:
            print("  no uploaded voices")
        for voice in catalog.uploaded:
            text = "transcript" if voice.ref_text else "no transcript"
            print(f"  {voice.name:<24} {voice.created_str:<16}  {voice.size_str:>9}  {text}")
        return 0
    voices = library.list()
    if not voices:
        print(
            f"No voices in {library.directory}. Add one: python -m omni_web voices add FILE ({CLIP_ADVICE})"
        )
        return 0
    for voice in voices:
        said = _short(voice.transcript) if voice.transcript else "(no transcript)"
        print(
            f"{voice.name:<24} {voice.duration_str:>7} {voice.sample_rate:>6} Hz {voice.size_str:>8}  {said}"
        )
    return 0


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _add(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    print(f"Tip: {CLIP_ADVICE}")
    voice = library.add(args.file, name=args.name, transcript=args.transcript, overwrite=args.overwrite)
    for note in voice.notes:
        print(note)
    print(f"Added '{voice.name}': {voice.duration_str} at {voice.sample_rate} Hz -> {voice.wav_path}")
    if args.transcribe:
        try:
            voice = _transcribe_voice(library, voice, paths=paths, size=_model_size(args, settings))
        except OmniWebError as exc:
            print(f"error: the clip was added, but not transcribed: {exc}", file=sys.stderr)
            _say_transcript(voice)
            return 1
    _say_transcript(voice)
    return 0


def _say_transcript(voice: Voice) -> None:
    if voice.transcript:
        print(f"Transcript: {voice.transcript}")
    else:
        print(
            "No transcript: clone requests go without ref_text, and quality may drop. Add one with "
            f'python -m omni_web voices transcript {voice.name} "TEXT" (or --transcribe).'
        )


def _transcribe_voice(library: VoiceLibrary, voice: Voice, *, paths: DataPaths, size: str) -> Voice:
    cache = transcribe.transcript_cache_dir(paths)
    text = transcribe.cached_transcript(voice.wav_path, model_size=size, cache_dir=cache)
    if text is None:
        if transcribe.whisper_local_dir(size) is None:
            print(
                f"Downloading faster-whisper '{size}' ({transcribe.whisper_repo_id(size)}) into the Hugging "
                "Face cache..."
            )
            transcribe.install_whisper_model(size, progress=_print_progress)
            print()
        device, compute_type = transcribe.choose_device()
        print(f"Transcribing with faster-whisper '{size}' on {device} ({compute_type})...")
        model = transcribe.load_whisper_model(size, device=device)
        text = transcribe.transcribe_clip(voice.wav_path, model_size=size, model=model, cache_dir=cache)
    return library.set_transcript(voice.name, text)


def _print_progress(event: Any) -> None:
    print(f"\r{getattr(event, 'summary', event)}", end="", flush=True)


def _transcript(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    voice = library.get(args.name)
    if args.clear:
        voice = library.set_transcript(voice.name, None)
    elif args.transcribe:
        voice = _transcribe_voice(library, voice, paths=paths, size=_model_size(args, settings))
    elif args.text is not None:
        voice = library.set_transcript(voice.name, args.text)
    _say_transcript(voice)
    return 0


def _rename(args: argparse.Namespace) -> int:
    _, _, library = _context()
    voice = library.rename(args.old, args.new, overwrite=args.overwrite)
    print(f"Renamed '{args.old}' to '{voice.name}'.")
    return 0


def _remove(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    if args.server:
        client, _ = _connect(args, paths, settings)
        with client:
            delete_server_voice(client, args.name)
        print(f"Deleted the voice '{args.name}' from the server at {client.base_url}.")
        return 0
    voice = library.get(args.name)
    library.delete(voice.name)
    print(f"Deleted '{voice.name}' (clip and transcript).")
    return 0


# --- server ---------------------------------------------------------------------------------------


def _upload(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    voice = library.get(args.name)
    client, key = _connect(args, paths, settings)
    with client:
        uploaded = upload_library_voice(
            client, voice, consent=args.consent, paths=paths, name=args.server_name
        )
    print(f"Uploaded '{voice.name}' to {client.base_url} as '{uploaded.name}'.")
    if uploaded.warning:
        print(uploaded.warning)
    if not voice.has_transcript:
        print("It has no transcript, so the server stores it without ref_text; quality may drop.")
    if key is not None and not get_entry(key).supports_uploaded_voices:
        print(f"Note: {get_entry(key).label}, which this server hosts, does not use uploaded voices.")
    return 0


def _preview(args: argparse.Namespace) -> int:
    paths, settings, library = _context()
    client, key = _connect(args, paths, settings)
    with client:
        model_key = args.model or key
        if model_key is None:
            raise VoiceError(
                f"The server at {client.base_url} hosts a model that is not in the catalog; pass --model KEY."
            )
        entry = get_entry(model_key)
        wants_server_list = entry.supports_uploaded_voices or entry.voice_mode is VoiceMode.BUILTIN_SPEAKERS
        server_voices = list_server_voices(client) if wants_server_list else None
        menu = voice_menu(entry, server_voices, library.list())
        option = _pick(menu, args.voice, entry)
        warning = transcript_warning(entry, option.voice)
        if warning:
            print(warning)
        choice = option.to_choice(paths=paths, instructions=args.instructions)
        out = args.out or Path("preview.wav")
        result = preview_voice(client, entry, choice, text=args.text, out_path=out)
    seconds = f"{result.duration_s:.1f} s" if result.duration_s is not None else f"{result.size_bytes} bytes"
    print(f"Spoke {seconds} with {option.label} on {entry.label} -> {out}")
    return 0


def _pick(menu: list[VoiceOption], wanted: str, entry: CatalogEntry) -> VoiceOption:
    """The menu option for ``wanted``: an exact key, else a name (clip, upload, speaker, preset)."""
    text = wanted.strip()
    for option in menu:
        if option.key == text:
            return option
    order = (VoiceKind.CLONE, VoiceKind.UPLOADED, VoiceKind.SPEAKER, VoiceKind.PRESET)
    for kind in order:
        for option in menu:
            if option.kind is kind and option.name.casefold() == text.casefold():
                return option
    choices = ", ".join(option.key for option in menu) or "none"
    raise VoiceError(f"'{wanted}' is not a voice {entry.label} can use here. Choices: {choices}.")


# --- transcriber ----------------------------------------------------------------------------------


def _transcriber_install(args: argparse.Namespace) -> int:
    _, settings, _ = _context()
    size = _model_size(args, settings)
    print(
        f"Downloading faster-whisper '{size}' ({transcribe.whisper_repo_id(size)}) into the Hugging Face "
        "cache..."
    )
    folder = transcribe.install_whisper_model(size, progress=_print_progress)
    print(f"\nInstalled: {folder}")
    return 0


def _transcriber_status(args: argparse.Namespace) -> int:
    _, settings, _ = _context()
    size = _model_size(args, settings)
    folder = transcribe.whisper_local_dir(size)
    device, compute_type = transcribe.choose_device()
    if folder is None:
        print(f"faster-whisper '{size}' ({transcribe.whisper_repo_id(size)}) is not downloaded.")
        print(f"Install it: python -m omni_web voices transcriber install --size {size}")
        return 3
    print(f"faster-whisper '{size}' is installed at {folder}; it runs on {device} ({compute_type}).")
    return 0
