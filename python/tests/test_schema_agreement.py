"""One truth for schema and lint, asked of check-jsonschema itself (issue 34, item 4).

`lint/tests/schema_verdicts.rs` asks the same questions of a Rust validator over the same kind of
files; this test asks the validator plugin authors run in pre-commit, over every plugin file of
the corpus and over files generated from the valid ones by seeded mutations (a key dropped, an
unknown or misspelt key added, a value of another type, an empty and a comment-only file). For
every schema-level question (missing key, wrong type, unknown key) the lint's verdict, the
severity of its rule, must be the schema's: an error where check-jsonschema refuses the file on
that question, a warning where only the strict reading of the schema refuses it (unknown keys
carry a warning annotation, not a refusal), nothing otherwise.

The differences by design (docs/decisions/0011-schema-and-lint-verdicts.md) are allowed and
nothing else: check-jsonschema loads YAML 1.1 and resolves a merge key (`<<`) before it
validates, where the lint reads YAML 1.2 and refuses the merge key (so the lint's `missing-key`
of a mapping with a merge key stands alone); and JSON Schema cannot tell `1.0` from `1`, so a
`max_fires_per_hour` written as a float is the lint's alone. Files the lint cannot read as one
mapping (invalid YAML, duplicate keys) are outside the question.
"""

import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ozcheck

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schema"
KINDS = {"agents": "agent", "flows": "flow", "routines": "routine"}
QUESTIONS = {"missing": "missing-key", "type": "wrong-type", "unknown": "unknown-key"}
SUPPRESSION = re.compile(r"#\s*ozcheck:.*$", re.MULTILINE)


def _check_jsonschema():
    """The check-jsonschema command: beside this Python (the venv .ci/run makes), or on PATH."""
    beside = Path(sys.executable).with_name("check-jsonschema")
    found = str(beside) if beside.exists() else shutil.which("check-jsonschema")
    if found is None:
        message = "SKIPPED: check-jsonschema is not installed (pip install check-jsonschema)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; under CI=true a skip is a failure")
        print(message, file=sys.stderr)
        pytest.skip(message)
    return found


def _load_yaml(text):
    from ruamel.yaml import YAML  # check-jsonschema's own loader

    return YAML(typ="safe", pure=True).load(text)


def _corpus_files():
    files = []
    for path in sorted((ROOT / "corpus" / "plugins").rglob("*.yaml")):
        kind = KINDS.get(path.parent.name)
        if kind is not None:
            files.append((kind, path.relative_to(ROOT).as_posix(), path.read_text()))
    return files


