//! Safe fixes through the public entry points: each fixable rule's fix applied and the file
//! linted again (the rule no longer fires, and the file reads as intended), every byte outside
//! the edits kept, rules without a documented fix never offering one, and the fix loop bounded.

use std::fmt::Write as _;

use ozcheck_lint::docs::example_files;
use ozcheck_lint::fix::{self, FixedFile};
use ozcheck_lint::rules::RULES;
use ozcheck_lint::{Config, FileReport, Input, PluginContext, lint};

fn context() -> PluginContext {
    PluginContext {
        agents_complete: true,
        ..PluginContext::default()
    }
}

fn fix_files(files: &[Input]) -> Vec<FixedFile> {
    fix::fix(files, &context(), &Config::default())
}

fn fixed_text(fixed: &[FixedFile], path: &str) -> String {
    fixed
        .iter()
        .find(|f| f.report.source.path == path)
        .map_or_else(
            || panic!("no report for {path}"),
            |f| f.report.source.text.clone(),
        )
}

/// One case per fixable rule: the files, the file that changes, and what it must become.
struct Case {
    rule: &'static str,
    files: &'static [(&'static str, &'static str)],
    path: &'static str,
    fixed: &'static str,
}

const HELPER: (&str, &str) = (
    "agents/helper.yaml",
    "name: helper\nruntime: acp\ntools: [oz.wait_for_event]\n",
);

const CASES: &[Case] = &[
    Case {
        rule: "unused-suppression",
        files: &[(
            "flows/w.yaml",
            "name: w\nsteps:\n  - id: a\n    # ozcheck: ignore[unknown-key]\n    wait_for_event:\n      source: s\n      timeout: 5m  # ozcheck: ignore[compound-timeout]   \n",
        )],
        path: "flows/w.yaml",
        fixed: "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: 5m\n",
    },
    Case {
        rule: "compound-timeout",
        files: &[(
            "flows/w.yaml",
            "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: \"1h30m\"   # keep me\n",
        )],
        path: "flows/w.yaml",
        fixed: "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: \"90m\"   # keep me\n",
    },
    Case {
        rule: "fractional-timeout",
        files: &[(
            "agents/helper.yaml",
            "name: helper\nruntime: acp\nlimits: { timeout: 1.5h }\n",
        )],
        path: "agents/helper.yaml",
        fixed: "name: helper\nruntime: acp\nlimits: { timeout: 90m }\n",
    },
    Case {
        rule: "unknown-key",
        files: &[(
            "flows/w.yaml",
            "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      sorce: s\n      timout: 5m\n",
        )],
        path: "flows/w.yaml",
        fixed: "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: 5m\n",
    },
    Case {
        rule: "wrong-type",
        files: &[(
            "agents/helper.yaml",
            "name: helper\nruntime: pydantic_ai\ntools: 'oz.wait_for_event'\n",
        )],
        path: "agents/helper.yaml",
        fixed: "name: helper\nruntime: pydantic-ai\ntools: ['oz.wait_for_event']\n",
    },
    Case {
        rule: "invalid-since",
        files: &[(
            "flows/w.yaml",
            "name: w\nsteps:\n  - id: a\n    wait_for_event: {source: s, since: Now}\n",
        )],
        path: "flows/w.yaml",
        fixed: "name: w\nsteps:\n  - id: a\n    wait_for_event: {source: s, since: now}\n",
    },
    Case {
        rule: "routine-missing-wait-tool",
        files: &[
            HELPER,
            (
                "routines/r.yaml",
                "name: r\nagent: helper\ntools:\n  - oz.output  # the output\ntriggers: []\n",
            ),
        ],
        path: "routines/r.yaml",
        fixed: "name: r\nagent: helper\ntools:\n  - oz.output  # the output\n  - oz.wait_for_event\ntriggers: []\n",
    },
    Case {
        rule: "unknown-agent",
        files: &[
            HELPER,
            (
                "routines/r.yaml",
                "name: r\nagent: helpr\ntools: [oz.wait_for_event]\n",
            ),
        ],
        path: "routines/r.yaml",
        fixed: "name: r\nagent: helper\ntools: [oz.wait_for_event]\n",
    },
];

fn inputs(files: &[(&str, &str)]) -> Vec<Input> {
    files
        .iter()
        .map(|(path, text)| Input::from_text(*path, *text, true))
        .collect()
}

fn rules_in(reports: &[FileReport]) -> Vec<&'static str> {
    reports
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| f.rule))
        .collect()
}

#[test]
fn each_fix_applies_and_the_file_lints_clean_of_its_rule() {
    for case in CASES {
        let files = inputs(case.files);
        let before = lint(&files, &context(), &Config::default());
        assert!(
            before
                .iter()
                .flat_map(|r| &r.findings)
                .any(|f| f.rule == case.rule && f.fix.is_some()),
            "{}: no fix offered: {:?}",
            case.rule,
            rules_in(&before)
        );
        let fixed = fix_files(&files);
        assert_eq!(fixed_text(&fixed, case.path), case.fixed, "{}", case.rule);
        // Linting the fixed files again finds nothing at all.
        let again: Vec<Input> = fixed
            .iter()
            .map(|f| {
                Input::from_text(
                    f.report.source.path.clone(),
                    f.report.source.text.clone(),
                    true,
                )
            })
            .collect();
        let after = lint(&again, &context(), &Config::default());
        assert_eq!(rules_in(&after), Vec::<&str>::new(), "{}", case.rule);
    }
}

