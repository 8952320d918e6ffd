"""Generate tab, "Voices on the server" through gradio_client: a library clip is uploaded (with its
transcript and the consent text) to the fake sgl-omni hosting the model, listed, and deleted;
the voice menu follows. Models that cannot use uploaded voices, and no running server, get a
message saying why (and nothing is started)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from gradio_client.exceptions import AppError

from omni_web.catalog import get_entry
from tests.ui.conftest import MODEL, RunningApp, launch_app
from tests.voice_clips import EIGHT_SECONDS_TEXT, espeak

BASE = "qwen3_tts_0_6b_base"  # clones, and uses uploaded voices
CONSENT = "I, Test Speaker, agree that this recording may be used to narrate audiobooks."


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    base = tmp_path_factory.mktemp("server-voices-app")
    with launch_app(base) as running:
        clip = espeak(EIGHT_SECONDS_TEXT, base / "narrator-source.wav")
        running.ctx.library.add(clip, name="narrator", transcript=EIGHT_SECONDS_TEXT)
        yield running


def _server_uploads(app: RunningApp) -> dict[str, dict]:
    """What the running fake server itself lists as uploaded voices, by name."""
    record = app.services.server.owned_record()
    assert record is not None
    body = httpx.get(f"{record.base_url}/v1/audio/voices", timeout=10).json()
    return {voice["name"]: voice for voice in body["uploaded_voices"]}


def _keys(menu: dict) -> list[str]:
    return [key for _, key in menu["choices"]]


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ("zonos2", "ZONOS2 clones from the clip sent with each request"),
        (MODEL, "speaks only with its built-in speakers"),
        ("voxtral_tts", "speaks only with its preset voices"),
    ],
)
def test_models_without_uploaded_voices_say_why(app, model, why):
    client = app.client()
    menu, *_ = client.predict(model, None, api_name="/voice_menu")  # what picking the model does
    info, listing, pick = client.predict(model, api_name="/server_voices")
    assert why in info and "Qwen3-TTS 0.6B Base" in info  # and which models do use them
    assert listing == "" and pick["choices"] == []
    with pytest.raises(AppError, match=why):
        client.predict(model, menu["value"], CONSENT, "", api_name="/server_voice_upload")


def test_without_a_running_server_it_points_at_the_server_tab(app):
    client = app.client()
    client.predict(BASE, None, api_name="/voice_menu")
    info, listing, pick = client.predict(BASE, api_name="/server_voices")
    assert "No server hosting Qwen3-TTS 0.6B Base is running" in info and "Server tab" in info
    with pytest.raises(AppError, match="Start Qwen3-TTS 0.6B Base in the Server tab"):
        client.predict(BASE, "clone:narrator", CONSENT, "", api_name="/server_voice_upload")
    with pytest.raises(AppError, match="Server tab"):
        client.predict(BASE, "clone:narrator", None, api_name="/server_voice_delete")
    assert app.services.server.owned_record() is None  # a web event never starts a server


def test_upload_list_and_delete_on_the_running_server(app):
    client = app.client()
    app.services.server.start(get_entry(BASE))
    try:
        client.predict(BASE, None, api_name="/voice_menu")
        info, listing, pick = client.predict(BASE, api_name="/server_voices")
        assert (
            "hosts Qwen3-TTS 0.6B Base" in info and "No voices uploaded" in listing and pick["choices"] == []
        )

        with pytest.raises(AppError, match="consent"):  # refused before anything is sent
            client.predict(BASE, "clone:narrator", "  ", "", api_name="/server_voice_upload")
        with pytest.raises(AppError, match="Choose a clip from the voice library"):
            client.predict(BASE, None, CONSENT, "", api_name="/server_voice_upload")
        assert _server_uploads(app) == {}

        menu, help_text, transcript, instructions, info, listing, pick, name = client.predict(
            BASE, "clone:narrator", CONSENT, "", api_name="/server_voice_upload"
        )
        stored = _server_uploads(app)
        assert set(stored) == {"narrator"}
        assert (
            stored["narrator"]["consent"] == CONSENT and stored["narrator"]["ref_text"] == EIGHT_SECONDS_TEXT
        )
        assert stored["narrator"]["file_size"] > 100_000  # the 16-bit WAV clip itself
        assert "uploaded:narrator" in _keys(menu) and menu["value"] == "uploaded:narrator"
        assert "clone:narrator" in _keys(menu)  # the library clip stays offered
        assert "<td>narrator</td>" in listing and "The quick brown fox" in listing
        assert [tuple(choice) for choice in pick["choices"]] == [("narrator", "narrator")]

        menu, *_rest, pick, name = client.predict(
            BASE, "clone:narrator", CONSENT, "narrator-2", api_name="/server_voice_upload"
        )
        assert set(_server_uploads(app)) == {"narrator", "narrator-2"}
        assert menu["value"] == "uploaded:narrator-2" and name == ""
        # Another browser opening the menu sees the uploaded voices too.
        other_menu, *_ = app.client().predict(BASE, None, api_name="/voice_menu")
        assert {"uploaded:narrator", "uploaded:narrator-2"} <= set(_keys(other_menu))

        late = app.client()  # a second browser that listed the voices before the delete
        late.predict(BASE, None, api_name="/voice_menu")
        late.predict(BASE, api_name="/server_voices")
        menu, help_text, transcript, instructions, info, listing, pick = client.predict(
            BASE, "uploaded:narrator", "narrator", api_name="/server_voice_delete"
        )
        assert set(_server_uploads(app)) == {"narrator-2"}
        assert "uploaded:narrator" not in _keys(menu) and "uploaded:narrator-2" in _keys(menu)
        assert menu["value"] == _keys(menu)[0]  # the deleted voice is no longer selected
        assert "<td>narrator</td>" not in listing and "<td>narrator-2</td>" in listing
        with pytest.raises(AppError, match="no such voice .{1,6}narrator.{1,6} on the server"):
            late.predict(BASE, None, "narrator", api_name="/server_voice_delete")

        # A server hosting another model is not where this model's voices go.
        info, listing, _ = client.predict("qwen3_tts_1_7b_base", api_name="/server_voices")
        assert "hosts Qwen3-TTS 0.6B Base, not Qwen3-TTS 1.7B Base" in info and listing == ""
    finally:
        app.services.server.stop()