def _places(value, at=()):
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _places(v, at + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _places(v, at + (i,))


def _get(value, at):
    for step in at:
        value = value[step]
    return value


def _other_type(value, rng):
    choices = [7, 1.0, 2.5, True, "text", ["a"], {"k": "v"}, None, 0]
    choices = [c for c in choices if not (type(c) is type(value) and c == value)]
    return rng.choice(choices)


def _mutate(root, rng):
    """One seeded mutation of a valid file's value, as the Rust test's generator makes them
    (less the merge key, which check-jsonschema resolves by design)."""
    places = list(_places(root))
    maps = [p for p in places if isinstance(_get(root, p), dict)]
    target = _get(root, rng.choice(maps))
    what = rng.randrange(5)
    if what == 0 and target:
        del target[rng.choice(list(target))]
    elif what == 1:
        first = next(iter(target), None)
        name = f"{first}x" if first is not None and rng.randrange(2) == 0 else "colour"
        target[name] = "blue"
    elif len(places) > 1:
        at = rng.choice(places[1:])
        parent = _get(root, at[:-1])
        parent[at[-1]] = _other_type(parent[at[-1]], rng)


def _generated(valid, count, seed):
    rng = random.Random(seed)
    out = []
    for n in range(count):
        kind, path, value = valid[rng.randrange(len(valid))]
        mutated = copy.deepcopy(value)
        for _ in range(1 + rng.randrange(2)):
            _mutate(mutated, rng)
        # JSON is YAML 1.2 flow style: both readers see the same value.
        out.append((kind, f"generated/{kind}s/m{n}.yaml", json.dumps(mutated, indent=1)))
    for kind in KINDS.values():
        out.append((kind, f"generated/{kind}s/empty.yaml", ""))
        out.append((kind, f"generated/{kind}s/comments.yaml", "# only a comment\n"))
    return out


def _strict(schema):
    """The schema with every warning-level `additionalProperties` annotation read as a refusal."""
    if isinstance(schema, dict):
        return {
            k: (False if k == "additionalProperties" and isinstance(v, dict) else _strict(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _question(error, value):
    """The schema-level question a check-jsonschema error answers, by its message. Errors of the
    cross-key constraints (`oneOf`, `then`, `dependencies`) and of the grammars (`pattern`,
    `minLength`) belong to other rules, and so do scalars refused by the grammars of `timeout`
    and `since` (`invalid-timeout` and `invalid-since` explain them)."""
    message, path = error["message"], error["path"]
    if message.startswith("Additional properties are not allowed"):
        return "unknown"
    if message.endswith("is a required property"):
        return "missing"
    if re.search(r"is not of type|is not one of|is less than the minimum", message):
        grammar = re.search(r"\.(timeout|since)$", path)
        instance = _at_path(value, path)
        if grammar and not isinstance(instance, (dict, list, type(None))):
            return None
        return "type"
    return None


def _at_path(value, path):
    """The instance at a check-jsonschema path (`$.steps[0].wait_for_event.timeout`)."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:]):
        try:
            value = value[key] if key else value[int(index)]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return value


def _validate(exe, schema, files, workdir):
    """check-jsonschema's errors per file, for one kind's files at once."""
    schema_file = workdir / "schema.json"
    schema_file.write_text(json.dumps(schema))
    run = subprocess.run(
        [exe, "--schemafile", str(schema_file), "-o", "json", *[str(f) for f in files]],
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout)
    errors = {str(f): [] for f in files}
    for error in report["errors"]:
        errors[error["filename"]].append(error)
    for error in report["parse_errors"]:
        errors[error["filename"]] = None
    return errors


def _lint(path, text):
    report = ozcheck.lint_text(SUPPRESSION.sub("", text), path)
    return report.diagnostics


def _disagreements(kind, path, text, normal, strict):
    findings = _lint(path, text)
    codes = {f.code for f in findings}
    unreadable = codes & {"invalid-yaml", "duplicate-key"}
    if normal is None:
        # check-jsonschema cannot read it: the lint must say why.
        return [] if unreadable else [f"{path}: check-jsonschema cannot parse it, the lint can\n{text}"]
    if unreadable:
        return []
    value = _load_yaml(text)
    out = []
    for question, rule in QUESTIONS.items():
        lint = {f.severity for f in findings if f.code == rule}
        lint = "error" if "error" in lint else ("warning" if lint else None)
        said = [e for e in normal if _question(e, value) == question]
        strictly = [e for e in strict if _question(e, value) == question]
        schema = "error" if said else ("warning" if strictly else None)
        if lint == schema:
            continue
        if question == "missing" and "merge-key" in codes and schema is None:
            continue  # check-jsonschema merged what the lint refuses (decision 0011)
        if question == "type" and schema is None and _whole_float_only(findings, value):
            continue  # `max_fires_per_hour: 1.0`: JSON Schema cannot tell it from 1
        out.append(
            f"{path}: {question}: lint {lint} "
            f"({'; '.join(f.message for f in findings if f.code == rule)}), schema {schema} "
            f"({'; '.join(e['path'] + ': ' + e['message'] for e in said or strictly)})\n{text}"
        )
    return out


def _whole_float_only(findings, value):
    wrong = [f for f in findings if f.code == "wrong-type"]
    limit = _at_path(value, "$.limits.max_fires_per_hour")
    return (
        bool(wrong)
        and all("max_fires_per_hour" in f.message for f in wrong)
        and isinstance(limit, float)
        and limit.is_integer()
        and limit >= 1
    )


def test_check_jsonschema_and_the_lint_give_one_verdict(tmp_path):
    exe = _check_jsonschema()
    corpus = _corpus_files()
    assert len(corpus) >= 20, f"only {len(corpus)} corpus files"
    valid = []
    for kind, path, text in corpus:
        codes = {f.code for f in _lint(path, text)}
        if not codes & {"invalid-yaml", "duplicate-key", "merge-key", "missing-key", "wrong-type"}:
            value = _load_yaml(text)
            if isinstance(value, dict):
                valid.append((kind, path, value))
    assert len(valid) >= 10, f"only {len(valid)} valid files to mutate"
    files = corpus + _generated(valid, 240, seed=34)

    wrong = []
    asked = {q: 0 for q in QUESTIONS}
    for kind in KINDS.values():
        mine = [(p, t) for k, p, t in files if k == kind]
        paths = []
        for i, (path, text) in enumerate(mine):
            on_disk = tmp_path / kind / f"f{i}.yaml"
            on_disk.parent.mkdir(parents=True, exist_ok=True)
            on_disk.write_text(text)
            paths.append(on_disk)
        schema = json.loads((SCHEMAS / f"{kind}.json").read_text())
        normal = _validate(exe, schema, paths, tmp_path)
        strict = _validate(exe, _strict(schema), paths, tmp_path)
        for on_disk, (path, text) in zip(paths, mine):
            errors = normal[str(on_disk)]
            for e in (errors or []) + (strict[str(on_disk)] or []):
                q = _question(e, None)
                if q:
                    asked[q] += 1
            wrong += _disagreements(kind, path, text, errors, strict[str(on_disk)])
    # The generated files must ask every question, or the agreement says nothing.
    assert all(n >= 10 for n in asked.values()), asked
    assert not wrong, f"{len(wrong)} disagreements:\n" + "\n---\n".join(wrong[:15])
