"""Reference-audio loading for the fake ``sgl-omni`` (API doc 2.4), with the real error texts.

Every form the server accepts is handled the way ``load_media_reference_descriptor`` and the
resource connector do: bare local paths, ``file://`` (only with an allowed directory),
``data:audio/...;base64,...`` and ``http(s)`` (domain allow-list, then a refusal of loopback,
private, link-local, reserved, multicast and unspecified addresses, then a capped download).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import ParseResult, urlparse
from urllib.request import url2pathname

from tests.fakes.fake_sgl_omni_audio import probe_audio
from tests.fakes.fake_sgl_omni_errors import bad_request

__all__ = [
    "MAX_REFERENCE_AUDIO_BYTES",
    "LoadedReference",
    "MediaPolicy",
    "load_base64_reference",
    "load_reference",
]

MAX_REFERENCE_AUDIO_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class MediaPolicy:
    """The server's media flags: ``--allowed-local-media-path`` and ``--allowed-media-domain``."""

    allowed_local_media_path: Path | None = None
    allowed_media_domains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoadedReference:
    """A reference clip the request carried; ``duration_s`` is None when it did not decode."""

    duration_s: float | None
    digest: str
    text: str | None = None


def _loaded(data: bytes, text: str | None = None) -> LoadedReference:
    info = probe_audio(data)
    return LoadedReference(
        duration_s=info.duration_s if info is not None else None,
        digest=hashlib.sha256(data).hexdigest()[:16],
        text=text,
    )


def _check_size(size: int, param: str) -> None:
    if size > MAX_REFERENCE_AUDIO_BYTES:
        raise bad_request(f"{param} must be at most {MAX_REFERENCE_AUDIO_BYTES} bytes", param=param)


def load_base64_reference(media_type: str, encoded: str, *, param: str) -> LoadedReference:
    """Validate base64 audio the way ``validate_base64_media_data`` does, then probe it."""
    if not media_type.startswith("audio/"):
        raise bad_request(f"{param} data URL must use an audio media type", param=param)
    _check_size((len(encoded.rstrip("=")) * 3) // 4, param)
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise bad_request(f"{param} data URL must include valid base64 media data", param=param) from exc
    return _loaded(data)


def _local_file(path_text: str, policy: MediaPolicy, param: str) -> LoadedReference:
    resolved = Path(path_text).expanduser().resolve()
    allowed = policy.allowed_local_media_path
    if allowed is not None and not resolved.is_relative_to(allowed):
        raise bad_request(f"File path {resolved} is not within allowed directory.", param=param)
    if not resolved.exists():
        raise bad_request(f"{param} file does not exist: {resolved}", param=param)
    if not resolved.is_file():
        raise bad_request(f"{param} is not a file: {resolved}", param=param)
    _check_size(resolved.stat().st_size, param)
    return _loaded(resolved.read_bytes())


def _data_url(url: ParseResult, param: str) -> LoadedReference:
    if "," not in (url.path or ""):
        raise bad_request("Invalid data URL format", param=param)
    spec, encoded = url.path.split(",", 1)
    if ";base64" not in spec.lower():
        raise bad_request("Data URL must use base64 encoding", param=param)
    return load_base64_reference(spec.split(";")[0].lstrip("/"), encoded, param=param)


def _file_url(url: ParseResult, policy: MediaPolicy, param: str) -> LoadedReference:
    if policy.allowed_local_media_path is None:
        raise bad_request("Local file loading is disabled.", param=param)
    if url.netloc and url.netloc != "localhost":
        raise bad_request(f"File URL netloc is not supported: {url.netloc}", param=param)
    return _local_file(url2pathname(url.path), policy, param)


def _unsafe_category(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    for category, flag in (
        ("loopback", address.is_loopback),
        ("private", address.is_private),
        ("link-local", address.is_link_local),
        ("reserved", address.is_reserved),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
    ):
        if flag:
            return category
    return None


def _domain_allowed(hostname: str, domain: str) -> bool:
    domain = domain.rstrip(".").lower()
    if domain.startswith("."):
        return hostname == domain[1:] or hostname.endswith(domain)
    return hostname == domain


def _check_remote(url: ParseResult, policy: MediaPolicy, param: str) -> None:
    if not url.hostname:
        raise bad_request("Remote media URL must include a hostname.", param=param)
    hostname = url.hostname.rstrip(".").lower()
    if policy.allowed_media_domains and not any(
        _domain_allowed(hostname, d) for d in policy.allowed_media_domains
    ):
        raise bad_request(f"Domain {url.hostname} is not allowed.", param=param)
    try:
        infos = socket.getaddrinfo(hostname, None)
    except OSError as exc:
        raise bad_request(f"Could not resolve media URL hostname: {hostname}", param=param) from exc
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        category = _unsafe_category(address)
        if category is not None:
            raise bad_request(f"Remote media URL resolves to a {category} address: {address}", param=param)


def _http_url(value: str, url: ParseResult, policy: MediaPolicy, param: str) -> LoadedReference:
    _check_remote(url, policy, param)
    try:
        with urllib.request.urlopen(value, timeout=30) as response:  # noqa: S310 - http(s) only, checked above
            data = response.read(MAX_REFERENCE_AUDIO_BYTES + 1)
            media_type = response.headers.get_content_type() if response.headers.get("content-type") else None
    except urllib.error.HTTPError as exc:
        raise bad_request(f"Media URL returned HTTP {exc.code}: {value}", param=param) from exc
    except TimeoutError as exc:
        raise bad_request(f"Timed out loading media URL: {value}", param=param) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise bad_request(f"Failed to load media URL: {value}", param=param) from exc
    if len(data) > MAX_REFERENCE_AUDIO_BYTES:
        raise bad_request(f"Media URL response exceeds {MAX_REFERENCE_AUDIO_BYTES} bytes.", param=param)
    if media_type is not None and not (
        media_type.startswith("audio/") or media_type == "application/octet-stream"
    ):
        raise bad_request(f"{param} URL must return an audio media type", param=param)
    return _loaded(data)


def load_reference(value: str, policy: MediaPolicy, *, param: str) -> LoadedReference:
    """Load one reference string (path, file://, data: or http(s) URL) or raise the server's 400."""
    url = urlparse(value)
    if url.scheme and url.scheme not in {"http", "https", "data", "file"}:
        raise bad_request(f"{param} must be an http, https, data, file:// URL, or local path", param=param)
    if url.scheme in {"http", "https"}:
        return _http_url(value, url, policy, param)
    if url.scheme == "data":
        return _data_url(url, param)
    if url.scheme == "file":
        return _file_url(url, policy, param)
    return _local_file(value, policy, param)
