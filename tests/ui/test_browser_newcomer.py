"""The web UI as a newcomer meets it, in Debian's chromium through ``webapp.py`` (issue 14):
two voices of one book keep two books and a twin request opens the first job; an RGBA cover
shows white, not black; a 138-chapter job keeps its actions in view at 1400x1000, shows every
phase, notifies when it ends, and resumes from its cached chunks; an empty install opens on a
checklist that leads to Setup. Screenshots go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from PIL import Image, ImageDraw

from omni_web.paths import DataPaths
from omni_web.settings import load_settings
from tests.epub_builder import make_epub, nav_xhtml, xhtml
from tests.fakes.sgl_omni import free_port
from tests.ui.browser_kit import (
    ARTIFACTS,
    LONG_S,
    VIEWPORT,
    expect,
    job_badge,
    serve_webapp,
    shot,
    tab,
)
from tests.ui.helpers import AppProcess, start_webapp

pytestmark = pytest.mark.browser

# Slow enough that the long book (138 one-chunk chapters, ~17 s on 8 slots) is still rendering when a
# busy machine gets to its Cancel, fast enough for CI.
FAKE_ENV = {"FAKE_SGL_LATENCY_S": "1.0", "FAKE_SGL_SLOTS": "8"}


def _rgba_cover() -> bytes:
    """Black title bar on a transparent page: the cover that used to show as a black box."""
    image = Image.new("RGBA", (400, 600), (0, 0, 0, 0))
    ImageDraw.Draw(image).rectangle((40, 40, 360, 120), fill=(0, 0, 0, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _book(path: Path, *, title: str, chapters: int, cover: bytes | None = None) -> Path:
    documents = [(f"c{n:03d}.xhtml", xhtml(f"<h1>Chapter {n}</h1><p>This is chapter number {n} of the long "
                                           f"book. It has a few short sentences. That is all it says.</p>"))
                 for n in range(1, chapters + 1)]
    nav = nav_xhtml([(name, f"Chapter {n}") for n, (name, _) in enumerate(documents, start=1)])
    extra = {"OEBPS/cover.png": cover} if cover else None
    manifest = (
        '<item id="cover" href="cover.png" media-type="image/png" properties="cover-image"/>' if cover else ""
    )
    return make_epub(
        path,
        documents,
        nav=nav,
        title=title,
        author="Test Writer",
        extra_files=extra,
        extra_manifest=manifest,
    )


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("books")
    return {
        "short": _book(root / "short.epub", title="Two Voices", chapters=3),
        "cover": _book(root / "cover.epub", title="Clear Cover", chapters=1, cover=_rgba_cover()),
        "long": _book(root / "long.epub", title="Long Book", chapters=138),
        "numbered": _numbered_book(root / "numbered.epub"),
    }


def _numbered_book(path: Path) -> Path:
    """Chapter titles that carry their own numbers, as Moby-Dick's do."""
    titles = ["1. Loomings", "2. The Carpet-Bag"]
    documents = [
        (f"c{n}.xhtml", xhtml(f"<h1>{t}</h1><p>Call me Ishmael. Some years ago I went to sea.</p>"))
        for n, t in enumerate(titles, start=1)
    ]
    nav = nav_xhtml([(name, t) for (name, _), t in zip(documents, titles, strict=True)])
    return make_epub(path, documents, nav=nav, title="Numbered Titles", author="Test Writer")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "newcomer-app", FAKE_ENV)


def _upload(page, book: Path, title: str) -> None:
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(book))
    expect(page.locator("#gen-book")).to_contain_text(title, timeout=60_000)


def _pick_voice(page, name: str) -> None:
    page.locator("#gen-voice input").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(page.locator("#gen-voice input")).to_have_value(name)


def _generate_and_follow(page) -> None:
    page.locator("#gen-generate").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute(
        "aria-selected", "true", timeout=60_000
    )


def _served(link) -> Path:
    """The file a download link serves from the output folder."""
    return Path(unquote(link.get_attribute("href").removeprefix("gradio_api/file="))).resolve()


def _in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"]


