"""Shelf tab: the finished books (cover, title, narrator, length, their files as download links:
m4b, MP3 zip, everything in one zip, read-along EPUB, subtitles; ``ui/downloads.py``) and a
whole-book player with chapter navigation and speed, which remembers where each book was left.

The books come from :func:`omni_web.deliver.shelf.shelf_books` (the library layout's folders).
The player is the browser's own audio element on the book's m4b, served from the output folder;
its position and speed per book live in the browser's localStorage, so a reload, or the next
visit from the same phone, goes on where the listener stopped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.deliver.shelf import ShelfBook, shelf_books
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.downloads import file_url, shelf_links_html
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import callout, duration_str, esc

__all__ = ["ShelfRefs", "build", "shelf_html"]

_SPEEDS = (0.75, 1.0, 1.25, 1.5, 1.75, 2.0)

# One player for the shelf: a book's button loads its m4b and chapters; the position (every few
# seconds, and on pause) and the speed are kept per book in localStorage.
_JS = """
const store = (id, key) => `omni-web:${id}:${key}`;
let saving = 0;
function chapterAt(book, t) {
  let found = 0;
  book.chapters.forEach((c, i) => { if (c.start <= t + 0.01) { found = i; } });
  return found;
}
function mark(player, book) {
  const audio = player.querySelector('audio');
  const current = chapterAt(book, audio.currentTime);
  player.querySelectorAll('[data-chapter]').forEach((b) => b.classList.toggle('ow-current', Number(b.dataset.chapter) === current));
  player.querySelector('.ow-shelf-now').textContent = book.chapters.length ? book.chapters[current].title : '';
}
function open(book) {
  // One thing plays at a time: the Jobs tab's chapter bar stops and goes.
  const bar = document.getElementById('ow-nowplaying');
  if (bar) { bar.querySelector('audio').pause(); bar.hidden = true; document.body.style.paddingBottom = ''; }
  const player = element.querySelector('.ow-shelf-player');
  player.hidden = false;
  player.dataset.book = book.id;
  player.querySelector('.ow-shelf-title').textContent = book.title;
  const list = player.querySelector('.ow-shelf-chapters');
  list.innerHTML = '';
  book.chapters.forEach((c, i) => {
    const b = document.createElement('button');
    b.dataset.chapter = String(i); b.textContent = c.title; b.className = 'ow-shelf-chapter';
    list.appendChild(b);
  });
  const audio = player.querySelector('audio');
  audio.src = book.src;
  const rate = parseFloat(localStorage.getItem(store(book.id, 'rate')) || '1');
  player.querySelector('select').value = String(rate);
  audio.onloadedmetadata = () => {
    // The speed picked now, not at open: a pick made before the metadata came must not be undone.
    audio.playbackRate = parseFloat(player.querySelector('select').value) || rate;
    audio.currentTime = parseFloat(localStorage.getItem(store(book.id, 'position')) || '0');
    mark(player, book);
  };
  audio.ontimeupdate = () => {
    mark(player, book);
    const now = Date.now();
    if (now - saving > 2000) { saving = now; localStorage.setItem(store(book.id, 'position'), String(audio.currentTime)); }
  };
  audio.onpause = () => localStorage.setItem(store(book.id, 'position'), String(audio.currentTime));
  player._book = book;
  player.scrollIntoView({block: 'nearest'});
}
element.addEventListener('click', (event) => {
  const opener = event.target.closest('[data-shelf-play]');
  if (opener) { open(JSON.parse(opener.dataset.shelfPlay)); return; }
  const player = element.querySelector('.ow-shelf-player');
  const book = player && player._book;
  if (!book) { return; }
  const audio = player.querySelector('audio');
  const chapter = event.target.closest('[data-chapter]');
  const step = event.target.closest('[data-step]');
  let target = null;
  if (chapter) { target = Number(chapter.dataset.chapter); }
  if (step) { target = Math.min(book.chapters.length - 1, Math.max(0, chapterAt(book, audio.currentTime) + Number(step.dataset.step))); }
  if (target !== null && book.chapters[target]) {
    audio.currentTime = book.chapters[target].start + 0.001;
    localStorage.setItem(store(book.id, 'position'), String(audio.currentTime));
    audio.play().catch(() => {});
    mark(player, book);
  }
});
element.addEventListener('change', (event) => {
  if (!event.target.matches('.ow-shelf-speed')) { return; }
  const player = element.querySelector('.ow-shelf-player');
  const rate = parseFloat(event.target.value);
  player.querySelector('audio').playbackRate = rate;
  if (player._book) { localStorage.setItem(store(player._book.id, 'rate'), String(rate)); }
});
"""


@dataclass(frozen=True, slots=True)
class ShelfRefs:
    """The Shelf tab's components."""

    books: gr.HTML
    refresh: gr.Button
    on_load: OnLoad | None = field(default=None)


