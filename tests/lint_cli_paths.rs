//! What `ozcheck lint` does with the paths it is given: every file is linted under its own
//! nearest `ozcheck.toml` whatever the order and grouping of the paths (a property over a tree
//! of plugins with differing configurations), `--config` and `--isolated` apply to all, a path
//! with nothing to lint is a usage error unless `--allow-empty`, and a missing path among
//! several is reported while the others are still linted.

use std::path::Path;
use std::process::{Command, Output};

use proptest::prelude::*;

fn ozcheck_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("ozcheck runs")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A flow that breaks `compound-timeout` (error) and `unknown-key` (warning).
const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n      timout: 5m\n";

/// Three plugins: `a` turns `compound-timeout` off, `b` has no configuration of its own (the
/// root's, which makes `unknown-key` an error, applies), `c/inner` is a plugin below a folder
/// whose configuration turns `unknown-key` off.
fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    write(
        &root.join("ozcheck.toml"),
        "[rules]\nunknown-key = \"error\"\n",
    );
    write(
        &root.join("a/ozcheck.toml"),
        "[rules]\ncompound-timeout = \"off\"\n",
    );
    write(
        &root.join("c/ozcheck.toml"),
        "[rules]\nunknown-key = \"off\"\n",
    );
    for plugin in ["a", "b", "c/inner"] {
        write(&root.join(plugin).join("flows/watch.yaml"), FLOW);
        write(&root.join(plugin).join("flows/other.yaml"), FLOW);
    }
    tmp
}

/// The findings as sorted lines and the exit code.
fn verdict(o: &Output) -> (Vec<String>, Option<i32>) {
    let mut lines: Vec<String> = out(o).lines().map(str::to_owned).collect();
    lines.sort();
    (lines, o.status.code())
}

/// Every path of the tree as a file, its plugin folder or its `flows/` folder.
const GROUPINGS: &[&[&str]] = &[
    &["a"],
    &["a/flows"],
    &["a/flows/watch.yaml", "a/flows/other.yaml"],
    &["b"],
    &["b/flows"],
    &["b/flows/watch.yaml", "b/flows/other.yaml"],
    &["c"],
    &["c/inner"],
    &["c/inner/flows/watch.yaml", "c/inner/flows/other.yaml"],
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the order and grouping, the findings and exit code are those of linting the
    /// whole tree at once.
    #[test]
    fn order_and_grouping_do_not_change_the_result(
        a in 0usize..3, b in 3usize..6, c in 6usize..9,
        order in Just(vec![0usize, 1, 2]).prop_shuffle(),
        split in proptest::bool::ANY,
    ) {
        let tmp = tree();
        let whole = verdict(&ozcheck_in(tmp.path(), &["lint", "--format", "concise", "."]));
        let chosen = [GROUPINGS[a], GROUPINGS[b], GROUPINGS[c]];
        let mut paths: Vec<&str> = order.iter().flat_map(|&i| chosen[i].iter().copied()).collect();
        if split {
            paths.reverse();
        }
        let mut args = vec!["lint", "--format", "concise"];
        args.extend(&paths);
        let o = ozcheck_in(tmp.path(), &args);
        prop_assert_eq!(verdict(&o), whole.clone(), "{:?}: {}", paths, err(&o));
    }
}

#[test]
fn each_file_gets_its_own_nearest_configuration() {
    let tmp = tree();
    let run = |args: &[&str]| {
        let o = ozcheck_in(tmp.path(), args);
        (out(&o), o.status.code())
    };
    // `a b` and `b a`: the failure that let an error through a hook.
    let (ab, ab_code) = run(&["lint", "--format", "concise", "a", "b"]);
    let (ba, ba_code) = run(&["lint", "--format", "concise", "b", "a"]);
    assert_eq!((ab_code, ba_code), (Some(1), Some(1)));
    assert!(
        !ab.contains("a/flows/watch.yaml:6:16: error[compound-timeout]"),
        "{ab}"
    );
    assert!(
        ab.contains("b/flows/watch.yaml:6:16: error[compound-timeout]"),
        "{ab}"
    );
    assert!(
        ab.contains("b/flows/watch.yaml:7:7: error[unknown-key]"),
        "{ab}"
    );
    assert!(
        !run(&["lint", "--format", "concise", "c"])
            .0
            .contains("unknown-key")
    );
    let mut lines_ab: Vec<_> = ab.lines().collect();
    let mut lines_ba: Vec<_> = ba.lines().collect();
    lines_ab.sort_unstable();
    lines_ba.sort_unstable();
    assert_eq!(lines_ab, lines_ba);
    // `--isolated` reads none: the defaults (compound-timeout on, unknown-key a warning).
    let (isolated, _) = run(&["lint", "--format", "concise", "--isolated", "a", "c"]);
    assert!(
        isolated.contains("a/flows/watch.yaml:6:16: error[compound-timeout]"),
        "{isolated}"
    );
    assert!(
        isolated.contains("c/inner/flows/watch.yaml:7:7: warning[unknown-key]"),
        "{isolated}"
    );
    // `--config` applies one file to every path.
    let (named, code) = run(&[
        "lint",
        "--format",
        "concise",
        "--config",
        "a/ozcheck.toml",
        "b",
        "c",
    ]);
    assert!(!named.contains("compound-timeout"), "{named}");
    assert!(
        named.contains("c/inner/flows/watch.yaml:7:7: warning[unknown-key]"),
        "{named}"
    );
    assert_eq!(code, Some(0));
}

