"""A farm: GPU boxes that join the app with one command and serve behind its router.

``agent`` (box side) reports the box's GPUs, starts one `sgl-omni serve` per GPU on the app's
request and serves a small token-guarded HTTP API (``agent_api``); ``registry`` (app side)
keeps the boxes that joined with a farm token and adds their workers to the app's router;
``app_api`` is the app's ``/farm/v1`` routes the agents call; ``actions`` what the user does to
a box (drain, resume, remove, pin to a model), for the Server tab and ``server farm``; ``service``
the systemd user unit ``agent join --service`` writes.
"""

from omni_web.farm.actions import FARM_ACTIONS, farm_action
from omni_web.farm.agent import AgentOptions, join_farm
from omni_web.farm.app_api import FARM_PREFIX, build_farm_api, mount_farm
from omni_web.farm.registry import FarmBox, FarmRegistry
from omni_web.farm.service import TOKEN_ENV, AgentService, plan_service
from omni_web.farm.tokens import farm_in_use, farm_token_store
from omni_web.farm.view import farm_lines
from omni_web.farm.watch import FarmWatcher, group_target

__all__ = [
    "FARM_ACTIONS",
    "FARM_PREFIX",
    "TOKEN_ENV",
    "AgentOptions",
    "AgentService",
    "FarmBox",
    "FarmRegistry",
    "FarmWatcher",
    "build_farm_api",
    "farm_action",
    "farm_in_use",
    "farm_lines",
    "farm_token_store",
    "group_target",
    "join_farm",
    "mount_farm",
    "plan_service",
]
