#!/usr/bin/env bash
# Make this GPU box part of an app's farm: install omni-web's own venv (.venv), then run
#   python -m omni_web agent join APP_URL [--token T | OMNI_WEB_FARM_TOKEN=T] [--service] [...]
# The agent installs the SGLang-Omni backend and downloads models itself when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin="${PYTHON:-python3}"
if ! "$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "omni-web needs Python 3.11 or newer; set PYTHON=/path/to/python3.11 and run again." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python_bin" -m venv .venv
.venv/bin/python -m pip install -q -r requirements.txt
exec .venv/bin/python -m omni_web agent join "$@"
