"""The base URL of an sgl-omni endpoint: normalised, and whether it is this machine."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from omni_web.errors import ServerError

__all__ = ["is_loopback_url", "normalize_base_url"]


def normalize_base_url(url: str) -> str:
    """``url`` without trailing slashes or a trailing ``/v1``; raise :class:`ServerError` if unusable.

    People paste OpenAI-style base URLs (``http://host:8000/v1``); the client adds the paths.
    """
    text = url.strip().rstrip("/")
    if text.endswith("/v1"):
        text = text[: -len("/v1")]
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ServerError(
            f"'{url}' is not a server URL. Write it like http://127.0.0.1:8000 "
            "(scheme, host and port of the sgl-omni server)."
        )
    return text


def is_loopback_url(url: str) -> bool:
    """True when ``url`` points at this machine: ``localhost``, 127.0.0.0/8, ``::1`` (or 0.0.0.0).

    A server on this machine reads a reference clip from its local path; any other server gets
    the clip inlined as a base64 data URL (sglang-omni reads either form in
    ``reference_dict_from_media_reference``, sglang_omni/serve/speech_service.py).
    """
    host = urlsplit(url.strip()).hostname
    if not host:
        return False
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    # Connecting to the unspecified address reaches this machine as well.
    return address.is_loopback or address.is_unspecified
