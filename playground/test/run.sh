#!/usr/bin/env bash
# The playground's browser test: Debian's chromium and chromium-driver (installed when missing),
# Selenium in a virtual environment under target/, the page served by the test itself on a free
# port of 127.0.0.1. Screenshots and timings go to target/playground-test/.
# Needs the module built (wasm/build.sh) and the CLI at target/debug/ozcheck (OZCHECK_BIN).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  echo "== installing chromium and chromium-driver (the playground's browser test)"
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
fi
venv=target/playground-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'selenium>=4.20,<5'
fi
out=target/playground-test
rm -rf "$out"
"$venv/bin/python" playground/test/browser_test.py "$out"
