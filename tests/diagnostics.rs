//! Rendered diagnostics of `ozcheck filter`, as insta snapshots: what a user sees for syntax
//! errors, type errors and limits. Uncoloured, fixed width.

use ozcheck::cmd::filter::full;
use ozcheck_analyzer::check::{Env, StepDecl, StepKind};
use ozcheck_analyzer::{Extension, Extensions, Options, Verdict, check_expression};

fn render(source: &str, env: &Env) -> String {
    let report = check_expression(source, env, &Options::default());
    assert_eq!(
        report.verdict,
        Verdict::Refused,
        "expected {source:?} to be refused"
    );
    assert!(!report.diagnostics.is_empty());
    full(source, &report)
}

macro_rules! refused {
    ($name:ident, $source:expr) => {
        refused!($name, $source, &Env::filter());
    };
    ($name:ident, $source:expr, $env:expr) => {
        #[test]
        fn $name() {
            let source: String = $source.into();
            insta::assert_snapshot!(stringify!($name), render(&source, $env));
        }
    };
}

// Syntax.
refused!(syntax_empty, "");
refused!(syntax_dangling_plus, "1 +");
refused!(syntax_dangling_in, "a in");
refused!(syntax_unterminated_string, "event.text.contains('LGTM)");
refused!(syntax_unclosed_call, "event.text.contains('x'");
refused!(
    syntax_several_errors,
    "event.action == ) || event.type == )"
);
refused!(syntax_ternary_without_else, "event.action == 'opened' ? 1");
refused!(syntax_bad_escape, r"event.text.contains('\q')");
refused!(
    syntax_int_overflow,
    "event.attributes.n == 9223372036854775808"
);
refused!(syntax_reserved_word, "event.attributes.if == 1 || var == 2");
refused!(
    syntax_optional_field_without_optionals,
    "event.attributes.?draft.orValue(false)",
    &Env::filter().with_extensions(Extensions::NONE)
);
refused!(
    type_function_of_a_disabled_extension,
    "event.text.lowerAscii().contains('lgtm')",
    &Env::filter().with_extensions(Extensions::NONE.with(Extension::Sets))
);

// Types and names.
refused!(type_unknown_field, "event.atributes.draft == false");
refused!(type_unknown_variable_in_filter, "trigger.event.id == '1'");
refused!(type_unknown_function, "event.text.contians('LGTM')");
refused!(type_wrong_argument, "event.text.contains(1)");
refused!(type_compare_string_int, "event.action == 1");
refused!(type_ordering_string_int, "event.text > 5");
refused!(type_not_on_string, "!event.text");
refused!(type_not_iterable, "event.text.exists(c, c == 'a')");
refused!(type_message_literal, "Foo{a: 1}.a == 1");
refused!(type_size_of_int, "size(1) == 1");
refused!(
    when_unknown_step,
    "steps.wait_review.matched && steps.aprove.approved",
    &Env::when(
        true,
        &[
            StepDecl {
                id: "wait_review".into(),
                kind: StepKind::WaitForEvent
            },
            StepDecl {
                id: "approve".into(),
                kind: StepKind::Approval
            }
        ]
    )
);
refused!(
    when_event_of_approval_step,
    "steps.approve.event.action == 'opened'",
    &Env::when(
        true,
        &[StepDecl {
            id: "approve".into(),
            kind: StepKind::Approval
        }]
    )
);

// Limits.
refused!(
    limit_too_long,
    format!("event.text.contains('{}')", "x".repeat(1024))
);
refused!(
    limit_nesting,
    format!("size({}1{}) == 1", "[".repeat(300), "]".repeat(300))
);
