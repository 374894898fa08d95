#!/usr/bin/env bash
# Install everything the test suite needs and run it: the README's test command, and what .ci/run calls.
# Needs Python 3.11 with pip; as root it also installs iproute2 (ip, tc) for the emulated-cluster tests and
# Debian's chromium (with fonts-liberation, its recommended fonts) for the headless check of report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && ! { command -v tc && command -v chromium; } >/dev/null 2>&1; then
  apt-get update -qq
  command -v tc >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
  # headless needs neither GPU drivers, udev nor a printer dialog: 26 packages, not 115
  command -v chromium >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends chromium fonts-liberation >/dev/null
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
