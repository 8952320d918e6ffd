"""Model weights in the Hugging Face cache: what is installed, download, removal, diffs.

Modules: ``cache`` (read the cache), ``download`` (snapshot_download with progress and cancel;
the one place hub errors are translated), ``removal`` (plan, then execute), ``tasks`` (a model's
whole install recipe, and the add/remove diff). The public names are re-exported here.
"""

from omni_web.models.cache import CachedModel, cached_models, hub_cache_dir, installed_keys, installed_models
from omni_web.models.download import (
    DownloadPlan,
    DownloadProgress,
    ProgressCallback,
    download_model,
    plan_download,
)
from omni_web.models.removal import RemovalItem, RemovalPlan, StopServerHosting, plan_removal
from omni_web.models.tasks import ModelDiffResult, ModelInstallResult, apply_model_diff, install_model

__all__ = [
    "CachedModel",
    "DownloadPlan",
    "DownloadProgress",
    "ModelDiffResult",
    "ModelInstallResult",
    "ProgressCallback",
    "RemovalItem",
    "RemovalPlan",
    "StopServerHosting",
    "apply_model_diff",
    "cached_models",
    "download_model",
    "hub_cache_dir",
    "install_model",
    "installed_keys",
    "installed_models",
    "plan_download",
    "plan_removal",
]
