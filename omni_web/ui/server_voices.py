"""The Generate tab's "Voices on the server" box: upload the library clip chosen in the Voice menu
(with its transcript and the speaker's consent) to the running server, list its uploaded voices,
delete one.

Only models that use uploaded voices offer it (the catalog's ``supports_uploaded_voices``); for
the others the box says why. Nothing here starts a server: a boot takes minutes, so without a
healthy server hosting the model the box points at the Server tab. After an upload or a delete
the voice menu is rendered again, so it shows (or drops) the ``On server:`` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.catalog import get_entry
from omni_web.client import UploadedVoice, VoiceKind
from omni_web.errors import OmniWebError, VoiceError
from omni_web.server import ServerStatus
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import table
from omni_web.voices import (
    Voice,
    server_voice_endpoint,
    uploaded_voices_unsupported,
    voice_menu,
)

__all__ = ["ServerVoiceRefs", "build_server_voices", "render_server_voices", "wire_server_voices"]

# (model key, voice to keep selected) -> updates for the voice menu and its details.
RenderMenu = Callable[[str, str | None], tuple[Any, ...]]
_TRANSCRIPT_SHOWN = 70  # characters of a voice's transcript in the list


@dataclass(frozen=True, slots=True)
class ServerVoiceRefs:
    """The components of the "Voices on the server" box."""

    info: gr.Markdown
    consent: gr.Textbox
    name: gr.Textbox
    upload: gr.Button
    listing: gr.HTML
    pick: gr.Dropdown
    delete: gr.Button
    refresh: gr.Button


def build_server_voices() -> ServerVoiceRefs:
    """Create the box (call inside the Generate tab's voice area)."""
    with gr.Accordion("Voices on the server", open=False, elem_id="gen-server-voices"):
        info = gr.Markdown(elem_id="gen-sv-info")
        consent = gr.Textbox(
            label="Speaker's consent", lines=2, elem_id="gen-sv-consent",
            placeholder="I, Jane Doe, agree that my recorded voice may be used to narrate audiobooks.",
            info="Required: the server stores a voice only with the speaker's consent statement.",
        )
        name = gr.Textbox(label="Name on the server (optional)", placeholder="the clip's name",
                          elem_id="gen-sv-name")
        with gr.Row():
            upload = gr.Button(
                "Upload the selected clip", variant="primary", size="sm", elem_id="gen-sv-upload"
            )
            refresh = gr.Button("Refresh", size="sm", elem_id="gen-sv-refresh")
        listing = gr.HTML(elem_id="gen-sv-list", padding=False)
        pick = gr.Dropdown(label="Uploaded voice", elem_id="gen-sv-pick", interactive=True)
        delete = gr.Button("Delete from the server", variant="stop", size="sm", elem_id="gen-sv-delete")
    return ServerVoiceRefs(info, consent, name, upload, listing, pick, delete, refresh)


def _short(text: str | None) -> str:
    text = (text or "").strip()
    return text if len(text) <= _TRANSCRIPT_SHOWN else text[: _TRANSCRIPT_SHOWN - 1].rstrip() + "…"


def _listing_html(uploaded: tuple[UploadedVoice, ...]) -> str:
    if not uploaded:
        return '<div class="ow-dim">No voices uploaded to this server yet.</div>'
    rows = [
        (v.name, _short(v.ref_text) or "(no transcript)", v.size_str, v.created_str)
        for v in sorted(uploaded, key=lambda v: v.name.casefold())
    ]
    return table(["Name", "Transcript", "Clip", "Uploaded"], rows)


def render_server_voices(
    ctx: UiContext, model_key: str | None, *, status: ServerStatus | None = None
) -> tuple[Any, Any, Any]:
    """(info, list, delete picker) for ``model_key``'s model and the server that hosts it now.

    ``status`` is a server status the caller already has (None: ask the server now).
    """
    if not model_key:
        return "", "", gr.update(choices=[], value=None)
    entry = get_entry(model_key)
    reason = uploaded_voices_unsupported(entry)
    if reason is not None:
        return reason, "", gr.update(choices=[], value=None)
    try:
        endpoint = server_voice_endpoint(status or ctx.services.server.status(), entry)
        uploaded = ctx.services.server_voices.catalog(endpoint).uploaded
    except OmniWebError as exc:
        return f"⚠ {exc}", "", gr.update(choices=[], value=None)
    names = sorted((voice.name for voice in uploaded), key=str.casefold)
    info = (
        f"The server at `{endpoint}` hosts {entry.label}. Uploading stores the clip chosen in "
        "the Voice menu, with its transcript, on this server; requests then name it instead of sending "
        "the clip each time."
    )
    return info, _listing_html(uploaded), gr.update(choices=names, value=names[0] if names else None)


def _library_clip(ctx: UiContext, model_key: str, voice_key: str | None) -> Voice:
    """The library clip chosen in the Voice menu (what an upload sends)."""
    options = voice_menu(get_entry(model_key), None, ctx.library.list())
    clips = {option.key: option.voice for option in options if option.kind is VoiceKind.CLONE}
    clip = clips.get(voice_key or "")
    if clip is None:
        raise VoiceError(
            "Choose a clip from the voice library in the Voice menu first (Clip: …); that clip "
            "and its transcript are what gets uploaded."
        )
    return clip


def _endpoint(ctx: UiContext, model_key: str) -> str:
    return server_voice_endpoint(ctx.services.server.status(), get_entry(model_key))


def wire_server_voices(
    ctx: UiContext,
    refs: ServerVoiceRefs,
    model: gr.Dropdown,
    voice: gr.Dropdown,
    menu_out: list[Any],
    render_menu: RenderMenu,
) -> None:
    """Connect the box: model changes re-render it; upload and delete also re-render the voice menu."""
    box_out = [refs.info, refs.listing, refs.pick]

    @guarded
    def upload(model_key: str, voice_key: str | None, consent: str, name: str) -> tuple[Any, ...]:
        endpoint = _endpoint(ctx, model_key)
        clip = _library_clip(ctx, model_key, voice_key)
        uploaded = ctx.services.server_voices.upload(
            endpoint, clip, consent=consent or "", name=(name or "").strip() or None
        )
        note = f" ({uploaded.warning})" if uploaded.warning else ""
        gr.Info(f"Uploaded '{uploaded.name}' to the server{note}. It is now in the Voice menu.")
        keep = f"{VoiceKind.UPLOADED.value}:{uploaded.name}"
        return (*render_menu(model_key, keep), *render_server_voices(ctx, model_key), "")

    @guarded
    def delete(model_key: str, voice_key: str | None, name: str | None) -> tuple[Any, ...]:
        endpoint = _endpoint(ctx, model_key)
        if not name:
            raise VoiceError("Choose the uploaded voice to delete.")
        ctx.services.server_voices.delete(endpoint, name)
        gr.Info(f"Deleted '{name}' from the server.")
        return (*render_menu(model_key, voice_key), *render_server_voices(ctx, model_key))

    @guarded
    def refresh(model_key: str, voice_key: str | None) -> tuple[Any, ...]:
        return (*render_menu(model_key, voice_key), *render_server_voices(ctx, model_key))

    model.change(
        guarded(lambda key: render_server_voices(ctx, key)),
        [model],
        box_out,
        api_name="server_voices",
        show_progress="hidden",
    )
    # A refusal is a toast; "hidden" keeps Gradio from stamping "Error" on every output it would update.
    refs.upload.click(
        upload,
        [model, voice, refs.consent, refs.name],
        [*menu_out, *box_out, refs.name],
        api_name="server_voice_upload",
        concurrency_limit=2,
        show_progress="hidden",
    )
    refs.delete.click(
        delete,
        [model, voice, refs.pick],
        [*menu_out, *box_out],
        api_name="server_voice_delete",
        concurrency_limit=2,
        show_progress="hidden",
    )
    refs.refresh.click(
        refresh,
        [model, voice],
        [*menu_out, *box_out],
        api_name="server_voices_refresh",
        show_progress="hidden",
    )
