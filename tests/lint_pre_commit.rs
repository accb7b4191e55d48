//! The shipped pre-commit hook under pre-commit itself (issue 34's acceptance): a repository
//! holds two plugins whose `ozcheck.toml` differ (`compound-timeout` off in one, broken in the
//! other), and `pre-commit try-repo` of this repository's `.pre-commit-hooks.yaml` runs the
//! `ozcheck-lint-system` hook over all files with the `ozcheck` these tests built on `PATH`.
//! With the configurations one way round and then the other, the hook fails on exactly the
//! broken plugin's file: the result does not depend on the order in which pre-commit passes
//! the paths.
//!
//! pre-commit is found as `$OZCHECK_PRE_COMMIT` or `pre-commit` on `PATH` (`.ci/run` installs it
//! with pip into a virtual environment). Without it the test says loudly that it was skipped;
//! under `CI=true` a missing pre-commit is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n";

fn pre_commit() -> Option<PathBuf> {
    let program = std::env::var_os("OZCHECK_PRE_COMMIT")
        .map_or_else(|| PathBuf::from("pre-commit"), PathBuf::from);
    Command::new(&program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(program)
}

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_AUTHOR_NAME", "ozcheck test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "ozcheck test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Writes the two plugins, `off` with the rule turned off, and commits them.
fn plugins(repo: &Path, off: &str) {
    for plugin in ["a", "b"] {
        std::fs::create_dir_all(repo.join(plugin).join("flows")).expect("mkdir");
        std::fs::write(repo.join(plugin).join("flows/watch.yaml"), FLOW).expect("write");
        let rules = if plugin == off {
            "[rules]\ncompound-timeout = \"off\"\n"
        } else {
            "[rules]\n"
        };
        std::fs::write(repo.join(plugin).join("ozcheck.toml"), rules).expect("write");
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "plugins"]);
}

fn run_hook(program: &Path, repo: &Path, home: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_ozcheck"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    Command::new(program)
        .args([
            "try-repo",
            env!("CARGO_MANIFEST_DIR"),
            "ozcheck-lint-system",
        ])
        .args(["--all-files", "--color", "never"])
        .current_dir(repo)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", home)
        .env("GIT_AUTHOR_NAME", "ozcheck test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "ozcheck test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("pre-commit runs")
}

#[test]
fn the_system_hook_fails_on_the_broken_plugin_in_either_order() {
    let Some(program) = pre_commit() else {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v != "true"),
            "CI=true but pre-commit is missing: pip install pre-commit (.ci/run does)"
        );
        eprintln!(
            "SKIPPED the_system_hook_fails_on_the_broken_plugin_in_either_order: no pre-commit \
             (set OZCHECK_PRE_COMMIT or put it on PATH)"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q"]);
    for (off, broken) in [("a", "b"), ("b", "a")] {
        plugins(&repo, off);
        let out = run_hook(&program, &repo, &tmp.path().join("home"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
        let finding = format!("{broken}/flows/watch.yaml:6:16: error[compound-timeout]");
        assert!(stdout.contains(&finding), "{stdout}\n{stderr}");
        assert!(
            !stdout.contains(&format!("{off}/flows/watch.yaml:")),
            "{stdout}"
        );
    }
}
