"""The UI's look: a theme with system fonts (nothing is fetched from the internet) and the CSS for
badges, progress bars, tables, dialogs and the monospace model picker."""

from __future__ import annotations

import gradio as gr

__all__ = ["CSS", "JS", "THEME"]

# System font stacks: the app runs on LAN machines without internet, so no web fonts.
THEME = gr.themes.Soft(
    primary_hue="indigo",
    secondary_hue="slate",
    neutral_hue="slate",
    font=["ui-sans-serif", "system-ui", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "DejaVu Sans Mono", "monospace"],
)

CSS = """
/* An error is said once, in its toast: Gradio would also lay a red "Error" overlay over every
   output of the failed event (hiding what they showed), repeating it across the page. */
[data-testid="status-tracker"]:has(> .error) { display: none !important; }

.ow-header { display: flex; align-items: baseline; gap: 14px; padding: 4px 2px 10px; }
.ow-logo { font-size: 1.6rem; font-weight: 700; letter-spacing: -0.02em; color: var(--color-accent); }
.ow-tagline { color: var(--body-text-color-subdued); }
.ow-dim { color: var(--body-text-color-subdued); font-size: 0.9em; margin: 4px 0; }

/* The model picker reads as a table: monospace, spaces kept, in the box and in the open list. */
.ow-mono input, .ow-mono textarea, .ow-mono li[role=option] {
  font-family: var(--font-mono) !important; white-space: pre !important;
}
.ow-mono ul.option-list { min-width: max-content; }

.ow-badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 0.82em;
  font-weight: 600; line-height: 1.6; border: 1px solid transparent; white-space: nowrap; }
.ow-ok { background: #dcfce7; color: #166534; border-color: #bbf7d0; }
.ow-busy { background: #e0e7ff; color: #3730a3; border-color: #c7d2fe; }
.ow-wait { background: #fef9c3; color: #854d0e; border-color: #fde68a; }
.ow-bad { background: #fee2e2; color: #991b1b; border-color: #fecaca; }
.ow-mute { background: #f1f5f9; color: #475569; border-color: #e2e8f0; }

.ow-status { display: flex; flex-wrap: wrap; align-items: center; gap: 10px; padding: 6px 2px; }
.ow-whisper { padding: 6px 2px; line-height: 1.8; }
.ow-server-status { font-size: 1.05em; padding: 10px 12px; border-radius: 10px;
  background: var(--block-background-fill); border: 1px solid var(--border-color-primary); }

.ow-bar { height: 10px; border-radius: 6px; background: #e2e8f0; overflow: hidden; min-width: 120px; }
.ow-bar > div { height: 100%; background: linear-gradient(90deg, #6366f1, #818cf8); border-radius: 6px;
  transition: width 0.6s ease; }
/* Moved by transform, which the compositor draws: a margin would lay the page out again every frame. */
.ow-bar-unknown > div { width: 35%; animation: ow-slide 1.4s ease-in-out infinite; will-change: transform; }
@keyframes ow-slide { 0% { transform: translateX(-100%); } 100% { transform: translateX(286%); } }
.ow-bar-text { display: block; font-size: 0.85em; color: var(--body-text-color-subdued); margin-top: 3px; }

.ow-table { width: 100%; border-collapse: collapse; font-size: 0.92em; margin: 6px 0; border: none !important; }
.ow-table th, .ow-table td { border-left: none !important; border-right: none !important;
  border-top: none !important; }
.ow-table thead, .ow-table tbody, .ow-table tr { border: none !important; }
.ow-table td.ow-nowrap, .ow-nowrap { white-space: nowrap; }
.ow-table th { text-align: left; font-weight: 600; color: var(--body-text-color-subdued);
  border-bottom: 1px solid var(--border-color-primary); padding: 6px 8px; }
.ow-table td { border-bottom: 1px solid var(--border-color-primary); padding: 6px 8px; vertical-align: middle; }
.ow-kv th { width: 9em; }
.ow-table code, .ow-status code { font-size: 0.9em; }

.ow-callout { padding: 8px 12px; border-radius: 8px; margin: 6px 0; border-left: 4px solid; }
.ow-callout-info { background: #eef2ff; border-color: #6366f1; color: #1e1b4b; }
.ow-callout-warn { background: #fffbeb; border-color: #f59e0b; color: #78350f; }
.ow-callout-bad { background: #fef2f2; border-color: #ef4444; color: #7f1d1d; }

/* Questions (confirm a removal, pick a model, the Higgs chunk size) float over the page. */
.ow-dialog { position: fixed !important; z-index: 1000; top: 22vh; left: 50%; transform: translateX(-50%);
  width: min(600px, 92vw) !important; border: 2px solid var(--color-accent) !important;
  border-radius: 14px !important; padding: 10px !important; background: var(--background-fill-primary) !important;
  box-shadow: 0 0 0 100vmax rgba(15, 23, 42, 0.45), 0 18px 40px rgba(15, 23, 42, 0.35); }

.ow-log textarea { font-family: var(--font-mono) !important; font-size: 0.82em !important; }
.ow-chapters label { font-family: var(--font-mono); white-space: pre; }
/* A 138-chapter book scrolls inside its own box; Generate's buttons stay at the window's foot. */
.ow-chapters .wrap { max-height: 380px; overflow-y: auto; }
.ow-sticky-actions { position: sticky; bottom: 0; z-index: 20; background: var(--background-fill-primary);
  padding: 8px 0; box-shadow: 0 -6px 12px -8px rgba(15, 23, 42, 0.25); }
/* The command line wraps instead of running off the box's right edge. */
.ow-command textarea { white-space: pre-wrap !important; word-break: break-all; }
.ow-tree-group { margin-bottom: 4px; }

.ow-book-title { font-size: 1.35em; font-weight: 700; line-height: 1.25; }
.ow-book-author { font-size: 1.05em; margin: 2px 0 6px; }

/* First-run checklist on Generate: numbered steps, done ones ticked and dimmed. */
.ow-firstrun-box { border: 2px solid #f59e0b !important; border-radius: 12px !important; background: #fffbeb !important;
  padding: 8px 12px !important; }
.ow-firstrun-title { font-weight: 700; font-size: 1.1em; margin-bottom: 4px; color: #78350f; }
.ow-steps { list-style: none; padding: 0; margin: 0; }
.ow-steps li { padding: 3px 0; }
.ow-step-mark { display: inline-block; width: 1.5em; height: 1.5em; line-height: 1.5em; text-align: center;
  border-radius: 50%; background: #f59e0b; color: white; font-weight: 700; font-size: 0.85em; }
.ow-step-done { opacity: 0.65; }
.ow-step-done .ow-step-mark { background: #16a34a; }

/* Jobs tab: actions on top, a compact chapter table that scrolls inside its box. */
.ow-actions { align-items: end; }
.ow-scroll { max-height: 430px; overflow-y: auto; border: 1px solid var(--border-color-primary);
  border-radius: 8px; }
.ow-scroll-short { max-height: 210px; }
.ow-scroll .ow-table { margin: 0; }
.ow-scroll .ow-table td, .ow-scroll .ow-table th { padding: 3px 8px; }
.ow-scroll thead th { position: sticky; top: 0; background: var(--background-fill-primary); z-index: 1; }
.ow-play { border: 1px solid var(--border-color-primary); border-radius: 999px; width: 2em; height: 2em;
  cursor: pointer; background: var(--button-secondary-background-fill); color: var(--color-accent); }
.ow-play:hover { background: var(--color-accent); color: white; }
.ow-download { display: inline-block; padding: 8px 16px; border-radius: 8px; font-weight: 600;
  background: var(--button-primary-background-fill); color: var(--button-primary-text-color) !important;
  text-decoration: none !important; margin: 4px 0 8px; }
.ow-files code { word-break: break-all; }
.ow-dl-row { margin: 2px 0 6px; }
.ow-dl-link { font-weight: 600; }
.ow-where { font-size: 0.8em; word-break: break-all; }
.ow-where code { font-size: inherit; }
.ow-phase { display: grid; grid-template-columns: 11em 1fr; align-items: center; gap: 10px; margin: 6px 0; }
.ow-phase-name { font-weight: 600; }
.ow-scroll td:first-child, .ow-scroll th:first-child { width: 2.6em; }
.ow-actions button { white-space: nowrap; }
.ow-phase-pending .ow-phase-name { color: var(--body-text-color-subdued); font-weight: 400; }
.ow-job-line { margin: 2px 0 6px; }
.ow-chapter-list { max-height: 360px; }
.ow-play.ow-playing { background: var(--color-accent); color: white; }
/* Long lists (levels, MP3s, subtitles) are folded under one line each. */
.ow-fold { margin: 6px 0; }
.ow-fold > summary { cursor: pointer; padding: 4px 2px; list-style-position: inside; }
/* A fold's head takes the rest of its marker's line and wraps inside it (on a phone it wrapped whole
   under the marker, which then stood alone above it). */
.ow-fold > summary .ow-status { display: inline-flex; padding: 0; flex: 1 1 0; min-width: 0; }
.ow-links { list-style: none; margin: 4px 0; padding: 6px 10px; max-height: 260px; }
.ow-links li { padding: 2px 0; }
/* The chapter player: one bar at the foot of the window, wherever the list was scrolled to. */
#ow-nowplaying { position: fixed; left: 0; right: 0; bottom: 0; z-index: 60; display: flex; flex-wrap: wrap;
  align-items: center; gap: 8px 12px; padding: 8px 12px; background: var(--background-fill-primary);
  border-top: 1px solid var(--border-color-primary); box-shadow: 0 -4px 14px rgba(0, 0, 0, 0.12); }
#ow-nowplaying[hidden] { display: none; }
#ow-nowplaying audio { flex: 1 1 260px; min-width: 0; }
.ow-np-title { font-weight: 600; flex: 0 1 auto; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
  max-width: 100%; }
.ow-np-close { border: none; background: none; cursor: pointer; font-size: 1.1em; }
.ow-fold > summary { display: flex; align-items: baseline; gap: 6px; flex-wrap: wrap; list-style: none; }
.ow-fold > summary::before { content: "▸"; color: var(--body-text-color-subdued); }
.ow-fold[open] > summary::before { content: "▾"; }
/* A menu's text stops before its arrow (a long job name ran under it). */
.secondary-wrap input[role=combobox] { padding-right: 26px; text-overflow: ellipsis; }
@media (max-width: 600px) {
  .ow-phase { grid-template-columns: 1fr; gap: 2px; }
  .ow-scroll td, .ow-scroll th { padding: 3px 4px !important; }
  /* The job picker takes its own line; the actions wrap under it. */
  #jobs-bar { flex-wrap: wrap; }
  #jobs-bar > :first-child { flex: 1 1 100% !important; }
  #jobs-bar > button { flex: 1 1 auto !important; min-width: 0 !important; }
  /* The jobs list keeps book, state and progress on a phone (the job's page names model and voice). */
  #jobs-table td:nth-child(2), #jobs-table th:nth-child(2) { display: none; }
  #jobs-table td:nth-child(n+5), #jobs-table th:nth-child(n+5) { display: none; }
  /* Tables fit the screen: long words (model ids, paths) break, nothing is held on one line. */
  .ow-table { font-size: 0.85em; }
  .ow-table td, .ow-table th { overflow-wrap: anywhere; padding: 4px 4px; }
  #jobs-table .ow-table td { overflow-wrap: break-word; }
  .ow-table td.ow-nowrap, .ow-nowrap { white-space: normal; }
  .ow-bar { min-width: 48px; }
  .ow-kv th { width: 7em; }
}
"""

# Log boxes (boot log, install log) follow their newest line, as a terminal does, unless the
# reader scrolled up to read something. Gradio replaces the text on every poll, which leaves
# the box at its top; one watcher for every ``.ow-log`` box keeps it at the end.
JS = """
() => {
  const seen = new WeakMap();
  setInterval(() => {
    document.querySelectorAll('.ow-log textarea').forEach((box) => {
      const last = seen.get(box);
      const length = box.value.length;
      if (last && last.length === length) { return; }
      const wasAtEnd = !last || last.atEnd;
      if (wasAtEnd) { box.scrollTop = box.scrollHeight; }
      seen.set(box, {length, atEnd: wasAtEnd});
    });
  }, 400);
  document.addEventListener('scroll', (event) => {
    const box = event.target;
    if (box instanceof HTMLTextAreaElement && box.closest('.ow-log')) {
      const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
      seen.set(box, {length: box.value.length, atEnd});
    }
  }, true);
}
"""
