"""The URLs a browser on the LAN can open the web UI at, found without contacting anything.

Addresses come from the interfaces themselves (``ip -j -4 addr``, iproute2's JSON output) and
from resolving this machine's own host name; no packet leaves the machine. Loopback and
link-local addresses are left out of the LAN list, because another machine cannot use them.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess
from collections.abc import Iterable

__all__ = ["interface_ipv4_addresses", "lan_ipv4_addresses", "parse_ip_addr_json", "ui_urls"]

_IP_TIMEOUT_S = 5.0


def parse_ip_addr_json(text: str) -> list[str]:
    """The IPv4 addresses in ``ip -j -4 addr`` output ([] for anything unreadable)."""
    try:
        links = json.loads(text or "[]")
    except ValueError:
        return []
    found = []
    for link in links if isinstance(links, list) else []:
        for info in link.get("addr_info", ()) if isinstance(link, dict) else ():
            if isinstance(info, dict) and info.get("family") == "inet" and info.get("local"):
                found.append(str(info["local"]))
    return found


def interface_ipv4_addresses() -> list[str]:
    """IPv4 addresses of the interfaces that are up, from ``ip -j -4 addr`` ([] without iproute2)."""
    ip = shutil.which("ip")
    if ip is None:
        return []
    try:
        done = subprocess.run(  # noqa: S603 - argv list, no shell
            [ip, "-j", "-4", "addr", "show", "up"],
            capture_output=True, text=True, timeout=_IP_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_ip_addr_json(done.stdout) if done.returncode == 0 else []


def _hostname_addresses() -> list[str]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def _usable_on_lan(address: str) -> bool:
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def lan_ipv4_addresses(candidates: Iterable[str] | None = None) -> list[str]:
    """This machine's IPv4 addresses another machine can reach, deduplicated, private ones first."""
    if candidates is None:
        candidates = [*interface_ipv4_addresses(), *_hostname_addresses()]
    unique = [address for address in dict.fromkeys(candidates) if _usable_on_lan(address)]
    return sorted(unique, key=lambda address: not ipaddress.IPv4Address(address).is_private)


def ui_urls(host: str, port: int, *, addresses: Iterable[str] | None = None) -> list[str]:
    """The URLs to print for a UI bound to ``host``: LAN addresses first, then this machine's own.

    A wildcard bind (``0.0.0.0``, ``::``, ``""``) lists every LAN address plus
    ``http://127.0.0.1:PORT``; a specific host gives just that one URL.
    """
    host = host.strip()
    if host not in ("", "0.0.0.0", "::"):
        shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return [f"http://{shown}:{port}"]
    lan = lan_ipv4_addresses(addresses)
    return [*(f"http://{address}:{port}" for address in lan), f"http://127.0.0.1:{port}"]
