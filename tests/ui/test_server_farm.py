"""The Server tab's farm block through gradio_client: the boxes listed, and Drain, Resume, Switch
model (a pin) and Remove on a box picked by id, over a farm record (the agents do not answer here:
tests/ui/test_browser_farm.py drives real ones in a real browser)."""

from __future__ import annotations

import pytest

from omni_web.farm import FarmBox, FarmRegistry, farm_token_store
from omni_web.ui.server_farm import FOLLOW_GROUP

OTHER = "qwen3_tts_0_6b_base"


@pytest.fixture
def farm(ui_app):
    registry = FarmRegistry(ui_app.paths, lambda: None)
    for n in (1, 2):
        registry._save(FarmBox(id=f"b{n}", name=f"lab-{n}", agent_url="http://127.0.0.1:9", secret="s",
                               gpus=({"index": 0, "name": "RTX 4090"},), joined_at=float(n)))
    yield registry
    for box in registry.boxes():
        registry._save(None, drop=box.id)


def test_the_farm_block_lists_the_boxes_to_pick(ui_app, farm) -> None:
    *_server, farm_html, pick, pin, timer = ui_app.client().predict(api_name="/server_load")
    assert "Farm: 2 boxes" in farm_html and "box lab-2 (http://127.0.0.1:9): joined" in farm_html
    assert pick == {"choices": [["lab-1 (b1): joined", "b1"], ["lab-2 (b2): joined", "b2"]], "value": "b1",
                    "__type__": "update"}
    assert timer["active"] is True  # the list is redrawn while boxes are there
    assert pin == FOLLOW_GROUP  # b1 is not pinned


def test_picking_a_box_shows_its_pin(ui_app, farm) -> None:
    farm.pin("b2", OTHER)
    client = ui_app.client()
    assert client.predict("b2", api_name="/server_farm_pick") == OTHER
    assert client.predict("b1", api_name="/server_farm_pick") == FOLLOW_GROUP
    assert client.predict(api_name="/server_load")[-2] == FOLLOW_GROUP  # b1 comes first


def test_drain_resume_pin_and_remove_a_box(ui_app, farm) -> None:
    client = ui_app.client()
    notice, html, pick = client.predict("b2", api_name="/server_farm_drain")
    assert notice.startswith("Drained box lab-2 (b2)") and "until you resume it" in notice
    assert "box lab-2 (http://127.0.0.1:9): drained" in html and pick["value"] == "b2"
    assert farm.box("b2").drained
    notice, html, *_ = client.predict("b2", api_name="/server_farm_resume")
    assert "Resumed box lab-2 (b2)" in notice and not farm.box("b2").drained
    notice, html, *_ = client.predict("b1", OTHER, api_name="/server_farm_pin")
    assert "Pinned box lab-1 (b1)" in notice and f"pinned to {OTHER}" in html
    assert farm.box("b1").pinned_model == OTHER
    notice, *_ = client.predict("b1", FOLLOW_GROUP, api_name="/server_farm_pin")
    assert "no longer pinned" in notice and farm.box("b1").pinned_model == ""
    notice, html, pick = client.predict("b1", api_name="/server_farm_remove")
    assert "Removed box lab-1 (b1)" in notice and "box lab-1" not in html and pick["value"] == "b2"
    assert [box.id for box in farm.boxes()] == ["b2"]


def test_an_action_without_a_box_or_on_a_box_gone_says_what_to_do(ui_app, farm) -> None:
    from gradio_client.exceptions import AppError

    client = ui_app.client()
    with pytest.raises(AppError, match="Pick a box first"):
        client.predict(None, api_name="/server_farm_drain")
    with pytest.raises(AppError, match="No farm box is called .*b9.*Boxes: lab-1 \\(b1\\), lab-2"):
        client.predict("b9", api_name="/server_farm_drain")
    with pytest.raises(AppError, match=r"The agent of box lab-1 \(http://127.0.0.1:9\) does not answer"):
        client.predict("b1", api_name="/server_farm_log")


def test_the_timer_runs_only_once_the_farm_is_in_use(ui_app) -> None:
    assert ui_app.client().predict(api_name="/server_load")[-1]["active"] is False  # no token, no box
    store = farm_token_store(ui_app.paths)
    token, _secret = store.create("lab")
    try:
        assert ui_app.client().predict(api_name="/server_load")[-1]["active"] is True
    finally:
        store.revoke(token.id)
