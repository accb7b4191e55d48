//! `ozcheck filter` as a user runs it: exit codes, and the JSON contract of DESIGN.md.

use std::process::Command;

fn ozcheck(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["filter", "--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, _) = ozcheck(&all);
    (
        code,
        serde_json::from_str(&stdout).expect("one JSON object"),
    )
}

#[test]
fn accepted_filter_exits_zero_with_the_contract_fields() {
    let (code, v) = json(&["event.action == 'opened' && !event.attributes.draft"]);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"], "accepted");
    assert_eq!(v["limit"], 1_000_000);
    assert!(v["diagnostics"].as_array().unwrap().is_empty());
    assert!(v.get("cost").is_some());
    assert_eq!(
        v["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
}

#[test]
fn refused_filter_exits_one_with_spans() {
    let source = "event.atributes.draft == false";
    let (code, v) = json(&[source]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "refused");
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "unknown-field");
    assert_eq!(d["severity"], "error");
    let (start, end) = (
        d["span"]["start"].as_u64().unwrap() as usize,
        d["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&source[start..end], "atributes");
    assert_eq!(
        v["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
}

#[test]
fn limit_flag_is_reported() {
    let (_, v) = json(&["--limit", "77", "event.text == 'x'"]);
    assert_eq!(v["limit"], 77);
}

#[test]
fn context_flag_selects_the_environment() {
    let (code, _) = json(&["--context", "when", "trigger.event.action == 'opened'"]);
    assert_eq!(code, 0);
    let (code, v) = json(&["trigger.event.action == 'opened'"]);
    assert_eq!(code, 1);
    assert_eq!(v["diagnostics"][0]["code"], "unknown-variable");
}

#[test]
fn a_filter_that_is_not_a_bool_is_refused() {
    for source in ["size(event.text)", "event.subject", "1 + 2"] {
        let (code, v) = json(&[source]);
        assert_eq!(code, 1, "{source}");
        assert_eq!(v["diagnostics"][0]["code"], "wrong-result-type", "{source}");
    }
    let (_, v) = json(&["size(event.text)"]);
    assert_eq!(
        v["diagnostics"][0]["message"],
        "a filter must give a bool, but this one gives int"
    );
    // A sender names who sent the event; templates take any type.
    let (code, _) = json(&["--context", "sender", "event.subject"]);
    assert_eq!(code, 0);
    let (code, _) = json(&["--context", "template", "trigger.event.subject"]);
    assert_eq!(code, 0);
    let (code, v) = json(&["--context", "when", "trigger.event.subject"]);
    assert_eq!(code, 1);
    assert_eq!(v["diagnostics"][0]["code"], "wrong-result-type");
}

#[test]
fn usage_and_io_errors_exit_two() {
    let (code, _, stderr) = ozcheck(&["filter"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = ozcheck(&["filter", "--file", "no/such/file.cel"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read"));
    let (code, _, _) = ozcheck(&["filter", "--context", "nowhere", "true"]);
    assert_eq!(code, 2);
}

#[test]
fn full_format_renders_the_label_under_the_cause() {
    let (code, stdout, _) = ozcheck(&["filter", "event.text.contians('x')"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("unknown function `contians`"));
    assert!(stdout.contains("did you mean `contains`?"));
    assert!(stdout.trim_end().ends_with("refused"));
}

#[test]
fn explain_prints_the_cost_tree_with_assumptions() {
    let (code, stdout, _) = ozcheck(&[
        "filter",
        "--explain",
        "event.attributes.labels.exists(l, event.text.contains(l))",
    ]);
    assert_eq!(code, 1);
    assert!(stdout.contains("event.text.contains(l)"), "{stdout}");
    assert!(stdout.contains("event.text ≤ 16384 bytes"), "{stdout}");
    let (_, v) = json(&["--explain", "event.text.contains('LGTM')"]);
    assert!(v["explain"].as_str().unwrap().contains("event.text"));
}

#[test]
fn bounds_flags_change_the_estimate() {
    let source = "event.text.contains('LGTM')";
    let (_, default) = json(&[source]);
    let (_, small) = json(&["--max-text", "100", source]);
    assert!(small["cost"]["max"].as_u64() < default["cost"]["max"].as_u64());
    let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let (code, _) = json(&["--max-attributes", "64", nested]);
    assert_eq!(code, 0, "tiny attributes make the nested exists affordable");
}

/// The acceptance: the witness of a filter refused by cost is an event on which the
/// metered evaluation, run without the static check, really stops at the cost limit.
#[test]
fn the_witness_of_a_refused_filter_replays_to_the_cost_limit() {
    let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("w.json");
    let file = path.to_str().expect("utf-8 path");
    let (code, v) = json(&["--witness", file, nested]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "refused");
    assert!(
        v["witness_cost"].as_u64().expect("witness_cost") > 1_000_000,
        "{v}"
    );
    let (code, stdout, _) = ozcheck(&[
        "eval",
        "--format",
        "json",
        "--no-static-check",
        "--deadline-ms",
        "600000",
        "--event",
        file,
        nested,
    ]);
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["error"]["kind"], "cost-limit", "{out}");
    // An accepted filter's witness is metered within its estimate.
    let (code, v) = json(&[
        "--witness",
        file,
        "event.attributes.labels.exists(l, l == 'urgent')",
    ]);
    assert_eq!(code, 0);
    let max = v["cost"]["max"].as_u64().expect("max");
    let witness = v["witness_cost"].as_u64().expect("witness_cost");
    assert!(witness <= max && witness * 2 > max, "{v}");
}

/// A witness written at bounds other than the defaults replays when `eval` is given the same
/// bounds (it refused the 20,000-byte text as over its default 16 KiB), and the static check of
/// `eval` estimates for those bounds.
#[test]
fn a_witness_at_other_bounds_replays_with_the_same_bounds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("w.json");
    let file = path.to_str().expect("utf-8 path");
    let filter = "event.text.size() > 10 && event.text.contains('x')";
    let (code, v) = json(&["--max-text", "20000", "--witness", file, filter]);
    assert_eq!(code, 0, "{v}");
    let witness = v["witness_cost"].as_u64().expect("witness_cost");
    let max = v["cost"]["max"].as_u64().expect("max");
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("witness file")).expect("JSON");
    assert!(
        event["text"].as_str().expect("text").len() > 16 * 1024,
        "{event}"
    );
    // At the default bounds the event is refused as too large: a usage error.
    let (code, _, stderr) = ozcheck(&["eval", "--event", file, filter]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("over its bound"), "{stderr}");
    // With the witness's bounds it runs, at the witness's cost, within the same estimate.
    let (code, stdout, stderr) = ozcheck(&[
        "eval",
        "--format",
        "json",
        "--max-text",
        "20000",
        "--event",
        file,
        filter,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(out["cost"].as_u64(), Some(witness), "{out}");
    assert_eq!(out["estimate"]["max"].as_u64(), Some(max), "{out}");
}

/// Issue 33, item 3, as a user meets it: the witness of a refused filter that sorts or
/// de-duplicates the parts of the text replays to the cost limit (it stayed far under it), the
/// witness of an accepted filter over strings replays without a runtime error (it had integers
/// and failed with "no matching overload"), and a refused filter no event makes expensive gets a
/// witness that says plainly it proves nothing, in the text and in JSON.
#[test]
fn witnesses_replay_as_written_or_say_why_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("w.json");
    let file = path.to_str().expect("utf-8 path");
    let eval = |source: &str| {
        let (code, stdout, _) = ozcheck(&[
            "eval",
            "--format",
            "json",
            "--no-static-check",
            "--deadline-ms",
            "600000",
            "--event",
            file,
            source,
        ]);
        let out: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        (code, out)
    };
    for refused in [
        "event.text.split(',').distinct().size() > 0",
        "event.attributes.items.sortBy(x, x.name).size() > 0",
    ] {
        let (code, v) = json(&["--witness", file, refused]);
        assert_eq!(code, 1, "{v}");
        assert_eq!(v["witness_shortfall"], serde_json::Value::Null, "{v}");
        let (code, out) = eval(refused);
        assert_eq!(code, 1, "{refused}: {out}");
        assert_eq!(out["error"]["kind"], "cost-limit", "{refused}: {out}");
    }
    let accepted = "event.attributes.files.all(f, !f.endsWith('.lock'))";
    let (code, v) = json(&["--witness", file, accepted]);
    assert_eq!(code, 0);
    assert_eq!(v["witness_failure"], serde_json::Value::Null, "{v}");
    let (code, out) = eval(accepted);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["cost"], v["witness_cost"], "{out}");

    let cheap = "event.attributes.exists(k, event.attributes.exists(j, k == j))";
    let (code, v) = json(&["--witness", file, cheap]);
    assert_eq!(code, 1);
    let why = v["witness_shortfall"].as_str().expect("a shortfall");
    assert!(
        why.contains("no event found that costs more than the limit"),
        "{why}"
    );
    let (_, text, _) = ozcheck(&["filter", "--witness", file, cheap]);
    assert!(
        text.contains("witness: it does not prove the refusal: no event found"),
        "{text}"
    );
}

/// Issue 33 item 3: `--witness` on an expression that does not compile prints the report that
/// `filter` prints without it (the JSON with the diagnostics, exit 1), writes no witness file
/// and says so beside the report (it exited 2 and printed nothing on standard output).
#[test]
fn a_witness_of_an_expression_that_does_not_compile_is_the_report_and_no_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("w.json");
    let file = path.to_str().expect("utf-8 path");
    for broken in ["event.nope +", "event.text.contains(1)"] {
        let (plain_code, plain, _) = ozcheck(&["filter", "--format", "json", broken]);
        let (code, stdout, stderr) =
            ozcheck(&["filter", "--format", "json", "--witness", file, broken]);
        assert_eq!(code, plain_code, "{broken}: {stderr}");
        assert_eq!(code, 1, "{broken}: {stderr}");
        assert_eq!(stdout, plain, "{broken}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        assert!(!v["diagnostics"].as_array().expect("diagnostics").is_empty());
        assert!(
            stderr.contains("witness: none written to") && stderr.contains("does not compile"),
            "{stderr}"
        );
        assert!(!path.exists(), "{broken}: a witness file was written");
        let (code, text, _) = ozcheck(&["filter", "--witness", file, broken]);
        assert_eq!(code, 1);
        assert!(text.contains("witness: none written to"), "{text}");
        assert!(!path.exists());
    }
    // A context whose expressions see no event has no witness: still a usage error.
    let (code, _, stderr) = ozcheck(&["filter", "--context", "when", "--witness", file, "true"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not an event filter's"), "{stderr}");
}

/// A filter refused by cost is told the bound that would pass it, in JSON and in the text: the
/// suggested value passes when given back as its flag, one byte more is still refused.
#[test]
fn a_refusal_by_cost_says_which_bound_would_pass() {
    let source = "event.attributes.labels.exists(l, event.text.contains(l))";
    let (code, v) = json(&[source]);
    assert_eq!(code, 1);
    let bounds = v["would_pass"]["bounds"].as_array().expect("bounds");
    assert_eq!(bounds.len(), 2, "{v}");
    for b in bounds {
        let flag = b["flag"].as_str().expect("flag");
        let at_most = b["at_most"].as_u64().expect("at_most");
        let fits = at_most.to_string();
        let (code, passing) = json(&[flag, &fits, source]);
        assert_eq!(code, 0, "{flag} {fits}: {passing}");
        assert_eq!(passing["cost"]["max"], b["cost"]);
        assert_eq!(passing["would_pass"], serde_json::Value::Null);
        let (code, _) = json(&[flag, &(at_most + 1).to_string(), source]);
        assert_eq!(code, 1, "{flag} {}", at_most + 1);
    }
    let help = v["diagnostics"][0]["help"].as_str().expect("help");
    assert!(help.contains("it would pass: with event."), "{help}");
    let (_, text, _) = ozcheck(&["filter", source]);
    let flag = bounds[0]["flag"].as_str().expect("flag");
    let line = format!("would pass with {flag} {}", bounds[0]["at_most"]);
    assert!(text.contains(&line), "{text}");

    let header = "event.attributes.labels.exists(l, event.subject.contains(l))";
    let (_, v) = json(&["--limit", "50000", header]);
    let flags: Vec<&str> = v["would_pass"]["bounds"]
        .as_array()
        .expect("bounds")
        .iter()
        .filter_map(|b| b["flag"].as_str())
        .collect();
    assert!(flags.contains(&"--max-header"), "{v}");
    let (code, _) = json(&["--limit", "50000", "--max-header", "0", header]);
    assert_eq!(code, 0, "without headers the subject costs nothing");
}

#[test]
fn a_cost_no_bound_changes_says_so() {
    let source = "lists.range(1500).exists(i, lists.range(1500).exists(j, i == j + 1))";
    let (code, v) = json(&[source]);
    assert_eq!(code, 1);
    assert_eq!(v["would_pass"]["bounds"], serde_json::json!([]));
    let floors = v["would_pass"]["not_enough"].as_array().expect("floors");
    assert_eq!(floors.len(), 3);
    assert!(floors.iter().all(|f| f["cost"] == v["cost"]["max"]), "{v}");
    let (_, text, _) = ozcheck(&["filter", source]);
    assert!(text.contains("its cost does not depend"), "{text}");
}

/// `--compare-model 3`: the figure under the version before charge by work, beside the current
/// one; a long key looked up in a map costs one unit under version 3 and its probes now.
#[test]
fn compare_model_shows_an_earlier_carried_version() {
    let source = "{'a': 1, 'b': 2}[event.text] == 1";
    let (code, stdout, _) = ozcheck(&["filter", "--compare-model", "3", source]);
    assert_eq!(code, 0, "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("cost model 10 (current): "),
        "{stdout}"
    );
    assert!(lines[1].starts_with("cost model 3: "), "{stdout}");
    let (code, v) = json(&["--compare-model", "3", source]);
    assert_eq!(code, 0);
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 3);
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    assert!(max(&models[0]) > max(&models[1]), "{v}");
}

/// `--compare-model 4`: version 5 tightened the estimator, so a comparison inside a loop that
/// version 4 refused is accepted now, and the report shows both figures.
#[test]
fn compare_model_shows_what_version_5_tightened() {
    let source = "event.attributes.reviewers.exists(r, r == event.attributes.author)";
    let (code, v) = json(&["--compare-model", "4", source]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 4);
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    assert!(max(&models[0]) < 100_000, "{v}");
    assert!(max(&models[1]) > 1_000_000, "{v}");
}

/// `--compare-model 5`: version 6 sizes the key and the value of one entry apart and `%s` of a
/// loop's element at its own size, so a filter version 5 refused is accepted now.
#[test]
fn compare_model_shows_what_version_6_tightened() {
    let source = "event.attributes.l.exists(k, '%s'.format([k]) == 'x')";
    let (code, v) = json(&["--compare-model", "5", source]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 5);
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    assert!(max(&models[0]) < 1_000_000, "{v}");
    assert!(max(&models[1]) > 2_000_000, "{v}");
    let (code, v) = json(&[
        "--compare-model",
        "5",
        "event.attributes.m.exists(k, v, v.contains(k))",
    ]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert!(max(&models[0]) < 250_000, "{v}");
    assert!(max(&models[1]) > 600_000, "{v}");
}

/// `--compare-model 6`: version 7 sums a list indexed by a `lists.range` loop's variable over
/// the list, so a filter version 6 refused is accepted now.
#[test]
fn compare_model_shows_what_version_7_tightened() {
    let source = "lists.range(1000).exists(i, event.attributes.a[i] + 'y' == 'x')";
    let (code, v) = json(&["--compare-model", "6", source]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 6);
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    assert!(max(&models[0]) < 50_000, "{v}");
    assert!(max(&models[1]) > 9_000_000, "{v}");
}

/// `--compare-model 7`: version 8 counts the parts a filter over a split can keep, and charges
/// `double()` of a string for its arithmetic, so one figure goes down and the other up.
#[test]
fn compare_model_shows_what_version_8_changed() {
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    let kept = "event.text.split(' ').filter(w, w.startsWith('#')).map(w, w.substring(1)).exists(t, t == 'x')";
    let (code, v) = json(&["--compare-model", "7", kept]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 7);
    assert!(max(&models[0]) < 400_000, "{v}");
    assert!(max(&models[1]) > 690_000, "{v}");
    let parse = "lists.range(109816).exists(i, double('2.47032822920623272088284e-324') < 0.0)";
    let (code, v) = json(&["--compare-model", "7", parse]);
    assert_eq!(code, 1, "{v}");
    let models = v["models"].as_array().unwrap();
    assert!(max(&models[0]) > 100_000_000, "{v}");
    assert!(max(&models[1]) < 1_000_000, "{v}");
}

/// `--compare-model 8`: version 9 counts only the elements a loop that stops at its body's
/// first error can run its body on, so a `map` that selects fields is priced at the objects
/// that hold them, not at one-digit numbers.
#[test]
fn compare_model_shows_what_version_9_tightened() {
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    let source = "event.attributes.items.map(i, i.qty * i.price).exists(t, t > 100)";
    let (code, v) = json(&["--compare-model", "8", source]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 8);
    assert!(max(&models[0]) < 11_000, "{v}");
    assert!(max(&models[1]) > 100_000, "{v}");
}

/// `--compare-model 9`: version 10 prices a loop whose body reads only its variable over a
/// list of numbers and over a list of strings apart, so a `map` then `filter` the corpus holds
/// falls from 2.7 times anything reachable to 2.
#[test]
fn compare_model_shows_what_version_10_tightened() {
    let max = |m: &serde_json::Value| m["cost"]["max"].as_u64().unwrap();
    let source = "event.attributes.a.map(x, x + x).filter(y, y.size() > 3).size() > 0";
    let (code, v) = json(&["--compare-model", "9", source]);
    assert_eq!(code, 0, "{v}");
    let models = v["models"].as_array().unwrap();
    assert_eq!(models[0]["version"], 10);
    assert_eq!(models[1]["version"], 9);
    assert!(max(&models[0]) <= 2 * 60_596, "{v}");
    assert!(max(&models[1]) > 150_000, "{v}");
}

#[test]
fn compare_model_names_the_carried_versions() {
    let (code, stdout, stderr) = ozcheck(&["filter", "--compare-model", "1", "event.text == 'a'"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains(
            "does not carry cost-model version 1; it carries versions 3, 4, 5, 6, 7, 8, 9, 10"
        ),
        "{stderr}"
    );
}

/// Costs and the limit in the verdict line are grouped by thousands for people; the value of a
/// flag that would pass stays raw digits, as it is an argument to copy (docs/cli.md, "Numbers").
#[test]
fn the_verdict_line_groups_costs_and_keeps_flag_values_raw() {
    let source = "event.attributes.labels.exists(l, event.text.contains(l))";
    let (_, v) = json(&[source]);
    let max = v["cost"]["max"].as_u64().expect("max");
    assert!(max >= 1_000_000, "{v}");
    let (_, text, _) = ozcheck(&["filter", source]);
    let verdict = text
        .lines()
        .find(|l| l.starts_with("refused, cost "))
        .expect("a verdict line");
    assert!(verdict.ends_with(" of 1,000,000"), "{verdict}");
    assert!(verdict.contains(&format!("..{}", group(max))), "{verdict}");
    let bound = &v["would_pass"]["bounds"][0];
    let line = format!(
        "would pass with {} {} (cost ..{} of 1,000,000)",
        bound["flag"].as_str().expect("flag"),
        bound["at_most"],
        group(bound["cost"].as_u64().expect("cost"))
    );
    assert!(text.contains(&line), "{text}");
}

fn group(n: u64) -> String {
    ozcheck_analyzer::cost::group(n)
}
