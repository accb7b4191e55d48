//! The estimator through the public entry points: the acceptance filters of the cost issue,
//! configurable limits and bounds, the shared budget against independent sizes, explanations,
//! and hostile expressions.

use ozcheck_analyzer::check::{Env, Expected};
use ozcheck_analyzer::cost::{self, CostModel, SizeModel};
use ozcheck_analyzer::{EventBounds, Options, Report, Verdict, check_expression, compile};

const NESTED: &str = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
const LABELS_IN_TEXT: &str = "event.attributes.labels.exists(l, event.text.contains(l))";

/// Expressions over `event` of any result type: the estimator prices non-bool ones too.
fn env() -> Env {
    Env::filter().expecting(Expected::Any)
}

fn check(source: &str) -> Report {
    check_expression(source, &env(), &Options::default())
}

fn max(source: &str, options: &Options) -> u64 {
    check_expression(source, &env(), options)
        .cost
        .expect("estimated")
        .max
}

fn estimate(source: &str, options: &Options) -> cost::Estimate {
    let checked = compile(source, &Env::filter(), options).expect("compiles");
    cost::estimate(&checked, &Env::filter(), options)
}

#[test]
fn refuses_nested_iteration_over_event_data() {
    for source in [NESTED, LABELS_IN_TEXT] {
        let report = check(source);
        assert_eq!(report.verdict, Verdict::Refused, "{source}");
        let cost = report.cost.expect("estimated");
        assert!(cost.max > report.limit, "{source}: {cost:?}");
        let [d] = report.diagnostics.as_slice() else {
            panic!("{source}: {:?}", report.diagnostics);
        };
        assert_eq!(d.code, "cost-over-limit");
        assert!(d.message.contains("1,000,000"), "{}", d.message);
        assert!(!d.label.is_empty());
        let help = d.help.as_deref().unwrap_or_default();
        assert!(help.contains("event.attributes"), "{help}");
    }
}

#[test]
fn refusal_points_at_the_work_inside_the_loop() {
    let report = check(LABELS_IN_TEXT);
    let span = report.diagnostics[0].span;
    let labelled = &LABELS_IN_TEXT[span.start as usize..span.end as usize];
    assert_eq!(labelled, "event.text.contains(l)");
    assert!(report.diagnostics[0].label.contains("4,090 times"));

    let report = check(NESTED);
    let span = report.diagnostics[0].span;
    // The label sits inside the inner loop, not on the whole expression.
    assert!(span.start as usize > NESTED.find("event.attributes.b").unwrap());
}

#[test]
fn accepts_simple_filters_with_small_bounds() {
    for (source, bound) in [
        ("event.action == 'opened' && !event.attributes.draft", 10),
        ("event.attributes.labels.exists(l, l == 'urgent')", 30_000),
        ("event.text.contains('LGTM')", 2_000),
    ] {
        let report = check(source);
        assert_eq!(report.verdict, Verdict::Accepted, "{source}");
        assert!(report.diagnostics.is_empty());
        let cost = report.cost.expect("estimated");
        assert!(
            cost.min <= cost.max && cost.max <= bound,
            "{source}: {cost:?}"
        );
    }
}

#[test]
fn literal_needles_are_priced_exactly() {
    // `ceil(16384 / 10) · ceil(4 / 10)` plus `event` and `.text`.
    assert_eq!(
        max("event.text.contains('LGTM')", &Options::default()),
        1639 + 2
    );
    // `(16384 + 1) · ceil(size / 4)`, every byte of the text against a quarter of the pattern's
    // compiled size, plus two selections.
    let regex = r"event.text.matches('^fix(\\(.*\\))?: ')";
    let size = ozcheck_analyzer::regex::compiled_size(r"^fix(\(.*\))?: ").unwrap();
    let exact = 16385 * size.div_ceil(4) + 2;
    assert_eq!(max(regex, &Options::default()), exact, "size {size}");
}

