"""What a user reads when something fails: in words, once, with the model's name, never a catalog
key, a stored upload name or a Python class name (issue 14, point 7)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import httpx
import pytest

from omni_web.book import load_book
from omni_web.catalog import get_entry, model_label
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.errors import BookError, ServerUnavailable, VoiceError, exception_detail, internal_error_message
from omni_web.models.removal import plan_removal
from omni_web.ui.models import diff_done_line, diff_title, failure_line
from omni_web.voices.server_voices import option_for_key
from tests.ui.helpers import cache_model

_CLASS_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Error|Exception|Timeout|File)\b")
QWEN, ZONOS = "qwen3_tts_0_6b_customvoice", "zonos2"


def test_exception_detail_is_the_message_else_the_kind_in_words() -> None:
    assert exception_detail(ValueError("bad  value\n here")) == "bad value here"
    assert exception_detail(httpx.ReadTimeout("")) == "read timeout"
    assert exception_detail(KeyError("chapter")) == "'chapter'"
    line = internal_error_message(ZeroDivisionError("division by zero"))
    assert line.startswith("Internal error:") and "(division by zero)" in line and "app log" in line
    assert not _CLASS_NAME.search(line) and "ZeroDivisionError" not in line


def test_models_are_named_as_users_read_them() -> None:
    assert model_label(ZONOS, "bf16 fallback") == "ZONOS2 (bf16 fallback)"
    assert model_label(QWEN) == "Qwen3-TTS 0.6B CustomVoice"
    assert model_label("some/foreign-model") == "some/foreign-model"  # a foreign server's id, as it is
    assert diff_title([QWEN], [ZONOS]) == "Model changes: download Qwen3-TTS 0.6B CustomVoice; remove ZONOS2"
    assert diff_done_line([ZONOS], [QWEN]) == "Done: removed ZONOS2, installed Qwen3-TTS 0.6B CustomVoice."
    # A failure that already names its model is not prefixed with the name (or the key) again.
    told = "Qwen3-TTS 0.6B CustomVoice (Qwen/x): could not reach the hub."
    assert failure_line(QWEN, told) == told
    assert failure_line(ZONOS, "disk full.") == "ZONOS2: disk full."


def test_a_removal_plan_names_its_models(tmp_path: Path) -> None:
    for key in (QWEN, ZONOS):
        cache_model(tmp_path, key)
    plan = plan_removal([QWEN, ZONOS], cache_dir=tmp_path)
    assert plan.summary.startswith("Remove 2 models (Qwen3-TTS 0.6B CustomVoice, ZONOS2), freeing "), (
        plan.summary
    )


def test_a_damaged_epub_is_told_in_words(tmp_path: Path) -> None:
    broken = tmp_path / "Damaged Book.epub"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml", "<container><rootfiles><rootfile full-path='x.opf'/></rootfiles>"
        )
    with pytest.raises(BookError) as told:
        load_book(broken)
    assert "Damaged Book.epub" in str(told.value) and not _CLASS_NAME.search(str(told.value)), str(told.value)


def test_an_unreachable_server_is_told_without_the_exception_class() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    client = SpeechClient(
        "http://127.0.0.1:9", transport=httpx.MockTransport(refuse), sleep=lambda _s: None, connect_retries=0
    )
    with pytest.raises(ServerUnavailable) as told:
        client.speech(get_entry(QWEN), SpeechRequest("Hello.", VoiceChoice.default()))
    assert "Connection refused" in str(told.value) and "ConnectError" not in str(told.value)
    assert "Start the server" in str(told.value)


def test_a_stale_voice_choice_is_told_without_its_menu_key() -> None:
    with pytest.raises(VoiceError) as told:
        option_for_key([], "clone:narrator-2")
    assert "clone:" not in str(told.value) and "pick one" in str(told.value)


def test_a_settings_rule_names_the_field_as_the_form_does() -> None:
    from omni_web.ui.settings import setting_error_in_words

    labels = {"server_port": "SGLang-Omni port", "qa_takes": "Takes per chunk before it is flagged"}
    said = setting_error_in_words("Invalid setting: server_port must be between 1 and 65535.", labels)
    assert said == "Invalid setting: “SGLang-Omni port” must be between 1 and 65535."
    assert "server_port" not in said
    other = "Invalid setting: gpus must be all, or GPU ids like 0,2."
    assert setting_error_in_words(other, labels) == other  # not on the form: the settings file's name
