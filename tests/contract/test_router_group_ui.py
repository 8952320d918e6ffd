"""The Server tab with a group (real router, fake workers): GPU choice saved, Start, the table, Stop."""

from __future__ import annotations

import pytest

from omni_web.server.group import group_pids
from omni_web.server.record import process_info
from omni_web.settings import load_settings
from tests.contract.setup_env import ContractVenv
from tests.fakes.sgl_omni import install_router
from tests.ui.conftest import launch_app
from tests.ui.helpers import wait_for

pytestmark = pytest.mark.contract


def test_server_tab_starts_a_group_and_shows_each_worker(tmp_path, contract_venv: ContractVenv) -> None:
    with launch_app(tmp_path) as app:
        install_router(app.paths.backend_venv, contract_venv.python)
        client = app.client()
        loaded = client.predict(api_name="/server_load")
        gpus, workers, found, farm = loaded[5:9]  # then the farm's box menu and its timer
        assert (gpus, workers) == ("", "")  # GPUs and worker machines: nothing chosen yet
        assert "NVML sees no GPU" in found
        assert farm == ""  # the farm: no box joined
        with pytest.raises(Exception, match="GPU ids"):
            client.predict("first", "", api_name="/server_group_save")
        saved = client.predict("0,1", "", api_name="/server_group_save")
        assert saved.startswith("Saved: GPUs 0,1") and load_settings(app.paths).gpus == "0,1"
        notice, _ = client.predict(api_name="/server_start")
        assert notice.startswith("Start requested")

        def group_healthy():
            status, _log = client.predict(api_name="/server_status")
            table = status.split('id="server-group-members"', 1)[-1]
            return status if 'id="server-group-members"' in status and table.count(">healthy<") == 3 else None

        status = wait_for(group_healthy, timeout_s=120, what="router + 2 workers healthy in the Server tab")
        assert "GPU 0" in status and "GPU 1" in status and "router" in status
        record = app.services.server.group.record()
        pids = group_pids(record)
        assert len(pids) == 3
        assert client.predict(api_name="/server_stop") == "Stopped the server."
        wait_for(lambda: not any((i := process_info(p)) is not None and i.alive for p in pids) or None,
                 timeout_s=30, what="every group process to exit")
        assert app.services.server.group.record() is None
