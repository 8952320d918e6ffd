"""Settings tab handlers through gradio_client: values persist in the data root."""

from __future__ import annotations

import pytest
import yaml
from gradio_client.exceptions import AppError

from omni_web.settings import load_settings


def test_settings_load_save_and_persist(ui_app, tmp_path):
    client = ui_app.client()
    values = client.predict(api_name="/settings_load")
    assert values[3] == 120 and values[4] == 0 and values[9] == "m4b"  # chunk, concurrency (model default)
    assert values[16] == "audiobook" and values[17] == "skip"  # the loudness preset, footnotes (the last field)
    out = tmp_path / "books-out"
    saved = client.predict(7870, values[1], "http://127.0.0.1:9", 90, 4, 300, 900, 2000, str(out), "m4b", True,
                           "base", "off", "asr", "small.en", 2, "acx", "end-of-paragraph", api_name="/settings_save")
    assert str(out) in saved
    settings = load_settings(ui_app.paths)
    assert (settings.web_port, settings.remote_url, settings.chunk_size_words, settings.concurrency) == \
        (7870, "http://127.0.0.1:9", 90, 4)
    assert (settings.pause_between_chunks_ms, settings.pause_after_heading_ms, settings.pause_between_chapters_ms) \
        == (300, 900, 2000)
    assert settings.output_path(ui_app.paths) == out and settings.also_mp3_chapters
    assert settings.transcription_model == "base" and settings.text_normalization == "off"
    assert (settings.qa_level, settings.qa_model, settings.qa_takes) == ("asr", "small.en", 2)
    assert settings.loudness == "acx" and settings.footnotes == "end-of-paragraph"
    assert yaml.safe_load(ui_app.paths.settings_file.read_text())["chunk_size_words"] == 90
    assert ui_app.services.server.settings.remote_url == "http://127.0.0.1:9"  # applied at once
    # A second browser sees the same values; concurrency 0 means the model's default again.
    again = ui_app.client().predict(api_name="/settings_load")
    assert again[0] == 7870 and again[3] == 90 and again[8] == str(out)
    assert again[12] == "off" and list(again[13:16]) == ["asr", "small.en", 2]
    client.predict(*again[:4], 0, 300, 900, 2000, "", "m4b", False, "small", "auto", "basic", "tiny.en", 3,
                   "audiobook", "skip", api_name="/settings_save")
    restored = load_settings(ui_app.paths)
    assert restored.concurrency is None and restored.output_dir == "" and restored.remote_url == "http://127.0.0.1:9"
    client.predict("", api_name="/server_save_remote")


def test_invalid_settings_are_refused_with_the_rule(ui_app):
    values = ui_app.client().predict(api_name="/settings_load")
    bad = list(values[:18])  # the form's fields (the transcription-model box follows them)
    bad[1] = 70000  # the SGLang-Omni port
    # The rule in the form's words: the field's label, not the settings file's key.
    with pytest.raises(AppError, match="Invalid setting: “SGLang-Omni port” must be between 1 and 65535"):
        ui_app.client().predict(*bad, api_name="/settings_save")
