"""Start the omni-web UI: `python webapp.py [--host H] [--port P] [--no-auth]`.

Argument parsing only; the UI lives in ``omni_web/ui``.
"""

from __future__ import annotations

import argparse

import gradio as gr

from omni_web.paths import data_root_from_env
from omni_web.settings import load_settings


def main() -> None:
    paths = data_root_from_env().ensure()
    settings = load_settings(paths)
    parser = argparse.ArgumentParser(description="omni-web: EPUB to audiobook on your GPU box.")
    parser.add_argument("--host", default=settings.web_host)
    parser.add_argument("--port", type=int, default=settings.web_port)
    args = parser.parse_args()
    with gr.Blocks(title="omni-web") as demo:
        gr.Markdown("# omni-web\nThe web UI is being built; use `python -m omni_web --help` meanwhile.")
    demo.launch(server_name=args.host, server_port=args.port)


if __name__ == "__main__":
    main()