def _card(book: ShelfBook) -> str:
    meta = book.metadata
    chapters = [
        {"title": str(c.get("title") or f"Chapter {n + 1}"), "start": float(c.get("start") or 0)}
        for n, c in enumerate(meta.get("chapters") or [])
    ]
    length = max((float(c.get("end") or 0) for c in meta.get("chapters") or []), default=0.0)
    narrator = ", ".join(meta.get("narrators") or []) or "narrator unknown"
    play = json.dumps({"id": book.id, "title": book.title, "src": file_url(book.audio), "chapters": chapters})
    cover = (
        f'<img class="ow-shelf-cover" alt="" src="{esc(file_url(book.cover))}">'
        if book.cover is not None
        else '<div class="ow-shelf-cover ow-shelf-nocover"></div>'
    )
    links = shelf_links_html(book)
    return (
        f'<div class="ow-shelf-book" data-book="{esc(book.id)}">{cover}<div class="ow-shelf-facts">'
        f'<div class="ow-shelf-name">{esc(book.title)}</div>'
        f'<div class="ow-dim">{esc(", ".join(meta.get("authors") or []))}</div>'
        f'<div class="ow-dim">Read by {esc(narrator)} · {esc(duration_str(length))} · {len(chapters)} '
        "chapters"
        f'</div><div class="ow-shelf-files">{links}</div>'
        f'<button class="ow-shelf-open" data-shelf-play="{esc(play)}">▶ Play</button></div></div>'
    )


def shelf_html(books: list[ShelfBook]) -> str:
    """Every finished book as a card, and the (hidden until a book is opened) player."""
    if not books:
        return callout("No finished book yet. A book appears here when its job is done.")
    speeds = "".join(f'<option value="{s:g}">{s:g}×</option>' for s in _SPEEDS)
    player = (
        '<div class="ow-shelf-player" hidden><div class="ow-shelf-title"></div>'
        '<div class="ow-shelf-now ow-dim"></div><audio controls preload="metadata"></audio>'
        '<div class="ow-shelf-controls"><button data-step="-1" aria-label="Previous chapter">‹ '
        "Previous</button>"
        '<button data-step="1" aria-label="Next chapter">Next ›</button>'
        f'<label>Speed <select class="ow-shelf-speed">{speeds}</select></label></div>'
        '<div class="ow-shelf-chapters ow-scroll"></div></div>'
    )
    return player + '<div class="ow-shelf">' + "".join(_card(book) for book in books) + "</div>"


_CSS = """
.ow-shelf { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px; }
.ow-shelf-book { display: flex; gap: 12px; padding: 10px; border: 1px solid var(--border-color-primary);
  border-radius: 10px; background: var(--block-background-fill); }
.ow-shelf-cover { width: 84px; height: 120px; object-fit: cover; border-radius: 4px; flex: none; }
.ow-shelf-nocover { background: linear-gradient(135deg, #c7d2fe, #e0e7ff); }
.ow-shelf-name { font-weight: 700; }
.ow-shelf-files { margin: 4px 0; font-size: 0.9em; }
.ow-shelf-files .ow-download { padding: 4px 10px; margin: 2px 0; }
.ow-shelf-open, .ow-shelf-controls button, .ow-shelf-chapter { border: 1px solid var(--border-color-primary);
  border-radius: 8px; padding: 4px 10px; background: var(--button-secondary-background-fill); cursor: pointer; }
.ow-shelf-player { position: sticky; top: 0; z-index: 5; padding: 10px; margin-bottom: 12px; border-radius: 10px;
  background: var(--background-fill-primary); border: 1px solid var(--border-color-primary); }
.ow-shelf-player[hidden] { display: none; }
.ow-shelf-player audio { width: 100%; }
.ow-shelf-title { font-weight: 700; }
.ow-shelf-controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0; }
.ow-shelf-chapters { display: flex; flex-direction: column; max-height: 200px; gap: 2px; padding: 4px; }
.ow-shelf-chapter { text-align: left; }
.ow-shelf-chapter.ow-current { background: var(--button-primary-background-fill); color: var(--button-primary-text-color); }
"""


def build(ctx: UiContext, tab: gr.Tab | None = None) -> ShelfRefs:
    """Create the Shelf tab's components and wire them (inside ``tab``, which re-renders on opening)."""
    refresh = gr.Button("Refresh", size="sm", elem_id="shelf-refresh", scale=0)
    books = gr.HTML(elem_id="shelf-books", padding=False, js_on_load=_JS, css_template=_CSS)
    shown = gr.State("")
    refs = ShelfRefs(books, refresh)

    def render(before: str | None = None) -> tuple[Any, str]:
        html = shelf_html(shelf_books(Path(ctx.settings.output_path(ctx.paths))))
        # The same shelf is not sent again: a book playing in the player keeps playing.
        return (gr.skip() if html == before else html), html

    refresh.click(guarded(render), [shown], [books, shown], api_name="shelf")
    if tab is not None:
        tab.select(guarded(render), [shown], [books, shown], api_visibility="private", show_progress="hidden")
    return replace(refs, on_load=OnLoad(guarded(render), [], [books, shown]))