#[test]
fn a_path_with_nothing_to_lint_is_a_usage_error_unless_allowed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    std::fs::create_dir_all(root.join("empty")).expect("mkdir");
    write(&root.join("readmes/README.md"), "# notes\n");
    write(&root.join("readmes/ci.yaml"), "on: push\n");
    for folder in ["empty", "readmes"] {
        let o = ozcheck_in(root, &["lint", folder]);
        assert_eq!(o.status.code(), Some(2), "{folder}: {}", out(&o));
        assert_eq!(
            err(&o),
            format!(
                "ozcheck lint: {folder}: no agent, flow or routine file to lint (YAML under \
                 agents/, flows/ or routines/); pass --allow-empty to accept that\n"
            )
        );
        assert_eq!(out(&o), "", "nothing but the one line");
        let o = ozcheck_in(root, &["lint", "--allow-empty", folder]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        assert_eq!(out(&o), "0 errors, 0 warnings in 0 files\n");
    }
    // With no path, the current folder is the path.
    let o = ozcheck_in(&root.join("empty"), &["lint"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn an_empty_or_comment_only_plugin_file_is_a_finding() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path();
    write(&root.join("p/flows/x.yaml"), "");
    write(&root.join("p/routines/y.yaml"), "# nothing yet\n\n");
    write(&root.join("p/agents/z.yaml"), "---\n");
    let o = ozcheck_in(root, &["lint", "--format", "concise", "p"]);
    assert_eq!(o.status.code(), Some(1));
    let text = out(&o);
    for file in ["p/flows/x.yaml", "p/routines/y.yaml"] {
        assert!(
            text.contains(&format!(
                "{file}:1:1: error[wrong-type] the file must be a mapping, not empty"
            )),
            "{text}"
        );
    }
    assert!(
        text.contains("p/agents/z.yaml:2:1: error[wrong-type] the file must be a mapping"),
        "{text}"
    );
}

#[test]
fn a_missing_path_among_several_is_reported_and_the_rest_linted() {
    let tmp = tree();
    let o = ozcheck_in(
        tmp.path(),
        &["lint", "--format", "concise", "nope", "b", "gone.yaml"],
    );
    assert_eq!(o.status.code(), Some(2));
    let stderr = err(&o);
    assert!(stderr.starts_with("ozcheck lint: nope: "), "{stderr}");
    assert!(stderr.contains("ozcheck lint: gone.yaml: "), "{stderr}");
    assert!(out(&o).contains("b/flows/watch.yaml:6:16: error[compound-timeout]"));
    // Only missing paths: the lines and nothing else.
    let o = ozcheck_in(tmp.path(), &["lint", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(out(&o), "");
}

#[test]
fn documented_commands_work_with_any_target_dir_and_start_one_server_per_project() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    // A fixed `target/release/ozcheck` fails when `CARGO_TARGET_DIR` moves the build.
    assert!(
        !readme.contains("\"target/release/ozcheck"),
        "README names target/release"
    );
    assert!(
        readme.contains(
            "--adapter \"${CARGO_TARGET_DIR:-target}/release/ozcheck conformance-adapter\""
        )
    );
    let cli = std::fs::read_to_string(root.join("docs/cli.md")).expect("docs/cli.md");
    // `start_client` in a FileType autocommand started a server for every buffer.
    assert!(
        !cli.contains("vim.lsp.start_client"),
        "docs/cli.md starts a server per buffer"
    );
    assert!(cli.contains("vim.lsp.start({") && cli.contains("root_dir ="));
}

#[test]
fn no_ignores_reports_what_a_suppression_hid() {
    let tmp = tempfile::tempdir().expect("tmp");
    write(
        &tmp.path().join("p/flows/w.yaml"),
        "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: 1h30m  # ozcheck: ignore[compound-timeout]\n",
    );
    let o = ozcheck_in(tmp.path(), &["lint", "--format", "concise", "p"]);
    assert_eq!((o.status.code(), out(&o).as_str()), (Some(0), ""));
    let o = ozcheck_in(
        tmp.path(),
        &["lint", "--format", "concise", "--no-ignores", "p"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out(&o).starts_with("p/flows/w.yaml:6:16: error[compound-timeout]"),
        "{}",
        out(&o)
    );
}
