//! The words of the checker's diagnostics: what is unknown, what was expected, and the
//! "did you mean" or the list of what is available.

use super::env::{Env, EnvKind, Expected};
use super::functions::{FUNCTION_NAMES, Overload, available, overloads, providers};
use super::suggest;
use crate::Diagnostic;
use crate::extensions::{Extension, Extensions};
use crate::syntax::Span;
use crate::types::{ObjectType, Type};

/// Where a host enables extensions, for help texts.
const ENABLE_WHERE: &str = "the `[extensions]` table of ozcheck.toml";

/// `unknown-function`: the extension that would provide it, or the closest available name.
/// The message itself names the extension, so that hosts that show only the message (the
/// runtime's refusal of a wait) say it too.
pub(super) fn unknown_function(function: &str, span: Span, enabled: Extensions) -> Diagnostic {
    if let Some(known) = overloads(function) {
        let by = providers(known);
        let (s, them) = if by.iter().count() > 1 {
            ("s", "one of them")
        } else {
            ("", "it")
        };
        return Diagnostic::error(
            "unknown-function",
            span,
            format!(
                "unknown function `{function}`: it comes with the {by} extension{s}, which this \
                 environment does not enable"
            ),
        )
        .with_label("not enabled here")
        .with_help(format!("enable {them} in {ENABLE_WHERE}"));
    }
    let diagnostic = Diagnostic::error(
        "unknown-function",
        span,
        format!("unknown function `{function}`"),
    )
    .with_label("no such function");
    let names = FUNCTION_NAMES
        .iter()
        .copied()
        .filter(|f| overloads(f).is_some_and(|o| available(o, enabled)));
    match suggest::closest(function, names) {
        Some(close) => diagnostic.with_help(format!("did you mean `{close}`?")),
        None => diagnostic,
    }
}

/// Help for a call whose only fitting overload belongs to a disabled extension.
pub(super) fn enable_help(extension: Extension, call: &str) -> String {
    format!(
        "{call} comes with the `{extension}` extension, which this environment does not enable; \
         enable it in {ENABLE_WHERE}"
    )
}

/// `unsupported-syntax`: optional syntax or a macro form of a disabled extension.
pub(super) fn extension_disabled(extension: Extension, span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(
        "unsupported-syntax",
        span,
        format!("{what} needs the `{extension}` extension, which this environment does not enable"),
    )
    .with_label("not enabled here")
    .with_help(format!("enable `{extension}` in {ENABLE_WHERE}"))
}

/// `unknown-variable`, with the closest visible name or what the environment offers.
pub(super) fn unknown_variable(
    name: &str,
    span: Span,
    visible: &[&str],
    kind: EnvKind,
) -> Diagnostic {
    let diagnostic = Diagnostic::error(
        "unknown-variable",
        span,
        format!("unknown variable `{name}`"),
    )
    .with_label("not declared here");
    let help = match suggest::closest(name, visible.iter().copied()) {
        Some(close) => Some(format!("did you mean `{close}`?")),
        None => match kind {
            EnvKind::Filter | EnvKind::Sender => Some(format!(
                "a {} is CEL over `event` alone; other variables are not available here",
                kind.name()
            )),
            EnvKind::When | EnvKind::Template | EnvKind::General if !visible.is_empty() => {
                Some(format!("available here: {}", list_names(visible)))
            }
            _ => None,
        },
    };
    match help {
        Some(help) => diagnostic.with_help(help),
        None => diagnostic,
    }
}

