//! The conventions `ozcheck lint` shares with ruff and zizmor, as a script or hook sees them:
//! `--fix` and `--diff` on a copy of the sample plugin, `--exit-zero`, `--quiet`,
//! `--statistics`, `--color` with `NO_COLOR` and `FORCE_COLOR`, `--output-file`, the configuration
//! found in a parent folder, discovery of plugin folders only, standard input without a name,
//! carriage returns from a file escaped in the one-line formats, and `-` for standard input in
//! `filter` as in `lint`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ozcheck_in(dir: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ozcheck"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("ozcheck runs");
    let mut pipe = child.stdin.take().expect("stdin");
    // A child that stops reading early (an input over its limit) closes the pipe; that is fine.
    let _ = pipe.write_all(stdin.as_bytes());
    drop(pipe);
    child.wait_with_output().expect("ozcheck ends")
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A copy of a folder in a fresh temporary folder.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

fn files_of(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files_of(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn fix_on_a_copy_of_the_sample_leaves_only_unfixable_findings_and_no_other_byte() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sample = repo().join("corpus/plugins/sample");
    let copy = tmp.path().join("sample");
    copy_dir(&sample, &copy);
    let diff = ozcheck_in(tmp.path(), &["lint", "--diff", "sample"], "", &[]);
    assert_eq!(diff.status.code(), Some(1), "{}", err(&diff));
    assert!(
        out(&diff).contains("-      timeout: 1h30m\n+      timeout: 90m\n"),
        "{}",
        out(&diff)
    );
    let fixed = ozcheck_in(
        tmp.path(),
        &["lint", "--fix", "--format", "concise", "sample"],
        "",
        &[],
    );
    // The unknown key `allow_sender` stays: its suggestion is in the mapping already.
    assert_eq!(
        fixed.status.code(),
        Some(0),
        "{}{}",
        out(&fixed),
        err(&fixed)
    );
    let lines: Vec<String> = out(&fixed).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("warning[unknown-key]"), "{lines:?}");
    assert!(
        err(&fixed).contains("fixed 1 finding in 1 file"),
        "{}",
        err(&fixed)
    );
    let mut files = Vec::new();
    files_of(&sample, &mut files);
    for original in files {
        let relative = original.strip_prefix(&sample).expect("inside");
        let before = std::fs::read(&original).expect("read");
        let after = std::fs::read(copy.join(relative)).expect("read");
        let expected = if relative == Path::new("flows/ci-watch.yaml") {
            String::from_utf8(before)
                .expect("utf-8")
                .replace("timeout: 1h30m", "timeout: 90m")
                .into_bytes()
        } else {
            before
        };
        assert_eq!(after, expected, "{}", relative.display());
    }
    // Nothing is left to fix.
    let again = ozcheck_in(tmp.path(), &["lint", "--diff", "sample"], "", &[]);
    assert_eq!((again.status.code(), out(&again).as_str()), (Some(0), ""));
}

#[test]
fn fix_on_standard_input_prints_the_fixed_text() {
    let text = "name: w\nsteps:\n  - id: a\n    wait_for_event: {source: s, timeout: 1.5h}\n";
    let o = ozcheck_in(
        repo(),
        &["lint", "--fix", "--stdin-filename", "flows/w.yaml", "-"],
        text,
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), text.replace("1.5h", "90m"));
}

