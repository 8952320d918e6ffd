"""Voices stored on the server, and the voice menu each model shows.

Uploading (``POST /v1/audio/voices``) keeps a library clip and its transcript on the server so
requests name it (``voice: <name>``) instead of sending the clip each time. Only some models use
uploaded voices (``supports_uploaded_voice_references()``, sglang_omni/config/schema.py and each
sglang_omni/models/<model>/config.py: Higgs, MOSS-TTS, MOSS-TTS-Local, dots.tts, S2-Pro,
Qwen3-TTS Base); the catalog's
``supports_uploaded_voices`` carries that fact, and :func:`voice_menu` reads only catalog data to
decide what each model's menu offers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from omni_web.catalog import CATALOG, CatalogEntry, VoiceMode
from omni_web.client import SpeechClient, UploadedVoice, VoiceCatalog, VoiceChoice, VoiceKind
from omni_web.errors import ServerNotRunning, VoiceError
from omni_web.paths import DataPaths
from omni_web.voices.library import Voice
from omni_web.voices.names import canonical_spelling, display_name
from omni_web.voices.reference import clone_choice, fit_reference, reference_cache_dir

if TYPE_CHECKING:
    from omni_web.server.status import ServerStatus

__all__ = [
    "VoiceOption",
    "delete_server_voice",
    "list_server_voices",
    "option_for_key",
    "server_voice_endpoint",
    "transcript_warning",
    "upload_library_voice",
    "uploaded_voices_unsupported",
    "voice_menu",
]

# Kinds whose names the server compares ignoring case (speakers, presets, uploaded voices).
_CASELESS_KINDS = frozenset({VoiceKind.SPEAKER, VoiceKind.PRESET, VoiceKind.UPLOADED})


@dataclass(frozen=True, slots=True)
class VoiceOption:
    """One entry of a model's voice menu.

    ``key`` is unique within a menu (``"clone:narrator"``, ``"uploaded:narrator"``,
    ``"speaker:Vivian"``, ``"default"``, ``"design"``) and is what a dropdown stores; ``label`` is
    what it shows. ``voice`` is the library voice behind a CLONE option. ``spelling`` is the
    catalog's spelling of a speaker or preset the server lists in another case (``Vivian`` for the
    server's ``vivian``): the key uses it, so the menu keeps one key per voice whichever list filled
    it, while requests send ``name`` as the server lists it.
    """

    kind: VoiceKind
    name: str
    label: str
    voice: Voice | None = None
    spelling: str = ""

    @property
    def key(self) -> str:
        """The menu value: kind, plus the name where there is one."""
        name = self.spelling or self.name
        return self.kind.value if not name else f"{self.kind.value}:{name}"

    def to_choice(self, *, paths: DataPaths, instructions: str | None = None) -> VoiceChoice:
        """The client's :class:`VoiceChoice` for this option.

        A CLONE option fits its clip to the server's limit (:func:`fit_reference`) and carries its
        transcript; DESIGN needs ``instructions`` (the description the user typed).
        """
        if self.kind is VoiceKind.CLONE:
            if self.voice is None:
                raise VoiceError(
                    f"The clone option '{self.name}' has no library clip; refresh the voice list."
                )
            return clone_choice(self.voice, paths=paths)
        if self.kind is VoiceKind.DESIGN:
            return VoiceChoice.design(instructions or "")
        if self.kind is VoiceKind.DEFAULT:
            return VoiceChoice.default()
        return VoiceChoice(self.kind, name=self.name)


def voice_menu(
    entry: CatalogEntry,
    server_voices: VoiceCatalog | None,
    library_voices: Sequence[Voice] = (),
) -> list[VoiceOption]:
    """What the voice menu offers for ``entry``'s model, in display order.

    Args:
        entry: the model (only its catalog data is read).
        server_voices: ``GET /v1/audio/voices`` of the server hosting this model, or None when
            no such server answers. It supplies the uploaded voices and, for built-in-speaker
            models, the checkpoint's authoritative speaker list.
        library_voices: the clip library (:meth:`VoiceLibrary.list`).

    Returns:
        Built-in speakers (BUILTIN_SPEAKERS), presets (PRESET_VOICES), one design entry
        (INSTRUCTIONS); for clone models the default voice when the model has one
        (DEFAULT_OR_CLONE), every library clip, and the uploaded voices only where
        ``entry.supports_uploaded_voices``.
    """
    mode = entry.voice_mode
    if mode is VoiceMode.BUILTIN_SPEAKERS:
        listed = [
            name for name in (server_voices.voices if server_voices else ()) if name.casefold() != "default"
        ]
        speakers = _default_first(listed or list(entry.preset_voices), entry.default_voice)
        return [_named(VoiceKind.SPEAKER, name, entry) for name in speakers]
    if mode is VoiceMode.PRESET_VOICES:
        presets = _default_first(list(entry.preset_voices), entry.default_voice)
        return [_named(VoiceKind.PRESET, name, entry) for name in presets]
    if mode is VoiceMode.INSTRUCTIONS:
        return [VoiceOption(VoiceKind.DESIGN, "", "Voice design (describe the voice)")]
    options: list[VoiceOption] = []
    if mode is VoiceMode.DEFAULT_OR_CLONE:
        options.append(VoiceOption(VoiceKind.DEFAULT, "", "Default voice"))
    options += [VoiceOption(VoiceKind.CLONE, v.name, f"Clip: {v.label}", voice=v) for v in library_voices]
    if entry.supports_uploaded_voices and server_voices is not None:
        options += [
            VoiceOption(VoiceKind.UPLOADED, name, f"On server: {name}")
            for name in sorted(server_voices.uploaded_names, key=str.casefold)
        ]
    return options


def _named(kind: VoiceKind, name: str, entry: CatalogEntry) -> VoiceOption:
    spelled = canonical_spelling(name, entry.preset_voices)
    return VoiceOption(kind, name, display_name(spelled), spelling=spelled if spelled != name else "")


def _default_first(names: list[str], default: str) -> list[str]:
    wanted = default.casefold()
    return sorted(names, key=lambda name: name.casefold() != wanted)


def option_for_key(options: Sequence[VoiceOption], key: str) -> VoiceOption:
    """The option whose :attr:`VoiceOption.key` is ``key``; VoiceError listing the menu if none.

    A server voice's name is matched ignoring case, as the server matches it, so a key from a menu
    filled before the server answered (``speaker:Vivian``) still finds ``speaker:vivian``.
    """
    for option in options:
        if option.key == key:
            return option
    folded = key.casefold()
    for option in options:
        if option.kind in _CASELESS_KINDS and option.key.casefold() == folded:
            return option
    shown = ", ".join(option.label for option in options) or "none"
    raise VoiceError(f"That voice is not in this model's voice menu any more; pick one of: {shown}.")


def transcript_warning(entry: CatalogEntry, voice: Voice | None) -> str | None:
    """The note the UI shows when a clone request would go without ``ref_text``, else None."""
    if voice is None or voice.has_transcript or not entry.can_clone:
        return None
    if entry.requires_ref_text:
        return (
            f"{entry.label} needs a transcript of '{voice.name}'. Type what the clip says, or "
            "transcribe it, before generating."
        )
    return (
        f"'{voice.name}' has no transcript, so requests go without ref_text and cloning quality "
        "may drop. Type what the clip says, or transcribe it."
    )


def upload_library_voice(
    client: SpeechClient,
    voice: Voice,
    *,
    consent: str,
    paths: DataPaths,
    name: str | None = None,
) -> UploadedVoice:
    """Upload library ``voice`` (clip + transcript as ``ref_text``) under ``name`` or its own name.

    ``consent`` is the speaker's consent statement, which the server requires.

    Raises:
        VoiceError: empty consent or an invalid name (checked before sending).
        SpeechError: the server refused the upload (its reason is the message).
    """
    clip = fit_reference(voice.wav_path, cache_dir=reference_cache_dir(paths))
    return client.upload_voice(name or voice.name, clip, consent=consent, ref_text=voice.transcript)


def list_server_voices(client: SpeechClient) -> VoiceCatalog:
    """The server's voices (``GET /v1/audio/voices``): usable names and the uploaded voices."""
    return client.voices()


