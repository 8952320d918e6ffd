"""The read-along EPUB's repairs: a deprecated epub:switch becomes its fallback, a nav gets a title."""

from __future__ import annotations

from lxml import etree

from omni_web.readalong.tidy import ensure_head_title, unwrap_switches

XHTML = (
    '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head/><body>'
    '<p>Before</p><epub:switch><epub:case required-namespace="urn:x"><x xmlns="urn:x">chem</x></epub:case>'
    "<epub:default>lead <b>H2O</b> water</epub:default></epub:switch> after<p>End</p></body></html>"
)


def test_a_switch_becomes_its_default_content_in_place() -> None:
    root = etree.fromstring(XHTML)
    assert unwrap_switches(root) and not unwrap_switches(root)
    body = root.find("{http://www.w3.org/1999/xhtml}body")
    assert "".join(body.itertext()) == "Beforelead H2O water afterEnd"
    assert ensure_head_title(root, "Hefty Water") and not ensure_head_title(root, "again")
    assert (
        root.findtext("{http://www.w3.org/1999/xhtml}head/{http://www.w3.org/1999/xhtml}title")
        == "Hefty Water"
    )