#[test]
fn exit_zero_quiet_statistics_and_output_file() {
    let sample = ["corpus/plugins/sample"];
    let base = |extra: &[&str]| {
        let mut args = vec!["lint"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&sample);
        ozcheck_in(repo(), &args, "", &[])
    };
    assert_eq!(base(&[]).status.code(), Some(1));
    assert_eq!(base(&["--exit-zero"]).status.code(), Some(0));
    let loud = out(&base(&[]));
    let quiet = out(&base(&["--quiet"]));
    assert!(loud.ends_with("1 error, 1 warning in 3 files\n"), "{loud}");
    assert_eq!(format!("{quiet}1 error, 1 warning in 3 files\n"), loud);
    let stats = out(&base(&["--statistics"]));
    assert_eq!(
        stats,
        "1  compound-timeout  [*]  A timeout combines several units\n1  unknown-key       [ ]  A key the plugin schema does not know\nFound 2 findings (1 fixable with `ozcheck lint --fix`).\n"
    );
    // Statistics have no SARIF or GitHub form: refused, not silently printed as text.
    for format in ["sarif", "github"] {
        let o = base(&["--statistics", "--format", format]);
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert_eq!(out(&o), "");
        assert!(
            err(&o).contains("--statistics prints a table"),
            "{}",
            err(&o)
        );
    }
    let json = out(&base(&["--statistics", "--format", "json"]));
    let value: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(value[0]["code"], "compound-timeout");
    assert_eq!(value[0]["fixable"], true);
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("out.sarif");
    let o = base(&[
        "--format",
        "sarif",
        "--output-file",
        file.to_str().expect("utf-8"),
    ]);
    assert_eq!((o.status.code(), out(&o).as_str()), (Some(1), ""));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("json");
    assert_eq!(written["version"], "2.1.0");
    // An output file that cannot be written is said on standard error, not only in the code.
    let unwritable = tmp.path().join("no-such-folder/out.txt");
    let o = base(&["--output-file", unwritable.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).starts_with("ozcheck lint: ") && err(&o).contains("no-such-folder/out.txt"),
        "{}",
        err(&o)
    );
}

