//! The options of the calls, read from a JSON object with the CLI's defaults: the environment
//! (`context`: `filter`, `sender`, `when`, `template`), the cost `limit`, the source's bounds
//! (`maxText`, `maxAttributes`, `maxHeader`, as `--max-text` and the others), the `extensions`
//! (names separated by commas, or `none`; default: those an `ozcheck.toml` without an
//! `[extensions]` table enables), and `witness` and `explain` as the CLI's flags.

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::{EventBounds, Extensions, Options};
use serde_json::Value;
use wasm_bindgen::JsError;

/// The options of one check.
#[derive(Clone, Debug)]
pub struct FilterOptions {
    context: String,
    limit: u64,
    bounds: EventBounds,
    extensions: Option<Extensions>,
    /// Build the witness as well.
    pub witness: bool,
    /// Add the cost tree.
    pub explain: bool,
}

impl FilterOptions {
    /// Reads the options; an empty string means every default. A wrong type or an unknown
    /// context or extension is an error with the option's name, never a silent default.
    pub fn parse(text: &str) -> Result<Self, JsError> {
        let value: Value = if text.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(text).map_err(|e| JsError::new(&format!("options: {e}")))?
        };
        let Value::Object(map) = value else {
            return Err(JsError::new("options: expected a JSON object"));
        };
        let number = |key: &str, default: u64| -> Result<u64, JsError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => v.as_u64().ok_or_else(|| {
                    JsError::new(&format!("options: `{key}` must be a whole number ≥ 0"))
                }),
            }
        };
        let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
        let context = match map.get("context") {
            None | Some(Value::Null) => "filter".to_owned(),
            Some(Value::String(s))
                if ["filter", "sender", "when", "template"].contains(&s.as_str()) =>
            {
                s.clone()
            }
            Some(other) => {
                return Err(JsError::new(&format!(
                    "options: `context` must be filter, sender, when or template, not {other}"
                )));
            }
        };
        let extensions = match map.get("extensions") {
            None | Some(Value::Null) => None,
            Some(Value::String(list)) if list.trim() == "none" => Some(Extensions::NONE),
            Some(Value::String(list)) => {
                let names: Vec<&str> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .collect();
                Some(
                    Extensions::from_names(&names)
                        .map_err(|e| JsError::new(&format!("options: {e}")))?,
                )
            }
            Some(_) => return Err(JsError::new("options: `extensions` must be a string")),
        };
        let defaults = EventBounds::DEFAULT;
        Ok(Self {
            context,
            limit: number("limit", ozcheck_analyzer::cost::DEFAULT_COST_LIMIT)?,
            bounds: EventBounds {
                text: number("maxText", defaults.text)?,
                attributes: number("maxAttributes", defaults.attributes)?,
                header_field: number("maxHeader", defaults.header_field)?,
            },
            extensions,
            witness: flag("witness"),
            explain: flag("explain"),
        })
    }

    /// The environment with its extensions (`ozcheck filter --context`, `--extensions`).
    pub fn env(&self) -> Env {
        let env = match self.context.as_str() {
            "sender" => Env::sender(),
            "when" => Env::when(true, &[]),
            "template" => Env::template(true, &[]),
            _ => Env::filter(),
        };
        match self.extensions {
            Some(extensions) => env.with_extensions(extensions),
            None => ozcheck_lint::Config::default().extensions.apply(env),
        }
    }

    /// The analyzer's options.
    pub fn analyzer(&self) -> Options {
        Options {
            limit: self.limit,
            bounds: self.bounds,
            ..Options::default()
        }
    }
}

/// An `ozcheck.toml` from its text; empty text is the default configuration.
pub fn lint_config(text: &str) -> Result<ozcheck_lint::Config, JsError> {
    if text.trim().is_empty() {
        return Ok(ozcheck_lint::Config::default());
    }
    ozcheck_lint::Config::parse(text).map_err(|e| JsError::new(&format!("ozcheck.toml: {e}")))
}