def delete_server_voice(client: SpeechClient, name: str) -> None:
    """Remove the uploaded voice ``name``; VoiceError when the server has no such voice."""
    client.delete_voice(name)


def uploaded_voices_unsupported(entry: CatalogEntry) -> str | None:
    """Why ``entry``'s model cannot use voices uploaded to the server, or None when it can."""
    if entry.supports_uploaded_voices:
        return None
    able = ", ".join(other.label for other in CATALOG if other.supports_uploaded_voices)
    if not entry.can_clone:
        how = {
            VoiceMode.BUILTIN_SPEAKERS: "speaks only with its built-in speakers",
            VoiceMode.PRESET_VOICES: "speaks only with its preset voices",
            VoiceMode.INSTRUCTIONS: "designs its voice from a description",
        }.get(entry.voice_mode, "does not clone voices")
        return f"{entry.label} {how}, so it has no use for uploaded voices. Models that use them: {able}."
    return (
        f"{entry.label} clones from the clip sent with each request; sglang-omni does not let it use "
        "voices uploaded to the server. Pick a library clip instead. Models that use uploaded voices: "
        f"{able}."
    )


def server_voice_endpoint(status: ServerStatus, entry: CatalogEntry) -> str:
    """The endpoint whose uploaded voices ``entry``'s model uses: a healthy server hosting it.

    Nothing is started: a server boot takes minutes, so the caller asks the user to start one.

    Raises:
        VoiceError: the model does not use uploaded voices (the message says why).
        ServerNotRunning: no healthy server hosts the model (the message says where to start it).
    """
    reason = uploaded_voices_unsupported(entry)
    if reason is not None:
        raise VoiceError(reason)
    if status.hosts(entry.key):
        return status.endpoint
    if status.healthy and status.model_label:
        raise ServerNotRunning(
            f"The server hosts {status.model_label}, not {entry.label}; uploaded voices belong to the server "
            f"of the model that uses them. Start {entry.label} in the Server tab, then try again."
        )
    raise ServerNotRunning(
        f"No server hosting {entry.label} is running, and voices are uploaded to a running server. "
        f"Start {entry.label} in the Server tab, then try again."
    )
