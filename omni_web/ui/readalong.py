"""Jobs tab: the read-along player. The chapter's text with the sentence being read highlighted as
its audio plays; a click on a sentence seeks there.

Chapters appear as soon as their timings exist, so a chapter can be followed while later ones still
render. The page gets the chapter number only; the audio URL is built here from the path the job
reports, and only for files inside the app's output folder (Gradio serves them behind the login).
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gradio as gr

from omni_web.jobs import Job, JobState
from omni_web.pipeline import ConvertProgress, ConvertResult
from omni_web.pipeline.readalong import READALONG_SUFFIX
from omni_web.readalong import ChapterTimings, load_timings, timings_path
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import callout, esc

__all__ = [
    "ReadalongRefs",
    "attach",
    "player_html",
    "readalong_chapters",
    "readalong_downloads",
    "subtitles_html",
]

# Follows the audio element inside the component: highlight the sentence whose start is the last
# one passed (binary search over data-start), keep it in view, and seek on a click.
_JS = """
const spans = () => element.querySelectorAll('.ra-s');
function follow(audio) {
  const all = spans(); const t = audio.currentTime;
  let lo = 0, hi = all.length - 1, found = -1;
  while (lo <= hi) { const mid = (lo + hi) >> 1;
    if (parseFloat(all[mid].dataset.start) <= t) { found = mid; lo = mid + 1; } else { hi = mid - 1; } }
  const current = element.querySelector('.ra-active');
  if (current && current === all[found]) return;
  if (current) current.classList.remove('ra-active');
  element.dataset.current = String(found);
  if (found >= 0) { all[found].classList.add('ra-active'); all[found].scrollIntoView({block: 'nearest'}); }
}
for (const kind of ['timeupdate', 'seeked', 'play']) {
  element.addEventListener(kind, (event) => { if (event.target.tagName === 'AUDIO') follow(event.target); }, true);
}
element.addEventListener('click', (event) => {
  const sentence = event.target.closest('.ra-s'); const audio = element.querySelector('audio');
  if (!sentence || !audio) return;
  audio.currentTime = parseFloat(sentence.dataset.start) + 0.001;
  audio.play().catch(() => follow(audio));
});
"""
_CSS = """
.ra-text { max-height: 28rem; overflow-y: auto; line-height: 1.7; padding: .5rem .75rem; }
.ra-s { cursor: pointer; border-radius: 3px; }
.ra-s:hover { background: rgba(127, 127, 127, .15); }
.ra-s.ra-active { background: #ffe58a; color: #111; }
.ra-player audio { width: 100%; }
"""


@dataclass(frozen=True, slots=True)
class ReadalongRefs:
    """The player's components."""

    chapter: gr.Dropdown
    view: gr.HTML
    epub: gr.DownloadButton
    subtitles: gr.HTML
    shown: gr.State


def readalong_chapters(job: Job) -> list[tuple[str, str]]:
    """``(label, chapter number)`` of the job's chapters whose audio and timings are on disk."""
    found = []
    for row in ConvertProgress.from_dict(job.progress).chapters:
        if row.ready and row.audio_path is not None and timings_path(row.audio_path).is_file():
            found.append((f"{row.number}. {row.title}", str(row.number)))
    return found


def readalong_downloads(job: Job) -> tuple[str | None, list[str]]:
    """The finished job's read-along EPUB and its subtitle files (only files that exist)."""
    if job.state is not JobState.DONE or not job.result:
        return None, []
    result = ConvertResult.from_dict(job.result)
    epub = result.readalong_epub
    if epub is None or not Path(epub).is_file():
        return None, []
    # Beside the book, only this job's subtitles (named like its EPUB); its MP3 folder is its own.
    own = Path(epub).name.removesuffix(READALONG_SUFFIX)
    places = [
        (Path(epub).parent, f"{glob.escape(own)} - *"),
        *([(Path(result.mp3_dir), "*")] if result.mp3_dir else []),
    ]
    found = {
        p
        for folder, pattern in places
        if folder.is_dir()
        for ext in (".vtt", ".srt")
        for p in folder.glob(pattern + ext)
    }
    if not any(p.parent == Path(epub).parent for p in found):  # a job from before the names
        found |= {p for ext in (".vtt", ".srt") for p in Path(epub).parent.glob("*" + ext)}
    return str(epub), sorted(map(str, found), key=lambda p: (not p.endswith(".vtt"), p))


def subtitles_html(epub: str | None, files: list[str]) -> str:
    """The subtitle files as links folded under one line, each named by its chapter, not its book."""
    if not files:
        return ""
    own = Path(epub).name.removesuffix(READALONG_SUFFIX) + " - " if epub else ""
    links = "".join(
        f'<li><a href="{esc(_file_url(Path(path)))}" download>{esc(Path(path).name.removeprefix(own))}'
        "</a></li>"
        for path in files
    )
    return (
        f'<details class="ow-fold"><summary>Subtitles (VTT, SRT) · {len(files)} files</summary>'
        f'<ul class="ow-scroll ow-links">{links}</ul></details>'
    )


def _file_url(path: Path) -> str:
    return "/gradio_api/file=" + quote(str(path.resolve()))


def player_html(timings: ChapterTimings, audio_url: str) -> str:
    """The chapter's text, one span per sentence (with its start and end), under an audio player."""
    paragraphs: list[str] = []
    current_chunk, current = None, []
    for sentence in timings.sentences:
        if sentence.chunk_index != current_chunk and current:
            paragraphs.append(" ".join(current))
            current = []
        current_chunk = sentence.chunk_index
        current.append(
            f'<span class="ra-s" data-i="{sentence.index}" data-start="{sentence.start_s:.3f}" '
            f'data-end="{sentence.end_s:.3f}">{esc(sentence.display_text)}</span>'
        )
    if current:
        paragraphs.append(" ".join(current))
    note = (
        '<div class="ow-dim">Times estimated from the text (no speech-recognition model was installed).</div>'
        if timings.estimated
        else ""
    )
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f'<div class="ra-player"><audio controls preload="metadata" src="{esc(audio_url)}"></audio>{note}'
        f'<div class="ra-text">{body}</div></div>'
    )


