"""The UI's look: a theme with system fonts (nothing is fetched from the internet) and the CSS for
badges, progress bars, tables, dialogs and the monospace model picker."""

from __future__ import annotations

import gradio as gr

__all__ = ["CSS", "THEME"]

# System font stacks: the app runs on LAN machines without internet, so no web fonts.
THEME = gr.themes.Soft(
    primary_hue="indigo",
    secondary_hue="slate",
    neutral_hue="slate",
    font=["ui-sans-serif", "system-ui", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "DejaVu Sans Mono", "monospace"],
)

CSS = """
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
.ow-bar-unknown > div { width: 35%; animation: ow-slide 1.4s ease-in-out infinite; }
@keyframes ow-slide { 0% { margin-left: -35%; } 100% { margin-left: 100%; } }
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
.ow-tree-group { margin-bottom: 4px; }

.ow-book-title { font-size: 1.35em; font-weight: 700; line-height: 1.25; }
.ow-book-author { font-size: 1.05em; margin: 2px 0 6px; }
"""
