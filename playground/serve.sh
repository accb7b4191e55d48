#!/usr/bin/env bash
# Builds the WebAssembly module (../wasm/build.sh) and serves this folder on localhost:
#   playground/serve.sh [PORT]      (default 8000), then open http://127.0.0.1:PORT/
# The page is static files; any static server works once pkg/ is built.
set -euo pipefail
cd "$(dirname "$0")/.."
wasm/build.sh
port="${1:-8000}"
echo "serving the playground on http://127.0.0.1:$port/ (Ctrl-C stops)"
exec python3 -m http.server --bind 127.0.0.1 --directory playground "$port"