def _render(ctx: UiContext, job: Job | None, number: str | None) -> str:
    if job is None or not number:
        return callout(
            "Pick a chapter to read along. Chapters appear here as soon as their timings are ready."
        )
    row = next(
        (c for c in ConvertProgress.from_dict(job.progress).chapters if str(c.number) == str(number)), None
    )
    if row is None or not row.ready or row.audio_path is None:
        return callout("That chapter is not ready yet.")
    audio = Path(row.audio_path).resolve()
    output = ctx.settings.output_path(ctx.paths).resolve()
    if not audio.is_relative_to(output) or not audio.is_file():
        return callout(
            "This chapter's audio is outside the app's output folder, so the browser cannot play it "
            "here. Open its files from disk instead.",
            tone="info",
        )
    timings = load_timings(audio)
    if timings is None:
        return callout("The sentence timings of this chapter are still being built.")
    return player_html(timings, _file_url(audio))


def attach(ctx: UiContext, pick: gr.Dropdown, timer: gr.Button) -> ReadalongRefs:
    """Add the player under the Jobs tab's job picker (call inside the tab's layout)."""
    with gr.Accordion("Read along", open=False, elem_id="jobs-readalong"):
        chapter = gr.Dropdown(
            label="Chapter",
            elem_id="ra-chapter",
            interactive=True,
            allow_custom_value=True,
            info="Chapters of a job made with Read-along, as soon as each is aligned.",
        )
        view = gr.HTML(elem_id="ra-view", js_on_load=_JS, css_template=_CSS, padding=False)
        with gr.Row():
            epub = gr.DownloadButton("Download read-along EPUB", visible=False, elem_id="ra-epub")
            subtitles = gr.HTML(elem_id="ra-subtitles", padding=False)
    refs = ReadalongRefs(chapter, view, epub, subtitles, gr.State({}))
    store = ctx.services.library.jobs

    def job_of(job_id: str | None) -> Job | None:
        return next((j for j in store.list() if j.id == job_id), None) if job_id else None

    def refresh(job_id: str | None, number: str | None, shown: dict[str, Any] | None) -> list[Any]:
        # Re-render only what changed, so a playing chapter is never reset by the tick.
        shown = dict(shown or {})
        job = job_of(job_id)
        choices = readalong_chapters(job) if job is not None else []
        files = list(readalong_downloads(job)) if job is not None else [None, []]
        new = {"job": job_id, "choices": choices, "number": number, "files": files}
        if files == shown.get("files") and shown.get("job") == job_id:
            epub_out, subtitles_out = gr.skip(), gr.skip()
        else:
            epub_out = gr.update(value=files[0], visible=files[0] is not None)
            subtitles_out = subtitles_html(files[0], files[1])
        if shown.get("job") != job_id:
            number = None
            new["number"] = None
            return [
                gr.update(choices=choices, value=None),
                _render(ctx, None, None),
                epub_out,
                subtitles_out,
                new,
            ]
        picker = gr.skip() if choices == shown.get("choices") else gr.update(choices=choices)
        has_view = shown.get("has_view") and shown.get("number") == number
        view = gr.skip() if has_view else _render(ctx, job, number)
        new["has_view"] = bool(has_view or (number and str(number) in {n for _, n in choices}))
        return [picker, view, epub_out, subtitles_out, new]

    def select(job_id: str | None, number: str | None, shown: dict[str, Any] | None) -> list[Any]:
        job = job_of(job_id)
        choices = readalong_chapters(job) if job is not None else []
        has_view = bool(number and str(number) in {n for _, n in choices})
        return [
            _render(ctx, job, number),
            {
                "job": job_id,
                "choices": choices,
                "number": number,
                "has_view": has_view,
                "files": (shown or {}).get("files"),
            },
        ]

    outputs = [refs.chapter, refs.view, refs.epub, refs.subtitles, refs.shown]
    timer.click(
        guarded(refresh),
        [pick, refs.chapter, refs.shown],
        outputs,
        show_progress="hidden",
        api_name="readalong_refresh",
        concurrency_limit=None,
    )
    pick.change(guarded(refresh), [pick, refs.chapter, refs.shown], outputs, api_visibility="private")
    refs.chapter.input(
        guarded(select),
        [pick, refs.chapter, refs.shown],
        [refs.view, refs.shown],
        api_name="readalong_chapter",
    )
    return refs
