//! The cel-spec conformance runner: takes one record of `corpus/cel-spec/*.jsonl` (already
//! parsed JSON; no I/O here) and says whether the analyzer passes it.
//!
//! Scope: the corpus marks each record out of scope with a `skip_reason` made of labels; the
//! labels of the extension libraries ozcheck implements ([`IMPLEMENTED`]) no longer count, so
//! a record is skipped only for what remains (protobuf messages, containers, other libraries).
//! Those records run with every extension enabled.
//!
//! A record passes when the expression parses, type-checks in an environment built from its
//! `type_env` (unless `disable_check`), and evaluates over its `bindings` to exactly the expected
//! value (types included, maps order-agnostic, NaN equal to NaN) or to an error when an error is
//! expected. `check_only` records compare the deduced type instead. Upstream error messages are
//! not normative, so only the presence of an error is checked.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use serde_json::Value as Json;

use crate::check::{self, Env, SizeHint};
use crate::eval::time::{Duration, Timestamp};
use crate::eval::{Activation, EvalError, Limits, MapValue, Program, TypeValue, Value, base64};
use crate::extensions::Extensions;
use crate::syntax::{self, ParseOptions};
use crate::types::Type;

/// What the runner concluded about one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The record passes.
    Pass,
    /// It fails, with the reason.
    Fail(String),
    /// It is not run, with the reason.
    Skip(String),
}

/// How much of the pipeline a run exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Parse, check and evaluate.
    Evaluate,
    /// Parse only: a record passes when it parses (or fails to parse where an error is expected).
    ParseOnly,
}

/// Source limits for conformance expressions: cel-spec has expressions longer than the 1024 bytes
/// a filter may have, and the language itself has no such limit.
fn parse_options() -> ParseOptions {
    ParseOptions {
        max_bytes: 1 << 16,
        ..ParseOptions::default()
    }
}

/// The `skip_reason` labels of the extension libraries ozcheck implements: a record marked
/// only with these is in scope.
pub const IMPLEMENTED: &[&str] = &[
    "extension library: strings",
    "optional types",
    "extension: two-variable comprehensions",
];

/// Why a record is out of scope: the labels of its `skip_reason` that ozcheck does not
/// implement, joined with `"; "`; `None` when it is in scope.
pub fn skip_reason(record: &Json) -> Option<String> {
    let reason = record.get("skip_reason").and_then(Json::as_str)?;
    let remaining: Vec<&str> = reason
        .split("; ")
        .filter(|label| !IMPLEMENTED.contains(label))
        .collect();
    (!remaining.is_empty()).then(|| remaining.join("; "))
}

/// Runs one record; records outside our scope (see [`skip_reason`]) are skipped.
pub fn run(record: &Json, mode: Mode) -> Outcome {
    if let Some(reason) = skip_reason(record) {
        return Outcome::Skip(reason);
    }
    run_unscoped(record, mode)
}

