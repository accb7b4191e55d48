#!/bin/sh
# Writes one seed file per corpus expression (cel-spec and event filters) and per regression
# input into fuzz/corpus/<target>/, the directory cargo-fuzz reads and grows.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
for target in parse_never_panics parse_vs_oracle; do
    out="$here/corpus/$target"
    mkdir -p "$out"
    # One expression per line, as JSON strings; python3 decodes them exactly.
    python3 - "$root" "$out" <<'PY'
import json, pathlib, sys, hashlib
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
exprs = []
for f in sorted((root / "corpus/cel-spec").glob("*.jsonl")):
    for line in f.read_text(encoding="utf-8").splitlines():
        if line.strip():
            exprs.append(json.loads(line)["expr"])
events = json.loads((root / "corpus/events/expressions.json").read_text(encoding="utf-8"))
exprs += [e["expr"] for e in events["expressions"]] + [events["expr_1024"]]
for e in exprs:
    data = e.encode("utf-8")
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
for f in (root / "corpus/regressions/parse").iterdir():
    if f.suffix != ".md":
        data = f.read_bytes()
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
done
# The lint target starts from every plugin file of the corpus.
mkdir -p "$here/corpus/lint_yaml"
find "$root/corpus/plugins" -name '*.yaml' | while read -r f; do
    cp "$f" "$here/corpus/lint_yaml/$(sha1sum "$f" | cut -c1-40)"
done
echo "seeded $(ls "$here/corpus/parse_never_panics" | wc -l) inputs per target"
