"""The one place the UI turns errors into what a user sees.

Every event handler is wrapped with :func:`guarded`: an :class:`OmniWebError` becomes a
``gr.Error`` carrying its message (which already says what to do); anything else is a bug, so its
traceback goes to the app log and the page gets a short note pointing there.
"""

from __future__ import annotations

import functools
import html
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from omni_web.errors import OmniWebError, internal_error_message

__all__ = ["guarded", "to_gr_error"]

_log = logging.getLogger("omni_web.ui")

F = TypeVar("F", bound=Callable[..., Any])


def to_gr_error(exc: BaseException) -> gr.Error:
    """The ``gr.Error`` to raise for ``exc`` (logging it first when it is not ours)."""
    if isinstance(exc, OmniWebError):
        # gr.Error renders HTML; our messages carry paths and quotes, never markup.
        return gr.Error(html.escape(str(exc)), title="Cannot do that", print_exception=False)
    _log.error("Internal error in a UI handler", exc_info=exc)
    return gr.Error(html.escape(internal_error_message(exc)), title="Internal error")


def guarded(fn: F) -> F:
    """Wrap an event handler so errors reach the page as ``gr.Error`` (see the module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:
            raise to_gr_error(exc) from exc

    return wrapper  # type: ignore[return-value]