/// Runs one record whatever its scope: out-of-scope records mostly fail, but they must never
/// make the analyzer panic, so the robustness tests feed every record through here.
pub fn run_unscoped(record: &Json, mode: Mode) -> Outcome {
    let Some(expr) = record.get("expr").and_then(Json::as_str) else {
        return Outcome::Fail("the record has no `expr`".to_owned());
    };
    let expected = record.get("expected").unwrap_or(&Json::Null);
    let expects_error = expected.get("error").is_some() || expected.get("any_error").is_some();
    let ast = match syntax::parse(expr, &parse_options()) {
        Ok(ast) => ast,
        Err(diagnostics) if expects_error && mode == Mode::ParseOnly => {
            let _ = diagnostics;
            return Outcome::Pass;
        }
        Err(diagnostics) => {
            let first = diagnostics
                .first()
                .map_or_else(|| "no diagnostic".to_owned(), |d| d.message.clone());
            return Outcome::Fail(format!("parse error: {first}"));
        }
    };
    if mode == Mode::ParseOnly {
        return Outcome::Pass;
    }
    let env = match environment(record) {
        Ok(env) => env,
        Err(reason) => return Outcome::Fail(reason),
    };
    let check_only = record.get("check_only").and_then(Json::as_bool) == Some(true);
    let disable_check = record.get("disable_check").and_then(Json::as_bool) == Some(true);
    let ast = if disable_check {
        ast
    } else {
        match check::check(ast, &env) {
            Ok(checked) => {
                if let Some(deduced) = record.get("deduced_type").and_then(Json::as_str) {
                    let found = checked.result_type().to_string();
                    if found != deduced {
                        return Outcome::Fail(format!("deduced type {found}, expected {deduced}"));
                    }
                }
                checked.ast
            }
            Err(_) if expects_error => return Outcome::Pass,
            Err(diagnostics) => {
                let first = diagnostics
                    .first()
                    .map_or_else(|| "no diagnostic".to_owned(), |d| d.message.clone());
                return Outcome::Fail(format!("check error: {first}"));
            }
        }
    };
    if check_only {
        return Outcome::Pass;
    }
    let program = match Program::new(ast) {
        Ok(program) => program,
        Err(_) if expects_error => return Outcome::Pass,
        Err(diagnostics) => {
            return Outcome::Fail(format!("program refused: {}", diagnostics[0].message));
        }
    };
    let activation = match bindings(record) {
        Ok(activation) => activation,
        Err(reason) => return Outcome::Fail(reason),
    };
    // Conformance measures semantics, not limits: no cost limit, and a deadline far beyond any
    // test's needs so a slow machine cannot make a result flaky.
    let limits = Limits::default()
        .with_cost(None)
        .with_deadline(StdDuration::from_secs(10));
    compare(program.eval(&activation, &limits), expected)
}

fn compare(result: Result<crate::eval::Evaluation, EvalError>, expected: &Json) -> Outcome {
    if expected.get("error").is_some() || expected.get("any_error").is_some() {
        return match result {
            Err(EvalError::Runtime { .. }) => Outcome::Pass,
            Err(stop) => Outcome::Fail(format!("expected an error, stopped: {stop}")),
            Ok(done) => Outcome::Fail(format!("expected an error, got {}", done.value)),
        };
    }
    let Some(want) = expected.get("value") else {
        return Outcome::Fail("the record has no expected value".to_owned());
    };
    let want = match decode_value(want) {
        Ok(want) => want,
        Err(reason) => return Outcome::Fail(reason),
    };
    match result {
        Ok(done) if strict_eq(&done.value, &want) => Outcome::Pass,
        Ok(done) => Outcome::Fail(format!("got {}, expected {want}", done.value)),
        Err(e) => Outcome::Fail(format!("got error {e:?}, expected {want}")),
    }
}

/// Exact equality for matching results: types must agree (`1`, `1u` and `1.0` differ), NaN
/// matches NaN, maps ignore order.
fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits() || x == y
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| strict_eq(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.entries().iter().all(|(k, v)| {
                    y.entries()
                        .iter()
                        .any(|(k2, v2)| k == k2 && strict_eq(v, v2))
                })
        }
        _ => a.type_value() == b.type_value() && a.cel_eq(b),
    }
}

