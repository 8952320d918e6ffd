"""LAN URLs for the start-up banner, from interface data only."""

from __future__ import annotations

import json

from omni_web.lan import lan_ipv4_addresses, parse_ip_addr_json, ui_urls

IP_JSON = json.dumps([
    {"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1"}]},
    {"ifname": "eth0", "addr_info": [{"family": "inet", "local": "192.168.1.20"},
                                     {"family": "inet6", "local": "fe80::1"}]},
    {"ifname": "wg0", "addr_info": [{"family": "inet", "local": "100.64.0.3"}]},
    {"ifname": "ll", "addr_info": [{"family": "inet", "local": "169.254.3.4"}]},
])


def test_parse_ip_addr_json_reads_ipv4_only():
    assert parse_ip_addr_json(IP_JSON) == ["127.0.0.1", "192.168.1.20", "100.64.0.3", "169.254.3.4"]
    assert parse_ip_addr_json("not json") == []
    assert parse_ip_addr_json("") == []


def test_lan_addresses_skip_loopback_and_link_local_and_put_private_first():
    found = lan_ipv4_addresses(["100.64.0.3", *parse_ip_addr_json(IP_JSON), "192.168.1.20"])
    assert found == ["192.168.1.20", "100.64.0.3"]


def test_wildcard_bind_lists_lan_urls_then_loopback():
    urls = ui_urls("0.0.0.0", 7860, addresses=["192.168.1.20", "127.0.0.1"])
    assert urls == ["http://192.168.1.20:7860", "http://127.0.0.1:7860"]


def test_specific_host_is_the_one_url():
    assert ui_urls("192.168.1.20", 8000, addresses=["10.0.0.1"]) == ["http://192.168.1.20:8000"]
    assert ui_urls("::1", 8000) == ["http://[::1]:8000"]


def test_real_machine_gives_at_least_loopback():
    urls = ui_urls("0.0.0.0", 7860)
    assert urls[-1] == "http://127.0.0.1:7860"
    assert all(url.startswith("http://") and url.endswith(":7860") for url in urls)
