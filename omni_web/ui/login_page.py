"""Gradio's page and login page, with the username kept after a wrong password.

Gradio's own login form (Gradio 6) empties both fields when the server answers 400 to a wrong
password, so a user types the name again for every try. Gradio has no hook for its login page (the
``head`` of the app is not sent to it), so the page ``/`` is answered here first: not logged in, it is
Gradio's login page with one small script that puts the name back after a refused login (the form's
own request says what was sent). Both pages get the script that quiets Gradio's status trackers'
frame loops (omni_web/ui/live.py), which must run before Gradio's modules: the app's ``head`` is
added by those modules, too late.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from fastapi.routing import APIRoute

from omni_web.ui.downloads import current_user
from omni_web.ui.live import QUIET_TRACKERS_JS

__all__ = ["KEEP_USERNAME_JS", "mount_login_page"]

# Wraps fetch: after a POST to .../login refused with 400, once Gradio's form has emptied its fields,
# the name sent is typed back (an input event, so the form's own state holds it too).
KEEP_USERNAME_JS = """
(() => {
  const send = window.fetch.bind(window);
  const refill = (name) => {
    const field = document.querySelector('input:not([type=password])');
    if (!field || field.value) { return; }
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    setter.call(field, name);
    field.dispatchEvent(new Event('input', { bubbles: true }));
  };
  window.fetch = async (input, init) => {
    const response = await send(input, init);
    const url = new URL(String((input && input.url) || input), location.href);
    const body = init && init.body;
    if (response.status === 400 && url.pathname.endsWith('/login') && body instanceof FormData) {
      const name = String(body.get('username') || '');
      if (name) { setTimeout(() => refill(name), 0); }
    }
    return response;
  };
})();
"""


def _is_page_route(route: Any) -> bool:
    return isinstance(route, APIRoute) and route.path == "/" and "GET" in route.methods


def mount_login_page(gradio_app: Any) -> None:
    """Answer ``GET /`` before Gradio's own route: its page or login page with the tracker script, the
    login page with the script above too."""
    gradio_page = next(route.endpoint for route in gradio_app.router.routes if _is_page_route(route))

    def page(request: Request, page: str = "", deep_link: str = "") -> Response:
        user = current_user(gradio_app, request)
        response = gradio_page(request=request, user=user, page=page, deep_link=deep_link)
        if not isinstance(response, HTMLResponse):
            return response
        # The login page too: a login opens the app in the same document, without a reload.
        scripts = [QUIET_TRACKERS_JS]
        if user is None and gradio_app.auth is not None:
            scripts.append(KEEP_USERNAME_JS)
        script = "".join(f"<script>{js}</script>" for js in scripts).encode() + b"</head>"
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        body = response.body.replace(b"</head>", script, 1)
        return HTMLResponse(body, status_code=response.status_code, headers=headers)

    gradio_app.router.routes.insert(0, APIRoute("/", page, methods=["GET"], include_in_schema=False))
