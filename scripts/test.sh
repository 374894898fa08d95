#!/usr/bin/env bash
# Install everything the test suite needs and run it: the README's test command, and what .ci/run calls.
# Needs Python 3.11 with pip; as root it also installs iproute2 (ip, tc) for the emulated-cluster tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ] && ! command -v tc >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