/// Decodes the typed JSON value encoding of the corpus (`{"int": "1"}`, `{"list": [...]}`, …).
pub fn decode_value(json: &Json) -> Result<Value, String> {
    let Some((tag, body)) = json.as_object().and_then(|o| o.iter().next()) else {
        return Err(format!("not a typed value: {json}"));
    };
    let text = || {
        body.as_str()
            .ok_or_else(|| format!("{tag} must be a string"))
    };
    let bad = |what: &str| format!("bad {tag} value {body}: {what}");
    Ok(match tag.as_str() {
        "null" => Value::Null,
        "bool" => Value::Bool(body.as_bool().ok_or_else(|| bad("not a bool"))?),
        "int" => Value::Int(text()?.parse().map_err(|_| bad("not an int"))?),
        "uint" => Value::Uint(text()?.parse().map_err(|_| bad("not a uint"))?),
        "double" => Value::Double(text()?.parse().map_err(|_| bad("not a double"))?),
        "string" => Value::string(text()?),
        "bytes_b64" => Value::Bytes(
            base64::decode(text()?)
                .ok_or_else(|| bad("not base64"))?
                .into(),
        ),
        "list" => Value::list(
            body.as_array()
                .ok_or_else(|| bad("not an array"))?
                .iter()
                .map(decode_value)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        "map" => {
            let mut pairs = Vec::new();
            for entry in body.as_array().ok_or_else(|| bad("not an array"))? {
                let pair = entry
                    .as_array()
                    .filter(|p| p.len() == 2)
                    .ok_or_else(|| bad("not a pair"))?;
                pairs.push((decode_value(&pair[0])?, decode_value(&pair[1])?));
            }
            Value::Map(Arc::new(
                MapValue::from_entries(pairs).map_err(|e| bad(&e.to_string()))?,
            ))
        }
        "timestamp" => Value::Timestamp(Timestamp::parse(text()?).map_err(|e| bad(&e.0))?),
        "duration" => Value::Duration(Duration::parse(text()?).map_err(|e| bad(&e.0))?),
        "type" => Value::Type(TypeValue::from_name(text()?).ok_or_else(|| bad("unknown type"))?),
        _ => return Err(format!("unsupported value encoding `{tag}`")),
    })
}

/// Parses a type string of the corpus (`int`, `list(int)`, `map(string, dyn)`, `type(T)`).
pub fn parse_type(text: &str) -> Result<Type, String> {
    text.parse::<Type>()
        .map_err(|e| format!("unsupported type: {e}"))
}

fn environment(record: &Json) -> Result<Env, String> {
    let mut env = Env::general().with_extensions(Extensions::ALL);
    if let Some(vars) = record.get("type_env").and_then(Json::as_object) {
        for (name, ty) in vars {
            let ty = ty
                .as_str()
                .ok_or_else(|| format!("type of {name} is not a string"))?;
            env = env.declare(name, parse_type(ty)?, SizeHint::default());
        }
    }
    // A binding without a declaration is declared `dyn` (README of the corpus).
    if let Some(bound) = record.get("bindings").and_then(Json::as_object) {
        for name in bound.keys() {
            if env.var(name).is_none() {
                env = env.declare(name, Type::Dyn, SizeHint::default());
            }
        }
    }
    Ok(env)
}

fn bindings(record: &Json) -> Result<Activation, String> {
    let mut activation = Activation::new();
    if let Some(bound) = record.get("bindings").and_then(Json::as_object) {
        for (name, value) in bound {
            activation.bind(name, decode_value(value)?);
        }
    }
    Ok(activation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_typed_values_and_types() {
        let v = decode_value(
            &serde_json::json!({"map": [[{"int": "1"}, {"list": [{"double": "NaN"}]}]]}),
        )
        .unwrap();
        let want = decode_value(
            &serde_json::json!({"map": [[{"int": "1"}, {"list": [{"double": "NaN"}]}]]}),
        )
        .unwrap();
        assert!(strict_eq(&v, &want));
        assert!(!strict_eq(&Value::Int(1), &Value::Uint(1)));
        assert_eq!(
            parse_type("map(string, list(int))").unwrap().to_string(),
            "map(string, list(int))"
        );
        assert!(parse_type("wrapper(int)").is_err());
    }

    #[test]
    fn skips_out_of_scope_records() {
        let record = serde_json::json!({"expr": "x", "skip_reason": "protobuf messages"});
        assert_eq!(
            run(&record, Mode::Evaluate),
            Outcome::Skip("protobuf messages".to_owned())
        );
        // Implemented libraries no longer count; what remains is the reason.
        let record = serde_json::json!({
            "expr": "x",
            "skip_reason": "extension library: strings; protobuf messages"
        });
        assert_eq!(skip_reason(&record).as_deref(), Some("protobuf messages"));
        let record = serde_json::json!({"skip_reason": "optional types"});
        assert_eq!(skip_reason(&record), None);
    }
}
