#!/usr/bin/env bash
# Install everything the tests need (system packages included) and run every test.
# Arguments go to pytest (e.g. -k client -x). The suite runs on OMNI_TEST_WORKERS pytest-xdist
# workers (2; 0 runs it in this process), one test file per worker at a time, so a module's
# app and browser fixtures are built once; the longest files go first (tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."

python_bin="${PYTHON:-python3}"
apt_packages=(ffmpeg sox libsox-fmt-all espeak-ng flite chromium epubcheck calibre trang)
missing=()
for tool in ffmpeg ffprobe sox espeak-ng flite chromium java ebook-convert trang; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
# epubcheck is run as `java -jar` (its /usr/bin link needs binfmt, which containers lack).
[ -f /usr/share/java/epubcheck.jar ] || missing+=(epubcheck)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing system packages (missing: ${missing[*]})"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_packages[@]}"
fi

[ -x .venv/bin/python ] || "$python_bin" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements-dev.txt

.venv/bin/ruff check .
exec .venv/bin/python -m pytest -n "${OMNI_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
