"""Start the omni-web UI: `python webapp.py [--host H] [--port P] [--no-auth] [--auth-file F]`.

Argument parsing only; the UI lives in ``omni_web/ui``. Beyond loopback a login is required: the
first start creates a password, stores it owner-only in the data root and prints it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no calls home from a LAN app

from omni_web.auth import AUTH_ENV_VAR, Credentials, resolve_login  # noqa: E402
from omni_web.errors import OmniWebError  # noqa: E402
from omni_web.lan import ui_urls  # noqa: E402
from omni_web.paths import data_root_from_env  # noqa: E402
from omni_web.settings import load_settings  # noqa: E402


def _parse(argv: list[str] | None, default_host: str, default_port: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="omni-web: EPUB to audiobook on your GPU box, in the browser."
    )
    parser.add_argument("--host", default=default_host, help=f"address to listen on (default {default_host})")
    parser.add_argument("--port", type=int, default=default_port, help=f"port (default {default_port})")
    parser.add_argument(
        "--no-auth", action="store_true", help="no login, even when listening beyond loopback"
    )
    parser.add_argument(
        "--auth-file",
        type=Path,
        metavar="FILE",
        help=f"login from FILE (user:password); {AUTH_ENV_VAR}=user:password also works",
    )
    return parser.parse_args(argv)


def _print_banner(urls: list[str], credentials: Credentials | None) -> None:
    print("omni-web is running. Open it from a browser on your network:", flush=True)
    for url in urls:
        print(f"  {url}", flush=True)
    if credentials is None:
        print("Login: none (loopback only, or --no-auth).", flush=True)
    elif credentials.created:
        print(f"Login: user '{credentials.username}', password '{credentials.password}'", flush=True)
        print(
            f"  (created now and stored owner-only in {credentials.source}; delete it for a new one)",
            flush=True,
        )
    else:
        print(f"Login: user '{credentials.username}' (password from {credentials.source})", flush=True)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per health poll otherwise
    paths = data_root_from_env().ensure()
    # Read by Gradio when it is imported (below): uploads and served-file copies stay in the data root.
    os.environ["GRADIO_TEMP_DIR"] = str(paths.gradio_temp_dir)
    try:
        settings = load_settings(paths)
        args = _parse(argv, settings.web_host, settings.web_port)
        credentials = resolve_login(args.host, paths, no_auth=args.no_auth, auth_file=args.auth_file)
    except OmniWebError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from omni_web.api import mount_api
    from omni_web.deliver.opds import mount_opds
    from omni_web.farm import FarmRegistry, FarmWatcher, group_target, mount_farm
    from omni_web.services import AppServices  # heavy imports after the arguments are known
    from omni_web.ui import UiContext, build_app, launch_options
    from omni_web.ui.app import mount_page_poll
    from omni_web.ui.downloads import mount_downloads
    from omni_web.ui.login_page import mount_login_page
    from omni_web.ui.sessions import keep_logins

    services = AppServices.create(paths)
    resumed = services.start()
    if resumed:
        print(f"Resuming interrupted jobs: {', '.join(resumed)}", flush=True)
    ctx = UiContext(services, web_port=args.port)
    demo, _ = build_app(ctx)
    demo.queue(default_concurrency_limit=8)
    demo.launch(
        **launch_options(ctx, host=args.host, port=args.port, credentials=credentials),
        prevent_thread_lock=True,
    )
    keep_logins(demo.app, paths, credentials)  # a restart keeps every browser logged in
    mount_api(demo.app, services.library)  # /api/v1, before Gradio's own routes; its tokens, not the UI login
    # /opds: the shelf of finished books for OPDS readers, behind the UI's own login (HTTP Basic).
    mount_opds(
        demo.app,
        lambda: services.settings.output_path(paths),
        credentials.as_tuple() if credentials is not None else None,
    )
    # /downloads: a finished book's MP3 zip and zip of all, made on demand, behind the UI's login.
    mount_downloads(demo.app, services.library.jobs, lambda: services.settings.output_path(paths))
    # /farm/v1: GPU boxes join with a farm token (agent join); their workers go into the group's router.
    farm = FarmRegistry(paths, group_target(services.server))
    mount_farm(demo.app, farm)
    farm_watch = FarmWatcher(farm)
    farm_watch.start()
    mount_page_poll(demo.app, ctx)  # /live/poll: what the page shows changes without Gradio timers
    mount_login_page(demo.app)  # Gradio's login page keeps the username after a wrong password
    _print_banner(ui_urls(args.host, args.port), credentials)
    try:
        demo.block_thread()
    finally:
        farm_watch.stop()
        services.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