def test_two_voices_keep_two_books_and_a_twin_opens_the_first(page, app, books):
    outputs = Path(
        load_settings(DataPaths(Path(app.log_path.parent / "home"))).output_path(
            DataPaths(app.log_path.parent / "home")
        )
    )
    names = []
    _upload(page, books["short"], "Two Voices")
    for voice in ("Vivian", "Ryan"):
        tab(page, "Generate")  # the book stays loaded
        _pick_voice(page, voice)
        _generate_and_follow(page)
        # The tab shows the new job once it has its own file (the voice is in its name).
        # Library layout: one folder per narrator version, 'Two Voices {Vivian - <model>}/Two Voices.m4b'.
        expect(page.locator("#jobs-downloads")).to_contain_text(f"{{{voice} - ", timeout=LONG_S * 1000)
        expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 1000)
        link = page.locator("#jobs-download")
        expect(link).to_have_text("⬇ Two Voices.m4b", timeout=30_000)  # the file's name, not its server path
        names.append(_served(link))
    assert (
        names[0] != names[1] and "{Vivian - " in names[0].parent.name and "{Ryan - " in names[1].parent.name
    )
    on_disk = sorted(p.resolve() for p in outputs.rglob("*.m4b") if ".parts" not in p.parts)
    assert names[0] in on_disk and names[1] in on_disk  # the first book was not overwritten
    shot(page, "jobs-two-voices")

    # The same request once more: the page offers the existing job instead of queueing a twin.
    tab(page, "Generate")
    _pick_voice(page, "Ryan")
    page.locator("#gen-generate").click()
    confirm = page.locator("#gen-confirm")
    expect(confirm).to_be_visible(timeout=30_000)
    expect(confirm).to_contain_text("already exists")
    shot(page, "generate-twin-request")
    page.locator("#gen-confirm-open").click()
    expect(page.get_by_role("tab", name="Jobs", exact=True)).to_have_attribute("aria-selected", "true")
    # The page names the book by its place in the output folder, never by its server path.
    expect(page.locator("#jobs-downloads")).to_contain_text(str(names[1].relative_to(outputs.resolve())))


