#!/usr/bin/env bash
# Install omni-web into .venv and start the web UI. Arguments go to webapp.py (e.g. --port 7861).
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin="${PYTHON:-python3}"
if ! "$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "omni-web needs Python 3.11 or newer; set PYTHON=/path/to/python3.11 and run again." >&2
  exit 1
fi

# ffmpeg is the one system tool the app itself needs (assembly, clip conversion).
if ! command -v ffmpeg >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg sox
  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg sox
  else
    echo "ffmpeg is missing: install it (apt install ffmpeg | pacman -S ffmpeg | dnf install ffmpeg)." >&2
    exit 1
  fi
fi

[ -x .venv/bin/python ] || "$python_bin" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements.txt
exec .venv/bin/python webapp.py "$@"