/// A pattern for which the lazy DFA builds a new state at nearly every byte of a random `a`/`b`
/// text does work proportional to the compiled size at every byte; priced at a tenth of the
/// bytes, 33 such searches over 16 KiB were accepted (974,045 units) and ran 580–750 ms. Each
/// search is charged for every byte now, so the loop is refused while one search is accepted.
#[test]
fn a_search_is_charged_for_every_byte() {
    let one = r#"event.text.matches("a[ab]{20}[^ab]")"#;
    let size = ozcheck_analyzer::regex::compiled_size("a[ab]{20}[^ab]").unwrap();
    assert_eq!(max(one, &Options::default()), 16385 * size.div_ceil(4) + 2);
    assert_eq!(check(one).verdict, Verdict::Accepted);
    let indices: Vec<String> = (0..=32).map(|i| i.to_string()).collect();
    let many = format!(
        "[{}].all(i, !event.text.matches(\"a[ab]{{20}}[^ab]\"))",
        indices.join(",")
    );
    assert!(many.len() <= 1024);
    let report = check(&many);
    assert_eq!(report.verdict, Verdict::Refused, "{:?}", report.cost);
}

#[test]
fn nested_loops_share_the_attribute_budget() {
    let shared = estimate(NESTED, &Options::default());
    let independent = estimate(
        NESTED,
        &Options {
            sizes: SizeModel::Independent,
            ..Options::default()
        },
    );
    // The comparison runs once per pair: |a| + |b| fit the budget together in the shared
    // model (about 4.18 million pairs), but not in the independent one (4093² pairs).
    let pairs = |e: &cost::Estimate| {
        let eq = NESTED.find("x == y").unwrap() as u32;
        e.nodes
            .iter()
            .flatten()
            .find(|n| n.span.start == eq && n.span.end == eq + 6)
            .expect("x == y estimated")
            .multiplier
    };
    assert!(
        (4_180_000..4_190_000).contains(&pairs(&shared)),
        "{}",
        pairs(&shared)
    );
    assert_eq!(pairs(&independent), 4093 * 4093);
    assert!(shared.cost.max * 3 < independent.cost.max);
    assert!(shared.assumption.contains("share"), "{}", shared.assumption);
}

#[test]
fn iteration_over_all_attributes_is_bounded_by_entries() {
    // research note §1.8: about 8.5e5 with independent sizes, about 1e4 with a shared budget;
    // since model version 4 each `event.attributes[k]` also pays its probes' walk of `k`
    // (11 probes of a tenth of the key, about 9,000 over every key).
    let source = "event.attributes.exists(k, event.attributes[k].contains('x'))";
    let shared = max(source, &Options::default());
    let independent = max(
        source,
        &Options {
            sizes: SizeModel::Independent,
            ..Options::default()
        },
    );
    assert!(shared < 25_000, "{shared}");
    assert!(independent > 500_000, "{independent}");
}

#[test]
fn the_limit_is_configurable() {
    let source = "event.attributes.labels.exists(l, l == 'urgent')";
    let bound = max(source, &Options::default());
    let at = |limit| {
        check_expression(
            source,
            &env(),
            &Options {
                limit,
                ..Options::default()
            },
        )
        .verdict
    };
    assert_eq!(
        at(bound),
        Verdict::Accepted,
        "a cost equal to the limit fits"
    );
    assert_eq!(at(bound - 1), Verdict::Refused);
}

#[test]
fn event_bounds_are_configurable() {
    let small = Options {
        bounds: EventBounds {
            text: 256,
            attributes: 512,
            header_field: 64,
        },
        ..Options::default()
    };
    assert_eq!(
        check_expression(LABELS_IN_TEXT, &env(), &small).verdict,
        Verdict::Accepted
    );
    // Larger bounds never give a smaller estimate.
    for source in [NESTED, LABELS_IN_TEXT, "event.text + event.subject"] {
        assert!(
            max(source, &small) < max(source, &Options::default()),
            "{source}"
        );
    }
}

#[test]
fn allocations_are_charged_unless_cpu_only() {
    let source = "event.text + event.text";
    let full = max(source, &Options::default());
    let cpu = max(
        source,
        &Options {
            model: CostModel::CPU_ONLY,
            ..Options::default()
        },
    );
    // Concatenating two 16 KiB texts builds 32 KiB.
    assert_eq!(full - cpu, 2 * 16 * 1024);
    // cel-go's own figure for the CPU part (research note §1.8): 4 + 3277.
    assert_eq!(cpu, 4 + 3277);
}

