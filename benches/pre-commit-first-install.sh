#!/usr/bin/env bash
# The first `pre-commit install-hooks` of the `ozcheck-lint` hook, measured from nothing: a fresh
# consumer repository and a fresh PRE_COMMIT_HOME, so pre-commit clones REPO at REV and builds
# the hook with `cargo install` (cargo's download cache is kept). Then a commit check of the
# sample plugin (one error, one warning) and one with the error fixed, to show what the hook
# prints. Results: BENCHMARKS.md, "pre-commit".
#
#   benches/pre-commit-first-install.sh REPO REV [KEEP]
#
# REPO is a path or URL of an ozcheck repository, REV a commit in it; KEEP, if given, is where
# the hook's installed binary is copied (to time it against another build). Needs pre-commit
# (`pip install pre-commit`), git, cargo and GNU time (`/usr/bin/time`).
set -euo pipefail
repo=$1
rev=$2
keep=${3:-}
sample="$(cd "$(dirname "$0")/.." && pwd)/corpus/plugins/sample"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/consumer"
cd "$work/consumer"
git init -q .
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: $repo
    rev: $rev
    hooks:
      - id: ozcheck-lint
YAML
export PRE_COMMIT_HOME="$work/home"

echo "load before: $(uptime)"
nice -n 10 /usr/bin/time -v pre-commit install-hooks >"$work/install.out" 2>"$work/install.time" || {
  cat "$work/install.out" "$work/install.time"
  exit 1
}
echo "load after:  $(uptime)"
grep -E 'Elapsed|User time|System time|Percent of CPU|Maximum resident' "$work/install.time"
if [ -n "$keep" ]; then
  cp "$(find "$PRE_COMMIT_HOME" -path '*/bin/ozcheck' -type f | head -n 1)" "$keep"
fi

mkdir plugin
cp -r "$sample"/. plugin/
git add -A
echo "== pre-commit run on the sample plugin (an error and a warning: the hook fails)"
pre-commit run --all-files || true
sed -i 's/timeout: 1h30m/timeout: 90m/' plugin/flows/ci-watch.yaml
git add -A
echo "== the same with the error fixed (the hook passes and still shows the warning)"
pre-commit run --all-files
