"""Models tab handlers through gradio_client: the tree from the disk, Apply as one task (removal
after a confirm, stopping a server that hosts the model; downloads from a local fake hub)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from omni_web.catalog import get_entry
from omni_web.models import installed_keys
from omni_web.runstate import RunState
from omni_web.ui.context import TASK_MODELS
from omni_web.ui.models import catalog_orgs
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.ui.conftest import MODEL, RunningApp, launch_app
from tests.ui.helpers import cache_model, wait_for

ORGS = catalog_orgs()
VOXTRAL = "voxtral_tts"
SLOW = "moss_tts_local"  # no companion packages: its install is the download alone


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    files = {"config.json": b'{"model_type": "voxtral"}\n', "model.safetensors": b"\0" * 300_000}
    # Bigger than huggingface_hub's 10 MiB read chunk, so a cancel lands mid-file.
    slow = {"config.json": b"{}\n", "model.safetensors": b"\1" * 24_000_000}
    with FakeHub(
        [FakeRepo(get_entry(VOXTRAL).repo_id, files), FakeRepo(get_entry(SLOW).repo_id, slow)]
    ) as server:
        yield server


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, hub: FakeHub) -> Iterator[RunningApp]:
    with launch_app(tmp_path_factory.mktemp("models-app"), hf_endpoint=hub.url) as running:
        yield running


def _tree(client) -> dict[str, dict]:
    outputs = client.predict(api_name="/models_load")
    return dict(zip(ORGS, outputs[: len(ORGS)], strict=True))


def _checked(tree: dict[str, dict]) -> list[list[str]]:
    return [list(tree[org]["value"]) for org in ORGS]


def _finish(app: RunningApp):
    return wait_for(
        lambda: (s := app.ctx.tasks.snapshot(TASK_MODELS)).state.finished and s,
        timeout_s=60,
        what="the model changes to finish",
    )


def test_tree_groups_by_org_and_checks_what_is_on_disk(app):
    tree = _tree(app.client())
    assert ORGS[0] == "Qwen" and {"Boson AI", "Mistral AI", "Zyphra"} <= set(ORGS)
    assert tree["Qwen"]["value"] == [MODEL]
    labels = dict((key, label) for label, key in tree["Qwen"]["choices"])
    assert "installed" in labels[MODEL] and "~2.5 GB download" in labels["qwen3_tts_0_6b_base"]
    assert all(tree[org]["value"] == [] for org in ORGS if org != "Qwen")


def test_apply_with_no_change_starts_nothing(app):
    client = app.client()
    tree = _tree(client)
    client.predict(*_checked(tree), api_name="/models_apply")
    assert app.ctx.tasks.snapshot(TASK_MODELS).state is None


def test_checking_a_model_downloads_it_with_a_live_log(app):
    client = app.client()
    checked = _checked(_tree(client))
    checked[ORGS.index("Mistral AI")] = [VOXTRAL]
    confirm_text, status, log = client.predict(*checked, api_name="/models_apply")
    assert confirm_text == ""  # nothing to remove: no confirm
    done = _finish(app)
    assert done.state is RunState.DONE, done.message
    assert VOXTRAL in installed_keys(cache_dir=app.cache_dir)
    assert "Downloading voxtral_tts" in done.log_text and done.progress == 1.0
    tree = _tree(client)  # the tree re-opens from the disk
    assert tree["Mistral AI"]["value"] == [VOXTRAL]


def test_unchecking_asks_first_then_stops_the_hosting_server_and_removes(app):
    client = app.client()
    cache_model(app.cache_dir, "qwen3_tts_0_6b_base")
    app.services.server.start(get_entry(MODEL))  # the managed server hosts the model to remove
    checked = _checked(_tree(client))
    checked[ORGS.index("Qwen")] = ["qwen3_tts_0_6b_base"]  # uncheck MODEL
    checked[ORGS.index("Mistral AI")] = []  # and voxtral
    confirm_text, _, _ = client.predict(*checked, api_name="/models_apply")
    # Models by the names users read, never by catalog key.
    assert "Remove 2 models" in confirm_text and get_entry(MODEL).label in confirm_text
    assert (
        get_entry(VOXTRAL).label in confirm_text and MODEL not in confirm_text and VOXTRAL not in confirm_text
    )
    assert "running server hosting Qwen3-TTS 0.6B CustomVoice is stopped first" in confirm_text
    assert MODEL in installed_keys(cache_dir=app.cache_dir)  # nothing removed before the confirm
    client.predict(api_name="/models_confirm")
    done = _finish(app)
    assert done.state is RunState.DONE, done.message
    assert done.result == f"Done: removed {get_entry(MODEL).label}, removed {get_entry(VOXTRAL).label}.", (
        done.result
    )
    assert installed_keys(cache_dir=app.cache_dir) == {"qwen3_tts_0_6b_base"}
    assert app.services.server.owned_record() is None
    assert "Stopping the managed server hosting qwen3_tts_0_6b_customvoice" in done.log_text
    assert _tree(client)["Qwen"]["value"] == ["qwen3_tts_0_6b_base"]


def test_a_download_can_be_cancelled_and_nothing_is_half_installed(app, hub):
    client = app.client()
    hub.set_chunk_delay(0.002)  # 16 KiB per 2 ms: about 3 s for the big file
    try:
        checked = _checked(_tree(client))
        checked[ORGS.index("OpenMOSS")] = [SLOW]
        client.predict(*checked, api_name="/models_apply")
        wait_for(
            lambda: f"Downloading {SLOW}" in app.ctx.tasks.snapshot(TASK_MODELS).log_text,
            timeout_s=60,
            what="the download to start",
        )
        client.predict(api_name="/models_cancel")
        done = _finish(app)
    finally:
        hub.set_chunk_delay(0.0)
    assert done.state is RunState.CANCELLED, done.message
    assert SLOW not in installed_keys(cache_dir=app.cache_dir)
    assert _tree(client)["OpenMOSS"]["value"] == []  # the tree shows the disk: not installed
