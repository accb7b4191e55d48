//! `ozcheck server` from a real editor's LSP client: Neovim, headless (Debian's `neovim`,
//! which `.ci/run` installs). Neovim opens a flow with a compound timeout, must receive the
//! diagnostic at its exact range, applies the server's quick fix through its own workspace-edit
//! code and writes the file, which then lints clean with `ozcheck lint`.
//!
//! Without `nvim` on the machine the test says loudly that it was skipped; under `CI=true` a
//! missing `nvim` is a failure.

use std::path::Path;
use std::process::Command;

const FLOW: &str = "# A flow to fix: the timeout has two units.\nname: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      filter: \"event.text.contains('é')\"\n      timeout: 1h30m   # ninety minutes\n";

fn nvim_available() -> bool {
    Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn neovim_receives_the_diagnostic_and_its_fix_leaves_the_file_clean() {
    if !nvim_available() {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v != "true"),
            "CI=true but nvim is missing: install Debian's neovim (.ci/run does)"
        );
        eprintln!(
            "SKIPPED neovim_receives_the_diagnostic_and_its_fix_leaves_the_file_clean: no nvim on PATH"
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tmp");
    let flows = tmp.path().join("plugin/flows");
    std::fs::create_dir_all(&flows).expect("mkdir");
    let file = flows.join("watch.yaml");
    std::fs::write(&file, FLOW).expect("write");
    let out = tmp.path().join("seen.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/lsp_fix.lua");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("OZCHECK_BIN", env!("CARGO_BIN_EXE_ozcheck"))
        .env("OZCHECK_FILE", &file)
        .env("OZCHECK_OUT", &out)
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .env("XDG_DATA_HOME", tmp.path().join("data"))
        .env("XDG_CONFIG_HOME", tmp.path().join("config"))
        .status()
        .expect("nvim runs");
    assert!(status.success(), "nvim: {status}");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("nvim wrote its report"))
            .expect("JSON");
    assert!(seen.get("error").is_none(), "{seen:#}");
    assert_eq!(seen["stage"], "done", "{seen:#}");
    // The diagnostic at the exact range of `1h30m`: line 7, bytes 15..20 (0-based, as Neovim
    // keeps them).
    let before = seen["before"].as_array().expect("diagnostics");
    assert_eq!(before.len(), 1, "{seen:#}");
    let d = &before[0];
    assert_eq!(d["code"], "compound-timeout", "{seen:#}");
    assert_eq!(
        (&d["lnum"], &d["col"], &d["end_lnum"], &d["end_col"]),
        (&7.into(), &15.into(), &7.into(), &20.into()),
        "{seen:#}"
    );
    assert_eq!(
        seen["actions"][0], "write 90m (compound-timeout)",
        "{seen:#}"
    );
    assert_eq!(seen["after"], serde_json::json!([]), "{seen:#}");
    // The file Neovim wrote: only the timeout changed, and it lints clean.
    let written = std::fs::read_to_string(&file).expect("read");
    assert_eq!(written, FLOW.replace("1h30m", "90m"));
    let lint = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(["lint", "--format", "concise"])
        .arg(&file)
        .output()
        .expect("lint runs");
    assert_eq!(
        lint.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    assert!(
        lint.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}
