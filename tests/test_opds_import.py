"""Import from an OPDS catalog: a local server (basic auth) serving OPDS 1.2 with an OpenSearch
search and OPDS 2 JSON; the chosen book is downloaded and queued with the catalog's authors,
series and description, which reach the book the job renders."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from omni_web.book import load_book
from omni_web.errors import BookError
from omni_web.library import CATALOG_KEY, OpdsClient, Preset, apply_catalog_metadata
from omni_web.services import AppServices
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port

MODEL = "qwen3_tts_0_6b_customvoice"
ATOM = "application/atom+xml;profile=opds-catalog"
ROOT = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Home library</title>
<link rel="search" type="application/opensearchdescription+xml" href="/opds/search.xml"/>
<entry><title>New books</title><link rel="subsection" type="application/atom+xml;profile=opds-catalog;kind=acquisition" href="/opds/new"/></entry>
</feed>"""
NEW = """<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/terms/"><title>New books</title>
<entry><title>Hefty Water</title><author><name>Jane Rivers</name></author><dc:language>en</dc:language>
<category term="Nature" label="Nature"/>
<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">SERIES: Tides [2]<br/>A short book about water.</div></content>
<link rel="http://opds-spec.org/acquisition" type="application/epub+zip" href="/get/hefty.epub"/></entry>
<link rel="next" type="application/atom+xml" href="/opds/new?page=2"/>
</feed>"""
SEARCH_XML = """<?xml version="1.0"?><OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/">
<Url type="application/atom+xml" template="/opds/find?q={searchTerms}"/></OpenSearchDescription>"""
OPDS2 = {
    "metadata": {"title": "Kavita"},
    "links": [{"rel": "search", "href": "/v2/search{?query}", "templated": True}],
    "publications": [
        {
            "metadata": {
                "title": "Hefty Water",
                "author": [{"name": "J. Rivers"}],
                "belongsTo": {"series": [{"name": "Tides", "position": 3}]},
                "description": "JSON description",
                "language": "en",
            },
            "links": [
                {
                    "rel": "http://opds-spec.org/acquisition",
                    "type": "application/epub+zip",
                    "href": "/get/hefty.epub",
                }
            ],
        }
    ],
}


@pytest.fixture
def catalog():
    searched: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"reader:shelf").decode():
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="opds"')
                self.end_headers()
                return
            path = self.path
            if path.startswith("/opds/find"):
                searched.append(path)
            body, kind = {
                "/opds": (ROOT, ATOM),
                "/opds/new": (NEW, ATOM),
                "/opds/search.xml": (SEARCH_XML, "application/xml"),
                "/v2": (json.dumps(OPDS2), "application/opds+json"),
            }.get(path.split("?")[0], (None, ""))
            if path.startswith("/opds/find"):
                body, kind = NEW, ATOM
            if path == "/get/hefty.epub":
                data, kind = (DATA_DIR / "hefty-water.epub").read_bytes(), "application/epub+zip"
            elif body is None:
                self.send_response(404)
                self.end_headers()
                return
            else:
                data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", searched
    server.shutdown()
    server.server_close()


def test_browse_search_and_queue_with_the_catalogs_metadata(catalog, data_paths):
    url, searched = catalog
    with pytest.raises(BookError, match="user and password"):
        OpdsClient(f"{url}/opds").feed()
    client = OpdsClient(f"{url}/opds", username="reader", password="shelf")
    root = client.feed()
    (section,) = root.entries
    assert (
        section.title == "New books" and section.navigation == f"{url}/opds/new" and not section.acquisition
    )
    new = client.feed(section.navigation)
    (book,) = new.entries
    assert (book.title, book.authors, book.series, book.series_index) == (
        "Hefty Water",
        ("Jane Rivers",),
        "Tides",
        "2",
    )
    assert book.acquisition == f"{url}/get/hefty.epub" and new.next == f"{url}/opds/new?page=2"
    assert "A short book about water" in book.description and book.subjects == ("Nature",)
    found = client.search("hefty water", root)
    assert searched == ["/opds/find?q=hefty%20water"] and found.entries[0].title == "Hefty Water"

    services = AppServices.create(data_paths)
    services.library.presets.save(Preset(name="Lib", model_key=MODEL))
    job = services.library.submit_from_catalog(book, client, preset="Lib")
    assert job.params[CATALOG_KEY]["series"] == "Tides" and "state/books" in job.params["book_path"]
    rendered = apply_catalog_metadata(load_book(job.params["book_path"]), job.params[CATALOG_KEY])
    meta = rendered.metadata  # what the runner hands the pipeline (services.make_convert_runner)
    assert (meta.authors, meta.series, meta.series_index) == (("Jane Rivers",), "Tides", "2")
    assert "A short book about water" in meta.description


def test_opds2_json_feed(catalog):
    url, _ = catalog
    feed = OpdsClient(f"{url}/v2", username="reader", password="shelf").feed()
    (book,) = feed.entries
    assert (book.title, book.authors, book.series, book.series_index) == (
        "Hefty Water",
        ("J. Rivers",),
        "Tides",
        "3",
    )
    assert (
        book.acquisition == f"{url}/get/hefty.epub"
        and feed.search == f"{url}/v2/search?query={{searchTerms}}"
    )