def test_an_rgba_cover_is_not_black(page, books, tmp_path):
    _upload(page, books["cover"], "Clear Cover")
    image = page.locator("#gen-cover img")
    expect(image).to_be_visible(timeout=30_000)
    picture = tmp_path / "cover.png"
    image.screenshot(path=str(picture))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot_copy = ARTIFACTS / "generate-rgba-cover.png"
    shot_copy.write_bytes(picture.read_bytes())
    cover = Image.open(picture).convert("RGB")
    width, height = cover.size
    page_pixel = cover.getpixel((width // 2, int(height * 0.7)))  # transparent in the PNG
    bar_pixel = cover.getpixel((width // 2, int(height * 80 / 600)))  # the black title bar
    assert min(page_pixel) >= 230, page_pixel
    assert max(bar_pixel) <= 60, bar_pixel


def test_a_long_book_keeps_its_actions_in_view_and_reports_every_phase(page, books):
    _upload(page, books["long"], "Long Book")
    page.get_by_role("button", name="All", exact=True).click()
    _generate_and_follow(page)
    expect(job_badge(page)).to_have_text("running", timeout=LONG_S * 1000)
    detail = page.locator("#jobs-detail")
    expect(detail.locator("[data-phase=rendering]")).to_contain_text("chunks", timeout=LONG_S * 1000)
    expect(detail.locator("[data-phase=chapters]")).to_be_visible()
    expect(detail.locator("[data-phase=book]")).to_contain_text("Encoding the m4b")
    expect(page.locator("#jobs-chapters [data-play]").first).to_be_visible(timeout=LONG_S * 1000)
    page.evaluate("window.scrollTo(0, 0)")
    assert _in_view(page, "#jobs-cancel"), page.locator("#jobs-cancel").bounding_box()
    assert page.locator("#jobs-chapters tbody tr").count() == 138
    shot(page, "jobs-138-chapters-running")

    # Cancel, then resume: the first progress after the resume starts from the cached chunks.
    page.locator("#jobs-cancel").click()
    expect(job_badge(page)).to_have_text("cancelled", timeout=LONG_S * 1000)
    # No live "48 in flight" line once it stopped (the run's summary, "up to 16 requests in flight", stays).
    expect(detail).not_to_contain_text(re.compile(r"\b\d+ in flight"))
    cancelled_at = int(re.search(r"Cancelled at ([\d,]+)/", detail.inner_text()).group(1).replace(",", ""))
    assert cancelled_at > 0
    ready_at_cancel = page.locator("#jobs-chapters [data-play]").count()
    assert ready_at_cancel > 0
    page.evaluate("""() => {
      window.__renderTexts = [];
      window.__playable = [];
      const box = document.querySelector('#jobs-detail');
      new MutationObserver(() => {
        const bar = box.querySelector('[data-phase=rendering] .ow-bar-text');
        if (bar) { window.__renderTexts.push(bar.textContent); }
      }).observe(box, {subtree: true, childList: true, characterData: true});
      const table = document.querySelector('#jobs-chapters');
      new MutationObserver(() => {
        if (table.querySelectorAll('tbody tr').length) {  // a table being replaced has no rows yet
          window.__playable.push(table.querySelectorAll('[data-play]').length);
        }
      }).observe(table, {subtree: true, childList: true});
    }""")
    assert _in_view(page, "#jobs-resume")
    page.locator("#jobs-resume").click()
    expect(job_badge(page)).to_have_text("done", timeout=LONG_S * 1000)
    seen = page.evaluate("window.__renderTexts")
    counts = [int(m.group(1).replace(",", "")) for text in seen if (m := re.match(r"([\d,]+)/", text))]
    assert counts and min(counts) >= cancelled_at, (cancelled_at, seen[:5])
    # Finished chapters stay playable through the resume: none goes back to pending on the way.
    playable = page.evaluate("window.__playable")
    assert playable and min(playable) >= ready_at_cancel, (ready_at_cancel, playable[:10])

    # Done: every phase full, the whole job's time, a toast and the tab title say so.
    for phase in ("rendering", "chapters", "book"):
        expect(detail.locator(f"[data-phase={phase}]")).to_contain_text("done")
    expect(page.locator(".toast-body").filter(has_text="Finished: Long Book").first).to_be_visible(
        timeout=30_000
    )
    expect(page).to_have_title(re.compile(r"^✓ Long Book done"), timeout=30_000)
    page.evaluate("window.scrollTo(0, 0)")
    for action in ("#jobs-download", "#jobs-delete", "#jobs-rerun"):
        assert _in_view(page, action), (action, page.locator(action).bounding_box())
    shot(page, "jobs-138-chapters-done")

    # Delete asks first, then the job and its book are gone.
    book = _served(page.locator("#jobs-download"))
    page.locator("#jobs-delete").click()
    dialog = page.locator("#jobs-confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Long Book")
    shot(page, "jobs-delete-confirm")
    page.locator("#jobs-confirm-delete").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#jobs-table")).not_to_contain_text("Long Book", timeout=30_000)
    assert not book.exists()


def test_an_empty_install_opens_on_a_checklist_that_leads_to_setup(browser, tmp_path):
    paths = DataPaths(tmp_path / "empty").ensure()
    (tmp_path / "hf-empty").mkdir()
    env = {"HF_HUB_CACHE": str(tmp_path / "hf-empty"), "OMNI_WEB_AUTH": "reader:pw-123"}
    app = start_webapp(paths, port=free_port(), env=env, log_path=tmp_path / "empty.log")
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(app.url)
        page.locator("input[type=text]").fill("reader")
        page.locator("input[type=password]").fill("pw-123")
        page.get_by_role("button", name="Login").click()
        checklist = page.locator("#gen-firstrun")
        expect(checklist).to_be_visible(timeout=60_000)
        for step in ("Install the SGLang-Omni backend", "Download a model", "Start the server"):
            expect(checklist).to_contain_text(step)
        shot(page, "generate-first-run")
        page.locator("#gen-firstrun-setup").click()
        expect(page.get_by_role("tab", name="Setup", exact=True)).to_have_attribute("aria-selected", "true")
        tab(page, "Generate")
        page.locator("#gen-firstrun-models").click()
        expect(page.get_by_role("tab", name="Models", exact=True)).to_have_attribute("aria-selected", "true")
    finally:
        context.close()
        app.stop()


def test_generate_keeps_its_actions_in_view_with_the_voice_sections_open(page, books):
    _upload(page, books["long"], "Long Book")
    page.locator("#gen-add-clip").get_by_text("Add a reference clip").click()
    page.locator("#gen-server-voices").get_by_text("Voices on the server").click()
    expect(page.locator("#gen-clip-add")).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    for action in ("#gen-generate", "#gen-preview"):
        assert _in_view(page, action), (action, page.locator(action).bounding_box())
    # The two columns are balanced: neither runs more than a screen past the other.
    left = page.locator("#gen-library").bounding_box()
    right = page.locator("#gen-server-voices").bounding_box()
    assert abs((left["y"] + left["height"]) - (right["y"] + right["height"])) < 500, (left, right)
    shot(page, "generate-voice-sections-open")


def test_bad_uploads_are_named_and_told_once(page, tmp_path):
    tab(page, "Generate")
    broken = tmp_path / "notreally.epub"
    broken.write_text("just some text")
    page.locator("#gen-epub input[type=file]").set_input_files(str(broken))
    notice = page.locator("#gen-book")  # under the box, where the book would show
    expect(notice).to_contain_text("notreally.epub", timeout=60_000)
    assert not re.search(r"[0-9a-f]{16}-notreally", notice.inner_text())
    _said_once(page, "notreally.epub")  # no toast or status line repeating it
    expect(page.locator("#gen-epub input[type=file]")).to_have_count(1)  # the box is empty again
    _no_error_pills(page)
    shot(page, "generate-bad-upload")
    pdf = tmp_path / "Moby Dick.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    page.locator("#gen-epub input[type=file]").set_input_files(str(pdf))
    expect(notice).to_contain_text("Moby Dick.pdf", timeout=60_000)
    expect(notice).to_contain_text("damaged PDF")  # PDFs are read now: a broken one is told as such
    expect(page.get_by_text("Invalid file type")).to_have_count(0)


def _said_once(page, text: str) -> None:
    """``text`` shows exactly once on the page (toasts included), whatever else is there."""
    count = page.evaluate("t => document.body.innerText.split(t).length - 1", text)
    assert count == 1, f"{text!r} shows {count} times"


def _no_error_pills(page) -> None:
    """No red "Error" overlay on any component (the error is said once, in its toast or line)."""
    pills = page.locator('[data-testid="status-tracker"]:has(> .error)')
    for index in range(pills.count()):
        expect(pills.nth(index)).to_be_hidden()


def test_an_error_is_said_once_in_words_without_red_pills(page, tmp_path):
    tab(page, "Generate")
    page.locator("#gen-generate").click()  # no book yet
    toast = page.locator(".toast-body").filter(has_text="Upload a book first")
    expect(toast).to_have_count(1, timeout=60_000)
    _said_once(page, "Upload a book first")
    _no_error_pills(page)
    assert not re.search(
        r"[a-z0-9]+_[a-z0-9_]+|Error:|Exception", toast.inner_text()
    )  # no keys, no class names
    shot(page, "generate-error-once")


def test_numbered_titles_are_numbered_once_and_a_refused_preview_toasts_once(page, books):
    _upload(page, books["numbered"], "Numbered Titles")
    labels = page.locator("#gen-chapters label").all_inner_texts()
    assert any(label.strip().startswith("1. Loomings") for label in labels), labels
    assert not any(re.search(r"\b1\. +1\.|\b2\. +2\.", label) for label in labels), labels
    page.get_by_role("button", name="None", exact=True).first.click()
    expect(page.locator("#gen-chapters input[type=checkbox]:checked")).to_have_count(0)
    for button in ("#gen-preview", "#gen-generate"):
        page.locator(button).click()
        toast = page.locator(".toast-body").filter(has_text="No chapter is selected")
        expect(toast).to_have_count(1, timeout=60_000)
        page.wait_for_timeout(1500)  # a second toast of the same refusal would show by now
        _said_once(page, "No chapter is selected")
        _no_error_pills(page)
        shot(page, f"generate-refused-{button[5:]}")
        page.locator(".toast-close").first.click()
        expect(toast).to_have_count(0)


def test_a_queued_job_cancelled_is_told_once(page, books):
    tab(page, "Queue")
    page.locator("#queue-pause-all").click()  # the job stays queued until it is cancelled
    expect(page.locator("#queue-status")).to_contain_text("Queue paused")
    try:
        _upload(page, books["numbered"], "Numbered Titles")
        _pick_voice(page, "Ryan")  # not the earlier tests' request: no twin question
        _generate_and_follow(page)
        expect(job_badge(page)).to_contain_text("queued")
        page.locator("#jobs-cancel").click()
        expect(job_badge(page)).to_contain_text("cancelled")
        page.wait_for_timeout(7000)  # two ticks of the notifier, which announces a cancelled job
        toasts = page.locator(".toast-body").all_inner_texts()
        # The job is cancelled at once: no "stops after the chunks in flight" besides "Cancelled".
        assert not any("Cancel requested" in t for t in toasts), toasts
        assert len([t for t in toasts if "Cancel" in t]) <= 1, toasts
        shot(page, "jobs-queued-cancelled")
    finally:
        tab(page, "Queue")
        page.locator("#queue-resume-all").click()
        expect(page.locator("#queue-status")).not_to_contain_text("Queue paused")


def test_logs_follow_and_settings_show_the_real_port(page, app):
    tab(page, "Server")
    log = page.locator("#server-boot-log textarea")
    expect(log).not_to_have_value("", timeout=60_000)
    expect(log).to_have_value(re.compile(r"request lines? hidden"), timeout=30_000)  # jobs ran before
    assert "/v1/audio/speech HTTP" not in log.input_value()
    page.wait_for_function(
        "() => { const b = document.querySelector('#server-boot-log textarea');"
        " return b && b.scrollHeight > b.clientHeight && b.scrollTop + b.clientHeight >= b.scrollHeight - 8; "
        "}",
        timeout=30_000,
    )
    shot(page, "server-boot-log-at-end")
    tab(page, "Setup")  # the install log is the same kind of box, following its end the same way
    expect(page.locator("#setup-task-log.ow-log")).to_have_count(1)
    tab(page, "Settings")
    port = app.url.rsplit(":", 1)[1]
    expect(page.locator("#settings-web-port-now")).to_contain_text(f"running on port {port}", timeout=30_000)
