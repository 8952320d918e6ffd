"""Settings → automation, Generate → Save as preset and Queue → OPDS import, through the app's own
event API: a preset saved from the Generate form, rules saved and used, inbox and notification
settings, API tokens created (shown once) and revoked, a catalog's book queued with its metadata."""

from __future__ import annotations

import json

from gradio_client import handle_file

from omni_web.api import token_store
from omni_web.farm import farm_token_store
from omni_web.library import Preset, Rule
from omni_web.pipeline.request import ConvertRequest
from tests.conftest import DATA_DIR
from tests.test_opds_import import catalog  # noqa: F401 - a fixture: the local OPDS catalog
from tests.ui.conftest import MODEL


def test_presets_rules_inbox_and_tokens_from_the_ui(ui_app):
    client = ui_app.client()
    services = ui_app.services
    client.predict(api_name="/generate_load")
    _, _, chapters, *_ = client.predict(handle_file(DATA_DIR / "hefty-water.epub"), api_name="/book_upload")
    status = client.predict("Night", "all", chapters["value"], MODEL, "speaker:Vivian", "", "", 120, False,
                            api_name="/preset_from_generate")
    assert "Saved preset **Night**" in status
    night = services.library.presets.get("Night")
    assert (night.model_key, night.voice["name"], night.chapters) == (MODEL, "Vivian", "all")

    raw = json.dumps({**night.to_dict(), "name": "Poems", "output_format": "mp3"})
    assert "Saved preset 'Poems'" in client.predict(raw, api_name="/preset_save")[0]
    saved = client.predict(
        {
            "headers": ["field", "contains", "preset"],
            "data": [["author", "eliot", "Poems"], ["language", "en", "Night"]],
        },
        api_name="/rules_save",
    )
    assert "Saved 2 rule(s)" in saved[0]
    job = services.library.submit_book(
        DATA_DIR / "wasteland.epub"
    )  # no preset named: the first rule picks Poems
    assert ConvertRequest.from_dict(job.params).output_format == "mp3"

    said = client.predict("off", "Night", "http://127.0.0.1:9/hook", "", api_name="/automation_save")
    assert "Inbox: off" in said and services.settings.webhook_urls == "http://127.0.0.1:9/hook"
    assert "✗" in client.predict(api_name="/notify_test")  # nothing listens there: reported, not raised

    shown, listing, _ = client.predict("ci", api_name="/token_create")
    secret = shown.split("`")[1]
    (token,) = token_store(ui_app.paths).tokens()
    assert token_store(ui_app.paths).verify(secret) == token and secret not in listing
    client.predict(token.id, api_name="/token_revoke")
    assert token_store(ui_app.paths).verify(secret) is None

    # Farm tokens: a store of their own; an API token does not let a box join, nor the reverse.
    shown, listing, _ = client.predict("lab", api_name="/farm_token_create")
    farm_secret = shown.split("`")[1]
    (farm_token,) = farm_token_store(ui_app.paths).tokens()
    assert farm_token_store(ui_app.paths).verify(farm_secret) == farm_token and farm_secret not in listing
    assert token_store(ui_app.paths).verify(farm_secret) is None
    client.predict(farm_token.id, api_name="/farm_token_revoke")
    assert farm_token_store(ui_app.paths).verify(farm_secret) is None


def test_opds_import_from_the_queue_tab(ui_app, catalog):  # noqa: F811 - the fixture from tests/test_opds_import.py
    url, _ = catalog
    client = ui_app.client()
    services = ui_app.services
    services.library.presets.save(Preset(name="Lib", model_key=MODEL))
    services.library.presets.set_rules(
        [Rule("series", "tides", "Lib")]
    )  # the catalog's series picks the preset
    _, _, note = client.predict(f"{url}/opds", "reader", "shelf", api_name="/opds_browse")
    assert "0 books, 1 sections" in note
    _, books, note = client.predict(
        f"{url}/opds", "reader", "shelf", f"{url}/opds/new", api_name="/opds_open"
    )
    (choice,) = books["choices"]
    assert "Hefty Water — Jane Rivers [Tides 2]" in choice[0]
    report = client.predict(f"{url}/opds", "reader", "shelf", [choice[1]], "", api_name="/opds_take")
    assert "queued as" in report
    job = services.library.jobs.get(report.split("queued as ")[1].split()[0])
    assert job.params["catalog_metadata"]["authors"] == ["Jane Rivers"] and job.params["model_key"] == MODEL
