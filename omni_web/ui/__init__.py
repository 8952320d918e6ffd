"""The Gradio web UI: one module per tab (``build(ctx) -> <Tab>Refs``), assembled in ``app``.

Handlers are thin: they read inputs, call the core, and render. Jobs run in the job worker,
installs, model changes and server starts in the TaskRunner; the page only polls.
"""

from omni_web.ui.app import AppRefs, build_app, launch_options
from omni_web.ui.context import UiContext

__all__ = ["AppRefs", "UiContext", "build_app", "launch_options"]