#[test]
fn color_follows_the_flag_then_no_color_then_force_color() {
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["lint"];
        args.extend_from_slice(extra);
        args.push("corpus/plugins/sample");
        out(&ozcheck_in(repo(), &args, "", env)).contains('\u{1b}')
    };
    assert!(!run(&[], &[]), "not a terminal: no colour");
    assert!(run(&[], &[("FORCE_COLOR", "1")]));
    assert!(!run(&[], &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
    assert!(run(&["--color", "always"], &[("NO_COLOR", "1")]));
    assert!(!run(&["--color", "never"], &[("FORCE_COLOR", "1")]));
    assert!(
        !run(&[], &[("FORCE_COLOR", "")]),
        "an empty FORCE_COLOR does not count"
    );
}

#[test]
fn configuration_is_found_in_a_parent_folder() {
    let tmp = tempfile::tempdir().expect("tmp");
    std::fs::write(
        tmp.path().join("ozcheck.toml"),
        "[rules]\ncompound-timeout = \"off\"\n",
    )
    .expect("write");
    let plugin = tmp.path().join("repo/plugin");
    copy_dir(&repo().join("corpus/plugins/sample"), &plugin);
    let nested = plugin.join("flows");
    // From the plugin's own folder, and from a folder inside it with no path given.
    let o = ozcheck_in(
        &tmp.path().join("repo"),
        &["lint", "--format", "concise", "plugin"],
        "",
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let mut flows: Vec<String> = std::fs::read_dir(&nested)
        .expect("read flows")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    flows.sort();
    let mut args = vec!["lint", "--format", "concise"];
    args.extend(flows.iter().map(String::as_str));
    let o = ozcheck_in(&nested, &args, "", &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    // A broken one is a usage error that names it.
    std::fs::write(
        tmp.path().join("ozcheck.toml"),
        "[rules]\nno-such = \"off\"\n",
    )
    .expect("write");
    let o = ozcheck_in(&nested, &args, "", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("ozcheck.toml"), "{}", err(&o));
}

#[test]
fn without_a_path_only_plugin_folders_are_linted() {
    let tmp = tempfile::tempdir().expect("tmp");
    copy_dir(
        &repo().join("corpus/plugins/sample"),
        &tmp.path().join("plugin"),
    );
    // YAML outside agents/, flows/, routines/ that looks like a flow: a CI file, a scenario.
    std::fs::create_dir_all(tmp.path().join("scenarios")).expect("mkdir");
    std::fs::write(
        tmp.path().join("scenarios/s.yaml"),
        "steps:\n  - op: ingest\n",
    )
    .expect("write");
    std::fs::write(tmp.path().join("ci.yaml"), "name: ci\ntrigger: push\n").expect("write");
    // A routine at the plugin's top, beside its kind folders, is the plugin's.
    std::fs::write(
        tmp.path().join("plugin/extra.yaml"),
        "name: extra\nagent: pr-helpr\ntools: [oz.wait_for_event]\n",
    )
    .expect("write");
    let o = ozcheck_in(tmp.path(), &["lint", "--format", "concise"], "", &[]);
    let files: std::collections::BTreeSet<String> = out(&o)
        .lines()
        .map(|l| l.split(':').next().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        [
            "plugin/extra.yaml",
            "plugin/flows/ci-watch.yaml",
            "plugin/routines/pr-review.yaml"
        ]
    );
    // A file named on the command line is still linted whatever its folder.
    let o = ozcheck_in(
        tmp.path(),
        &["lint", "--format", "concise", "scenarios/s.yaml"],
        "",
        &[],
    );
    assert!(out(&o).contains("scenarios/s.yaml:"), "{}", out(&o));
}

#[test]
fn standard_input_without_a_name_has_no_name_mismatch() {
    let text = "name: helper\nruntime: acp\nmodle: x\n";
    let o = ozcheck_in(repo(), &["lint", "--format", "concise", "-"], text, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        out(&o),
        "-:3:1: warning[unknown-key] unknown key `modle` in an agent file (help: did you mean `model`?)\n"
    );
}

#[test]
fn line_breaks_from_the_file_are_escaped_in_concise_and_full() {
    // A key with a carriage return in it (quoted): the finding must stay one line.
    let text = "name: helper\nruntime: acp\n\"mod\\rle\": x\n";
    for format in ["concise", "full"] {
        let o = ozcheck_in(
            repo(),
            &[
                "lint",
                "--format",
                format,
                "--stdin-filename",
                "agents/helper.yaml",
            ],
            text,
            &[],
        );
        let printed = out(&o);
        assert!(!printed.contains('\r'), "{format}: {printed:?}");
        assert!(printed.contains("mod\\rle"), "{format}: {printed:?}");
    }
}

#[test]
fn filter_reads_standard_input_with_a_dash_as_lint_does() {
    for args in [
        &["filter", "--format", "json", "-"][..],
        &["filter", "--format", "json", "--file", "-"][..],
    ] {
        let o = ozcheck_in(repo(), args, "event.text.contains('LGTM')\n", &[]);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
        let value: serde_json::Value = serde_json::from_str(&out(&o)).expect("json");
        assert_eq!(value["verdict"], "accepted");
    }
    let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let o = ozcheck_in(repo(), &["filter", "-"], nested, &[]);
    assert_eq!(o.status.code(), Some(1));
    // An endless stream is cut off, not read into memory.
    let huge = "x".repeat(2 * 1024 * 1024);
    let o = ozcheck_in(repo(), &["filter", "-"], &huge, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
}

#[test]
fn cel_spec_says_which_mode_ran_and_help_lists_every_command() {
    let file = repo().join("corpus/cel-spec/basic.jsonl");
    let file = file.to_str().expect("utf-8");
    let parse = ozcheck_in(repo(), &["cel-spec", "--parse-only", file], "", &[]);
    assert!(err(&parse).contains("mode: parse only"), "{}", err(&parse));
    let full = ozcheck_in(repo(), &["cel-spec", file], "", &[]);
    assert!(err(&full).contains("mode: evaluate"), "{}", err(&full));
    let help = out(&ozcheck_in(repo(), &["--help"], "", &[]));
    for command in ["conformance-adapter", "server", "lint", "serve"] {
        assert!(help.contains(&format!("  {command} ")), "{command}: {help}");
    }
    assert!(help.contains("docs/cli.md"), "{help}");
    assert!(
        repo().join("docs/cli.md").is_file(),
        "the contract --help points at exists"
    );
}
