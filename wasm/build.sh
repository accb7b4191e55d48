#!/usr/bin/env bash
# Builds the WebAssembly module in release and binds it twice with wasm-bindgen-cli: the `nodejs`
# target into wasm/npm/pkg (the npm package) and the `web` target into playground/pkg (the page).
# Installs the wasm32 target and the wasm-bindgen-cli of the crate's pinned version when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' wasm/Cargo.toml)
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$version" ]; then
  # Not `--locked`: the CLI's own lock file pins a webpki-roots release that the registry no
  # longer serves, so a locked install fails; the version of the CLI itself is still exact.
  # Only the `wasm-bindgen` binary, without the TLS stack its test runner downloads with.
  cargo install wasm-bindgen-cli --version "$version" --no-default-features --bin wasm-bindgen
fi
cargo build -p ozcheck-wasm --target wasm32-unknown-unknown --release --locked
module=target/wasm32-unknown-unknown/release/ozcheck_wasm.wasm
wasm-bindgen --target nodejs --out-dir wasm/npm/pkg "$module"
wasm-bindgen --target web --no-typescript --out-dir playground/pkg "$module"
raw=$(wc -c < wasm/npm/pkg/ozcheck_wasm_bg.wasm)
gzipped=$(gzip -9c wasm/npm/pkg/ozcheck_wasm_bg.wasm | wc -c)
echo "ozcheck_wasm_bg.wasm: $raw bytes, $gzipped gzipped"