#[test]
fn every_rule_with_a_documented_fix_has_a_case_and_no_other_rule_fixes() {
    for rule in RULES {
        let has_case = CASES.iter().any(|c| c.rule == rule.id);
        assert_eq!(
            has_case,
            !rule.fix.is_empty(),
            "`{}`: a documented fix needs a case here, and a case needs a documented fix",
            rule.id
        );
    }
    // Over every Example and the err corpus, only rules that document a fix carry one.
    let mut reports: Vec<FileReport> = RULES
        .iter()
        .flat_map(|r| lint(&example_files(r.example), &context(), &Config::default()))
        .collect();
    let (targets, context) =
        ozcheck_lint::discover::collect(&["../corpus/plugins/err".into()]).expect("err corpus");
    reports.extend(lint(&targets, &context, &Config::default()));
    for finding in reports.iter().flat_map(|r| &r.findings) {
        if finding.fix.is_some() {
            let rule = ozcheck_lint::rules::find(finding.rule).expect("registered");
            assert!(
                !rule.fix.is_empty(),
                "`{}` fixes without saying so",
                rule.id
            );
        }
    }
}

#[test]
fn a_rename_is_not_offered_when_the_key_is_taken_or_ambiguous() {
    // `allow_sender` is close to `allow_senders`, which the mapping has already.
    let taken = "name: r\nagent: a\ntriggers:\n  - name: t\n    event:\n      source: s\n      sender: event.attributes.sender\n      allow_senders: [x]\n      allow_sender: [y]\n";
    let files = [Input::from_text("routines/r.yaml", taken, true)];
    let reports = lint(&files, &PluginContext::default(), &Config::default());
    let unknown: Vec<_> = reports[0]
        .findings
        .iter()
        .filter(|f| f.rule == "unknown-key")
        .collect();
    assert_eq!(unknown.len(), 1);
    assert!(unknown[0].fix.is_none());
}

#[test]
fn fixing_keeps_every_other_byte() {
    // CRLF line ends, a byte-order mark, comments, odd spacing and non-ASCII text around two
    // fixes on one line's neighbours.
    let text = "\u{feff}# é comment\r\nname: w\r\nsteps:\r\n  - id: a   # ünïcode\r\n    wait_for_event:\r\n      source:   s\r\n      timeout:    1h30m    # was 90 minutes\r\n      sinse: now\r\n";
    let files = [Input::from_text("flows/w.yaml", text, true)];
    let fixed = fix_files(&files);
    let out = fixed_text(&fixed, "flows/w.yaml");
    assert_eq!(
        out,
        text.replace("1h30m", "90m")
            .replace("sinse: now", "since: now")
    );
}

#[test]
fn a_file_with_nothing_to_fix_is_unchanged_and_unfixable_findings_remain() {
    let text = "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      timeout: 30 minutes\n";
    let files = [Input::from_text("flows/w.yaml", text, true)];
    let fixed = fix_files(&files);
    assert!(!fixed[0].changed());
    assert_eq!(fixed[0].applied, 0);
    assert_eq!(rules_in(&[fixed[0].report.clone()]), ["invalid-timeout"]);
}

#[test]
fn many_fixes_in_one_file_all_apply_within_the_round_bound() {
    // A thousand steps, each with two fixable findings: one round fixes them all.
    let mut text = String::from("name: w\nsteps:\n");
    for i in 0..1000 {
        let _ = write!(
            text,
            "  - id: s{i}\n    wait_for_event:\n      source: s\n      timeout: 1h30m\n      typs: [x]\n"
        );
    }
    let files = [Input::from_text("flows/w.yaml", text.clone(), true)];
    let fixed = fix_files(&files);
    assert_eq!(fixed[0].applied, 2000);
    let expected = text.replace("1h30m", "90m").replace("typs:", "types:");
    assert_eq!(fixed[0].report.source.text, expected);
    assert!(fixed[0].report.findings.is_empty());
}

#[test]
fn overlapping_fixes_are_applied_one_at_a_time() {
    use ozcheck_lint::{Finding, Fix};
    let text = "abcdef";
    let findings = [
        Finding::new("unknown-key", 1..3, "x").fix(Fix::replace("a", 1..3, "XY")),
        Finding::new("unknown-key", 2..4, "y").fix(Fix::replace("b", 2..4, "Z")),
        Finding::new("unknown-key", 4..4, "z").fix(Fix::replace("c", 4..4, "+")),
        // Not on a character boundary of the text: never applied.
        Finding::new("unknown-key", 7..9, "w").fix(Fix::replace("d", 7..9, "?")),
    ];
    let (out, count) = fix::apply(text, &findings);
    assert_eq!((out.as_str(), count), ("aXYd+ef", 2));
}
