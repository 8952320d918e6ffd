"""Settings tab handlers through gradio_client: values persist in the data root."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from gradio_client.exceptions import AppError

from omni_web.settings import load_settings
from omni_web.ui.settings import FIELDS


def test_settings_load_save_and_persist(ui_app, tmp_path):
    client = ui_app.client()
    values = client.predict(api_name="/settings_load")
    assert values[3] == 120 and values[4] == 0 and values[9] == "m4b"  # chunk, concurrency (model default)
    assert values[16] == "audiobook" and values[17] == "skip"  # the loudness preset, footnotes
    assert values[18] == 900  # how long a job waits for a remote server that went away
    assert values[19] is True and values[20] == "rows"  # voice identity in QA, tables read row by row
    out = tmp_path / "books-out"
    saved = client.predict(
        7870,
        values[1],
        "http://127.0.0.1:9",
        90,
        4,
        300,
        900,
        2000,
        str(out),
        "m4b",
        True,
        "base",
        "off",
        "asr",
        "small.en",
        2,
        "acx",
        "end-of-paragraph",
        120,
        False,
        "note",
        api_name="/settings_save",
    )
    assert str(out) in saved
    settings = load_settings(ui_app.paths)
    assert (settings.web_port, settings.remote_url, settings.chunk_size_words, settings.concurrency) == (
        7870,
        "http://127.0.0.1:9",
        90,
        4,
    )
    assert (
        settings.pause_between_chunks_ms,
        settings.pause_after_heading_ms,
        settings.pause_between_chapters_ms,
    ) == (300, 900, 2000)
    assert settings.output_path(ui_app.paths) == out and settings.also_mp3_chapters
    assert settings.transcription_model == "base" and settings.text_normalization == "off"
    assert (settings.qa_level, settings.qa_model, settings.qa_takes) == ("asr", "small.en", 2)
    assert settings.loudness == "acx" and settings.footnotes == "end-of-paragraph"
    assert settings.remote_patience_s == 120
    assert settings.qa_voice is False and settings.tables == "note"
    assert yaml.safe_load(ui_app.paths.settings_file.read_text())["remote_patience_s"] == 120
    assert yaml.safe_load(ui_app.paths.settings_file.read_text())["chunk_size_words"] == 90
    assert ui_app.services.server.settings.remote_url == "http://127.0.0.1:9"  # applied at once
    # A second browser sees the same values; concurrency 0 means the model's default again.
    again = ui_app.client().predict(api_name="/settings_load")
    assert again[0] == 7870 and again[3] == 90 and again[8] == str(out)
    assert again[12] == "off" and list(again[13:16]) == ["asr", "small.en", 2]
    client.predict(
        *again[:4],
        0,
        300,
        900,
        2000,
        "",
        "m4b",
        False,
        "small",
        "auto",
        "basic",
        "tiny.en",
        3,
        "audiobook",
        "skip",
        None,
        True,
        "rows",
        api_name="/settings_save",
    )
    restored = load_settings(ui_app.paths)
    assert (
        restored.concurrency is None
        and restored.output_dir == ""
        and restored.remote_url == "http://127.0.0.1:9"
    )
    assert restored.remote_patience_s == 120  # an emptied box keeps the saved wait
    assert restored.qa_voice is True and restored.tables == "rows"
    client.predict("", api_name="/server_save_remote")


def test_invalid_settings_are_refused_with_the_rule(ui_app):
    values = ui_app.client().predict(api_name="/settings_load")
    bad = list(values[: len(FIELDS)])  # the form's fields (the transcription-model box follows them)
    bad[1] = 70000  # the SGLang-Omni port
    # The rule in the form's words: the field's label, not the settings file's key.
    with pytest.raises(AppError, match="Invalid setting: “SGLang-Omni port” must be between 1 and 65535"):
        ui_app.client().predict(*bad, api_name="/settings_save")
    bad[1], bad[FIELDS.index("remote_patience_s")] = values[1], -5
    with pytest.raises(
        AppError, match="“Wait for a remote server that went away \\(seconds\\)” must be 0 or more"
    ):
        ui_app.client().predict(*bad, api_name="/settings_save")


def test_llm_endpoint_saved_and_tested_against_a_fake_chat_server(ui_app):
    from tests.fakes.fake_chat import FakeChat, serve_fake_chat

    client = ui_app.client()
    fake = FakeChat(answer=lambda user: '{"ok": true}', api_key="sk-local")
    with serve_fake_chat(fake) as url:
        told = client.predict(url + "/v1", "qwen-7b", "sk-local", 3, 30, api_name="/llm_test")
        assert "qwen-7b answered in" in told and "1 request" in told
        with pytest.raises(AppError, match="HTTP 401.*API key"):
            client.predict(url, "qwen-7b", "wrong", 3, 30, api_name="/llm_test")
        client.predict(url + "/v1", "qwen-7b", "sk-local", 3, 30, api_name="/llm_save")
    settings = load_settings(ui_app.paths)
    assert (
        settings.llm_url,
        settings.llm_model,
        settings.llm_api_key,
        settings.llm_concurrency,
        settings.llm_timeout_s,
    ) == (url + "/v1", "qwen-7b", "sk-local", 3, 30)
    assert fake.received[0]["model"] == "qwen-7b"
    with pytest.raises(AppError, match="llm_url must start with http"):
        client.predict("gpu-box:8000", "", "", 2, 30, api_name="/llm_save")
    with pytest.raises(AppError, match="No LLM endpoint is set"):
        client.predict("", "", "", 2, 30, api_name="/llm_test")
    client.predict("", "", "", 2, 120, api_name="/llm_save")


def test_storage_section_shows_sizes_and_prunes_a_finished_book(ui_app, browser):
    """Settings → Storage in the browser: the finished book's chunk cache and its superseded chapter
    version are measured, the confirm says how much pruning frees, and pruning frees it on disk."""
    from playwright.sync_api import expect

    from omni_web.jobs.store import JobState, JobStore
    from tests.conftest import DATA_DIR
    from tests.test_storage import KEY_A, KEY_B, OLD, _book
    from tests.ui.browser_kit import VIEWPORT, shot, tab
    from tests.ui.conftest import PASSWORD, USER

    paths = ui_app.paths
    store = JobStore(paths.jobs_db)
    book = _book(
        paths.root,
        "Seeded",
        versions={f"{OLD}.{KEY_A}": 25_000, f"{OLD}.{KEY_B}": 9_000},
        chunks={"s1": 300_000, "s2": 150_000},
        cache=paths.chunk_cache_dir,
        current=[f"{OLD}.{KEY_B}"],
        source=DATA_DIR / "hefty-water.epub",
    )  # a real book: the Jobs and Shelf tabs read it
    store.set_flag("paused", "1")  # the app's worker must not pick the seeded job up (claim_next honours it)
    try:
        job = store.enqueue("convert", {"book_path": book["book_path"]}, title="Seeded")
        with sqlite3.connect(paths.jobs_db) as conn:  # a finished job, as if the worker had run it
            conn.execute(
                "UPDATE jobs SET state = ?, result = ?, finished_at = 1 WHERE id = ?",
                (JobState.DONE.value, json.dumps({"m4b": book["m4b"], "chapters": book["chapters"]}), job.id),
            )
    finally:
        store.set_flag("paused", "0")
    doomed = [
        paths.chunk_cache_dir / "s1.wav",
        paths.chunk_cache_dir / "s2.wav",
        *sorted(book["parts"].glob(f"{OLD}.{KEY_A}.*")),
    ]
    on_disk = sum(p.stat().st_size for p in doomed)
    assert on_disk == 450_000 + 4 * 25_000
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        page.goto(ui_app.url)
        page.locator("input[type=text]").fill(USER)
        page.locator("input[type=password]").fill(PASSWORD)
        page.get_by_role("button", name="Login").click()
        expect(page.get_by_role("tab", name="Generate")).to_be_visible(timeout=60_000)
        tab(page, "Settings")
        page.locator("#settings-storage").get_by_text("Storage", exact=True).click()  # opening it measures
        table = page.locator("#settings-storage-table")
        expect(table).to_contain_text("Chunk cache: finished books", timeout=60_000)
        expect(table.locator("tr", has_text="Chunk cache: finished books")).to_contain_text("450.0 kB")
        expect(table.locator("tr", has_text="Chapter versions superseded")).to_contain_text("100.0 kB")
        expect(table.locator("tr", has_text="Seeded")).to_contain_text("finished")
        page.locator("#settings-storage-plan").click()
        confirm = page.locator("#settings-storage-confirm")
        expect(confirm).to_contain_text("Pruning frees", timeout=60_000)
        assert "550.0 kB" in confirm.inner_text() and "render their chunks again" in confirm.inner_text()
        assert all(p.exists() for p in doomed)  # nothing goes before the confirm
        shot(page, "settings-storage-confirm")
        page.locator("#settings-storage-prune").click()
        expect(confirm).to_contain_text("Freed", timeout=60_000)
        assert f"{on_disk:,} bytes" in confirm.inner_text()
        assert not any(p.exists() for p in doomed)
        assert Path(book["m4b"]).is_file() and (paths.chunk_cache_dir / "s1.qa.json").is_file()
        assert (book["parts"] / f"{OLD}.{KEY_B}.m4a").is_file()  # the version the book uses
        expect(table.locator("tr", has_text="Chunk cache: finished books")).to_have_count(
            0
        )  # 0 B rows hidden
        shot(page, "settings-storage-pruned")
    finally:
        context.close()
