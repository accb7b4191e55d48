//! The cost-model version contract (issue 36): every figure the model gives is pinned, per
//! version, in a checked-in file (`model_version/vN.txt`): the table's constants and formulas
//! at sample sizes, and the estimate of a broad, fixed set of expressions
//! (`model_version/expressions.txt`: the corpus filters, one per operator and overload). A
//! change to the table or to an estimator rule that moves a figure fails here until
//! `COST_MODEL_VERSION` is bumped and docs/cost-model.md says what the new version changed; an
//! earlier version this build still carries must reproduce its file exactly.
//!
//! `OZCHECK_BLESS=1 cargo test -p ozcheck-analyzer --test model_version` writes the file of a
//! new current version (never an earlier one's).

use std::fmt::Write as _;
use std::path::PathBuf;

use ozcheck_analyzer::cost::CostModel;
use ozcheck_analyzer::cost::table::{self, CARRIED_VERSIONS, COST_MODEL_VERSION};
use ozcheck_analyzer::{Options, check_filter};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/model_version")
}

fn expressions() -> Vec<String> {
    std::fs::read_to_string(dir().join("expressions.txt"))
        .expect("expressions.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// The table's entries under `model`: every constant, and every formula at sizes that reach
/// each of its branches.
fn table_figures(model: CostModel) -> String {
    let mut out = String::new();
    let constants: [(&str, u64); 38] = [
        ("DEFAULT_COST_LIMIT", table::DEFAULT_COST_LIMIT),
        ("CONST", table::CONST),
        ("SELECT", table::SELECT),
        ("CALL", table::CALL),
        ("LIST_CREATE", table::LIST_CREATE),
        ("MAP_CREATE", table::MAP_CREATE),
        ("STRUCT_CREATE", table::STRUCT_CREATE),
        ("COMPREHENSION_RESULT", table::COMPREHENSION_RESULT),
        ("ALL_PER_ELEMENT", table::ALL_PER_ELEMENT),
        ("EXISTS_PER_ELEMENT", table::EXISTS_PER_ELEMENT),
        ("EXISTS_ONE_RESULT", table::EXISTS_ONE_RESULT),
        ("EXISTS_ONE_SKIP", table::EXISTS_ONE_SKIP),
        ("EXISTS_ONE_COUNT", table::EXISTS_ONE_COUNT),
        ("MAP_FILTER_FIXED", table::MAP_FILTER_FIXED),
        ("MAP_APPEND", table::MAP_APPEND),
        ("FILTER_APPEND", table::FILTER_APPEND),
        ("FILTER_SKIP", table::FILTER_SKIP),
        ("ALLOC_PER_BYTE", model.alloc(table::ALLOC_PER_BYTE)),
        ("ALLOC_PER_ELEMENT", model.alloc(table::ALLOC_PER_ELEMENT)),
        ("ALLOC_PER_ENTRY", model.alloc(table::ALLOC_PER_ENTRY)),
        ("ALLOC_PER_OPTIONAL", model.optional_alloc()),
        ("REGEX_MAX_PATTERN", table::REGEX_MAX_PATTERN),
        ("REGEX_MAX_REPEAT", u64::from(table::REGEX_MAX_REPEAT)),
        (
            "REGEX_MAX_UNICODE_CLASSES",
            table::REGEX_MAX_UNICODE_CLASSES,
        ),
        ("REGEX_MAX_FOLDED", table::REGEX_MAX_FOLDED),
        ("REGEX_MAX_SIZE", table::REGEX_MAX_SIZE),
        ("REGEX_COMPILE", table::REGEX_COMPILE),
        ("SCALAR_STRING_MAX", table::SCALAR_STRING_MAX),
        ("MEMORY_LIMIT", table::MEMORY_LIMIT),
        ("BUILT_PER_CONTAINER", table::BUILT_PER_CONTAINER),
        ("BUILT_PER_ELEMENT", table::BUILT_PER_ELEMENT),
        ("BUILT_PER_ENTRY", table::BUILT_PER_ENTRY),
        ("TRANSFORM_MAP_FIXED", table::TRANSFORM_MAP_FIXED),
        ("TRANSFORM_MAP_INSERT", table::TRANSFORM_MAP_INSERT),
        ("OPT_MAP", table::OPT_MAP),
        ("FORMAT_MAX_PRECISION", table::FORMAT_MAX_PRECISION),
        ("PARSE_DOUBLE (of an empty string)", model.parse_double(0)),
        ("FORMAT_FLOAT", model.format_float()),
    ];
    for (name, value) in constants {
        let _ = writeln!(out, "{name} = {value}");
    }
    let _ = writeln!(
        out,
        "FORMATTED_DOUBLE_MAX = {}",
        table::FORMATTED_DOUBLE_MAX
    );
    let _ = writeln!(
        out,
        "FORMATTED_SCALAR_MAX = {}",
        table::FORMATTED_SCALAR_MAX
    );
    let _ = writeln!(out, "built_text(100) = {}", table::built_text(100));
    let sizes = [0u64, 1, 9, 10, 11, 100, 16_384];
    for &a in &sizes {
        let _ = writeln!(
            out,
            "n={a}: traversal {} starts_ends_with {} convert_sized {} read_sized {} string_pass {} \
             format {} alloc_bytes {} alloc_list {} alloc_map {} key_lookup(1) {} key_lookup(9) {} \
             key_lookup(2000) {} map_build(2) {} map_build(100) {}",
            table::traversal(a),
            table::starts_ends_with(a),
            table::convert_sized(a),
            table::read_sized(a),
            table::string_pass(a),
            table::format(a),
            model.alloc(table::alloc_bytes(a)),
            model.alloc(table::alloc_list(a)),
            model.alloc(table::alloc_map(a)),
            table::key_lookup(1, model.key_bytes(a)),
            table::key_lookup(9, model.key_bytes(a)),
            table::key_lookup(2000, model.key_bytes(a)),
            table::map_build(2, model.key_bytes(a)),
            table::map_build(100, model.key_bytes(a)),
        );
        for &b in &sizes {
            let _ = writeln!(
                out,
                "n={a} m={b}: contains {} matches {} compare_sized {} concat {} equal_deep {} \
                 in_list(n, 3, m) {} index_of {} replace(n, m, 2n) {} split {} join {} sort {}",
                table::contains(a, b),
                table::matches(a, b),
                table::compare_sized(a, b),
                table::concat(a, b),
                table::equal_deep(a, b),
                table::in_list(a, 3, b),
                table::index_of(a, b),
                table::replace(a, b, 2 * a),
                table::split(a, b),
                table::join(a, b),
                table::sort(a, b),
            );
        }
    }
    out
}

/// Everything version `version` says: its table and its estimates of every expression, in the
/// full model and the CPU-only one.
fn figures(version: u32) -> String {
    let full = CostModel::FULL.with_version(version).expect("carried");
    let cpu = CostModel::CPU_ONLY.with_version(version).expect("carried");
    let mut out = format!(
        "# Cost model version {version}: written by analyzer/tests/model_version.rs; a figure \
         that changes needs a new version.\n\n## table\n"
    );
    out.push_str(&table_figures(full));
    out.push_str("\n## estimates: full [min, max], CPU only max, default bounds\n");
    let broken: Vec<String> = expressions()
        .into_iter()
        .filter(|source| check_filter(source, &Options::default()).cost.is_none())
        .collect();
    assert!(broken.is_empty(), "these do not compile: {broken:#?}");
    for source in expressions() {
        let estimate = |model| {
            let report = check_filter(
                &source,
                &Options {
                    model,
                    ..Options::default()
                },
            );
            let cost = report
                .cost
                .unwrap_or_else(|| panic!("{source} does not compile: {:?}", report.diagnostics));
            (cost.min, cost.max)
        };
        let (min, max) = estimate(full);
        let (_, cpu_max) = estimate(cpu);
        let _ = writeln!(out, "[{min}, {max}] {cpu_max} | {source}");
    }
    out
}

fn first_difference(expected: &str, actual: &str) -> String {
    expected
        .lines()
        .zip(actual.lines())
        .find(|(e, a)| e != a)
        .map_or_else(
            || "the files differ in length".to_owned(),
            |(e, a)| format!("first difference:\n  pinned: {e}\n  now:    {a}"),
        )
}

#[test]
fn every_carried_version_gives_the_figures_it_pinned() {
    assert!(CARRIED_VERSIONS.contains(&COST_MODEL_VERSION));
    for version in CARRIED_VERSIONS {
        let path = dir().join(format!("v{version}.txt"));
        let actual = figures(version);
        let pinned = std::fs::read_to_string(&path).ok();
        if pinned.as_deref() == Some(actual.as_str()) {
            continue;
        }
        let current = version == COST_MODEL_VERSION;
        if current && std::env::var_os("OZCHECK_BLESS").is_some() {
            std::fs::write(&path, &actual).expect("write the golden file");
            continue;
        }
        match (pinned, current) {
            (None, true) => panic!(
                "no figures are pinned for cost-model version {version}: write \
                 {} with OZCHECK_BLESS=1 cargo test -p ozcheck-analyzer --test model_version, \
                 and say in docs/cost-model.md what version {version} changed",
                path.display()
            ),
            (None, false) => panic!(
                "version {version} is carried but {} is missing",
                path.display()
            ),
            (Some(pinned), true) => panic!(
                "the cost table or an estimator rule changed a figure of cost-model version \
                 {version} ({}). Bump COST_MODEL_VERSION in analyzer/src/cost/table.rs, add the \
                 new version's entry to the changelog in docs/cost-model.md, keep the old \
                 version's parameters in CostModel if it stays carried, and pin the new figures \
                 with OZCHECK_BLESS=1 cargo test -p ozcheck-analyzer --test model_version",
                first_difference(&pinned, &actual)
            ),
            (Some(pinned), false) => panic!(
                "cost-model version {version} is still carried (CARRIED_VERSIONS) but no longer \
                 gives its pinned figures ({}): an earlier version's figures never change; \
                 restore its parameters in CostModel or stop carrying it",
                first_difference(&pinned, &actual)
            ),
        }
    }
}

#[test]
fn the_changelog_names_every_version() {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/cost-model.md"),
    )
    .expect("docs/cost-model.md");
    for version in 1..=COST_MODEL_VERSION {
        assert!(
            doc.contains(&format!("| {version} |")),
            "docs/cost-model.md's changelog has no row for cost-model version {version}"
        );
    }
}

#[test]
fn versions_not_carried_are_refused() {
    assert!(
        CostModel::FULL
            .with_version(COST_MODEL_VERSION + 1)
            .is_none()
    );
    assert!(CostModel::FULL.with_version(2).is_none());
    assert_eq!(
        CostModel::FULL.with_version(3).map(CostModel::version),
        Some(3)
    );
}