#[test]
fn dyn_values_take_the_worst_type() {
    // `v + v` on an attribute may be a string concatenation that allocates its bytes.
    let options = Options::default();
    let concat = max("event.attributes.s + event.attributes.s == ''", &options);
    let plain = max("event.attributes.s == ''", &options);
    assert!(concat > plain + 2 * 8000, "{concat} vs {plain}");
    // In a loop, the elements may all be strings: their concatenations cost more than
    // copying them (since version 10 a list of numbers is priced apart, and the larger wins).
    let concat = max("event.attributes.a.map(x, x + x).size() > 0", &options);
    let plain = max("event.attributes.a.map(x, x).size() > 0", &options);
    assert!(concat > plain + 8000, "{concat} vs {plain}");
}

#[test]
fn explain_renders_the_tree() {
    let e = estimate(LABELS_IN_TEXT, &Options::default());
    let text = cost::explain(&e, LABELS_IN_TEXT);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("cost [4, "), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("event.text.contains(l)") && l.contains("× 4,090")),
        "{text}"
    );
    assert!(text.contains("(event.text ≤ 16384 bytes)"), "{text}");
    assert!(text.contains("at most 4090 iterations"), "{text}");
    // Children are indented under their parent.
    let contains = lines
        .iter()
        .position(|l| l.contains("event.text.contains(l)"))
        .unwrap();
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(indent(lines[contains + 1]) > indent(lines[contains]));
    assert_eq!(
        ozcheck_analyzer::explain_expression(LABELS_IN_TEXT, &Env::filter(), &Options::default())
            .unwrap(),
        text
    );
}

#[test]
fn min_never_exceeds_max() {
    for source in [
        "true",
        "event.text == ''",
        "[1, 2, 3].exists(x, x == 2)",
        "event.attributes.a.filter(x, x > 1).map(y, string(y))",
        "size(event.text) > 3 ? event.text.contains('a') : event.subject.startsWith('b')",
    ] {
        let cost = check(source).cost.expect("estimated");
        assert!(cost.min <= cost.max, "{source}: {cost:?}");
    }
}

#[test]
fn hostile_expressions_get_an_answer() {
    // Deep nesting over shrinking parts of one list.
    let mut deep = String::from("x8 == 1");
    for i in (0..9).rev() {
        let range = if i == 0 {
            "event.attributes.a".to_owned()
        } else {
            format!("x{}", i - 1)
        };
        deep = format!("{range}.exists(x{i}, {deep})");
    }
    let report = check(&deep);
    assert!(report.cost.is_some(), "{:?}", report.diagnostics);
    // Products that would make polynomials explode: every term multiplies.
    let clause = "event.text.contains(event.subject + event.id + event.type)";
    let wide = [clause; 12].join(" || ");
    let options = Options::default();
    // `||` adds its operands' costs; each clause's bound is rounded down on its own.
    let one = max(clause, &options);
    assert!((12 * one..12 * one + 12).contains(&max(&wide, &options)));
    // A chain of loops over loop results.
    let chain = format!(
        "event.attributes.a{}.size() > 0",
        ".map(x, x + x)".repeat(20)
    );
    let report = check(&chain);
    assert!(report.cost.is_some(), "{:?}", report.diagnostics);
}

/// The checker and the estimator recurse once per level of the tree: the deepest filters the
/// parser accepts (250 levels, within 1024 bytes) get a verdict on a 1 MiB thread, half the
/// default of a test or a runtime worker, even in a debug build. Before the estimator's node
/// kinds had frames of their own, its 300 levels needed 2–3 MiB there.
#[test]
fn the_deepest_parsable_filters_are_estimated_on_a_small_stack() {
    let shapes: [fn(usize) -> String; 6] = [
        |k| format!("{}true", "!".repeat(k)),
        |k| format!("{}true{}", "(".repeat(k), ")".repeat(k)),
        |k| format!("{}[]{} == []", "[".repeat(k), "]".repeat(k)),
        |k| format!("{}1{} == 1", "-".repeat(k), ""),
        |k| format!("size({}''{}) > 0", "(true ? ".repeat(k), " : '')".repeat(k)),
        |k| format!("{}true{}", "[true][0] && (".repeat(k), ")".repeat(k)),
    ];
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            for shape in shapes {
                let deepest = (1..=260)
                    .rev()
                    .map(shape)
                    .find(|s| {
                        s.len() <= 1024 && compile(s, &Env::filter(), &Options::default()).is_ok()
                    })
                    .expect("some nesting compiles");
                let report = check(&deepest);
                assert!(
                    report.cost.is_some(),
                    "{deepest:.40}: {:?}",
                    report.diagnostics
                );
            }
        })
        .expect("spawn")
        .join()
        .expect("no overflow");
}
