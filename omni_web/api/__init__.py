"""The automation API (``/api/v1``) and its tokens, over the same services as the web UI."""

from omni_web.api.app import API_PREFIX, build_api, mount_api, token_store
from omni_web.api.tokens import ApiToken, TokenStore

__all__ = ["API_PREFIX", "ApiToken", "TokenStore", "build_api", "mount_api", "token_store"]