/// `unknown-field` on a host object; for `steps`, worded as an unknown or later step.
pub(super) fn unknown_field(object: &ObjectType, field: &str, field_span: Span) -> Diagnostic {
    let names: Vec<&str> = object.fields.iter().map(|f| &*f.name).collect();
    let steps = &*object.name == "steps";
    let (message, label) = if steps {
        (
            format!("there is no earlier step with the id `{field}`"),
            "unknown or later step",
        )
    } else {
        (
            format!("`{}` has no field `{field}`", object.name),
            "unknown field",
        )
    };
    let help = match suggest::closest(field, names.iter().copied()) {
        Some(close) => format!("did you mean `{close}`?"),
        None if steps && names.is_empty() => "no step comes before this one".to_owned(),
        None if steps => format!("earlier steps: {}", list_names(&names)),
        None => format!("the fields of `{}` are {}", object.name, list_names(&names)),
    };
    Diagnostic::error("unknown-field", field_span, message)
        .with_label(label)
        .with_help(help)
}

pub(super) fn list_names(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn describe_call(function: &str, member: bool, types: &[Type]) -> String {
    let show = |ts: &[Type]| {
        ts.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if member {
        format!("{}.{function}({})", types[0], show(&types[1..]))
    } else {
        format!("{function}({})", show(types))
    }
}

pub(super) fn signatures(function: &str, overloads: &[Overload]) -> String {
    let forms: Vec<String> = overloads
        .iter()
        .map(|o| {
            let params: Vec<&str> = o.params.iter().map(|p| p.describe()).collect();
            if o.member {
                format!("{}.{function}({})", params[0], params[1..].join(", "))
            } else {
                format!("{function}({})", params.join(", "))
            }
        })
        .collect();
    format!("`{function}` takes {}", forms.join(" or "))
}

pub(super) fn operand_kinds(symbol: &str) -> &'static str {
    match symbol {
        "+" => "numbers of one type, strings, bytes, lists, and timestamp/duration arithmetic",
        "-" => "numbers of one type and timestamp/duration arithmetic",
        "*" | "/" => "numbers of one type (int, uint or double)",
        "%" => "int and uint",
        "<" | "<=" | ">" | ">=" => "numbers, strings, bytes, bools, timestamps and durations",
        "in" => "a value and a list of that type, or a key and a map",
        "!" | "&&" | "||" => "bools",
        _ => "int and double",
    }
}

/// `wrong-result-type`: the expression's type cannot be what its environment needs (`dyn`
/// passes: its value is checked when it runs).
pub(super) fn wrong_result(ty: &Type, env: &Env, span: Span) -> Option<Diagnostic> {
    let expected = env.expected();
    let fits = match expected {
        Expected::Any => true,
        Expected::Bool => matches!(ty, Type::Bool | Type::Dyn | Type::Error | Type::Param(_)),
        Expected::String => {
            matches!(ty, Type::String | Type::Dyn | Type::Error | Type::Param(_))
        }
    };
    if fits {
        return None;
    }
    let what = match env.kind() {
        EnvKind::Filter => "a filter",
        EnvKind::Sender => "a sender expression",
        EnvKind::When => "a `when`",
        EnvKind::Template => "a template",
        EnvKind::General => "this expression",
    };
    let help = match expected {
        Expected::Bool => {
            "compare the value with something (`size(event.text) > 0`, `event.subject != ''`), \
             or test it (`has(...)`, `.contains(...)`)"
        }
        _ => {
            "a sender names who sent the event: select a string (`event.attributes.sender`), or \
              convert the value with `string(...)`"
        }
    };
    Some(
        Diagnostic::error(
            "wrong-result-type",
            span,
            format!(
                "{what} must give a {}, but this one gives {ty}",
                expected.name()
            ),
        )
        .with_label(format!("this is {ty}"))
        .with_help(help),
    )
}

/// `no-matching-overload` on `c ? t : f` whose branches have types that never meet (CEL's
/// `_?_:_` takes one type for both; `dyn` meets anything).
pub(super) fn branches_disagree(then: &Type, otherwise: &Type, span: Span) -> Diagnostic {
    Diagnostic::error(
        "no-matching-overload",
        span,
        format!("the branches of `? :` must have one type, not {then} and {otherwise}"),
    )
    .with_label(format!("this is {otherwise}"))
    .with_help("convert one branch (`string(…)`, `int(…)`, `double(…)`) or wrap it in `dyn(…)`")
}
