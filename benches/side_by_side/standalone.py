"""Rewrites a workspace member's Cargo.toml so that it builds outside its workspace.

    python3 standalone.py CRATE/Cargo.toml WORKSPACE/Cargo.toml

Every `key.workspace = true` (package fields and dependencies, with extra features merged as
cargo merges them) is replaced by the workspace's value, the version becomes `0.0.0-old` (so the
copy can sit beside this tree's crate of the same name in one dependency graph), and the
workspace lint table is dropped. Used by benches/side-by-side.sh on a copy, never on the tree.
"""

import re
import sys
import tomllib


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return '"' + str(value) + '"'


def inherited(workspace, name, extra):
    spec = workspace["dependencies"][name]
    spec = dict(spec) if isinstance(spec, dict) else {"version": spec}
    spec.pop("path", None)
    for key, value in extra.items():
        if key == "features":
            spec["features"] = sorted(set(spec.get("features", [])) | set(value))
        elif key != "workspace":
            spec[key] = value
    body = ", ".join(f"{k} = {toml_value(v)}" for k, v in spec.items())
    return f"{name} = {{ {body} }}"


def main():
    crate_path, workspace_path = sys.argv[1], sys.argv[2]
    with open(workspace_path, "rb") as f:
        workspace = tomllib.load(f)["workspace"]
    out = []
    with open(crate_path) as f:
        lines = f.read().splitlines()
    for line in lines:
        m = re.fullmatch(r"(version|edition|rust-version|license)\.workspace = true", line)
        if m:
            key = m.group(1)
            value = "0.0.0-old" if key == "version" else workspace["package"][key]
            out.append(f"{key} = {toml_value(value)}")
            continue
        m = re.fullmatch(r"([A-Za-z0-9_-]+)\.workspace = true", line)
        if m:
            out.append(inherited(workspace, m.group(1), {}))
            continue
        m = re.fullmatch(r"([A-Za-z0-9_-]+) = (\{.*workspace = true.*\})", line)
        if m:
            extra = tomllib.loads("x = " + m.group(2))["x"]
            out.append(inherited(workspace, m.group(1), extra))
            continue
        if line == "workspace = true" and out and out[-1] == "[lints]":
            out.pop()
            continue
        out.append(line)
    with open(crate_path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
