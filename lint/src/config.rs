//! `ozcheck.toml`: rule levels, the size bounds of event sources, and the CEL extensions each
//! environment enables.
//!
//! ```toml
//! [rules]
//! unknown-key = "error"      # error, warning or off
//!
//! [sources.github-events]    # bounds of the events this source may deliver, in bytes
//! text = 32768
//! attributes = 8192
//!
//! [extensions]               # every environment: Kubernetes' set without `sets`
//! disabled = ["sets"]
//! [extensions.filter]        # waits' and triggers' filters: exactly these
//! enabled = ["strings", "optional"]
//! ```

use std::collections::HashMap;

use ozcheck_analyzer::{EventBounds, ExtensionSettings};

/// What a rule's findings become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Not reported.
    Off,
    /// Reported; does not fail the run.
    Warning,
    /// Reported; fails the run.
    Error,
}

/// The lint's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Rule levels by rule id.
    #[serde(default)]
    pub rules: HashMap<String, Level>,
    /// Event bounds by source name.
    #[serde(default)]
    pub sources: HashMap<String, EventBounds>,
    /// The extensions of each environment (`ozcheck_analyzer::extensions::settings`).
    #[serde(default)]
    pub extensions: ExtensionSettings,
}

/// A configuration that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads `ozcheck.toml` text. Unknown keys and unknown rule ids are errors, so a typo does
    /// not silently leave a rule on.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        for id in config.rules.keys() {
            if crate::rules::find(id).is_none() {
                let hint = crate::schema::closest(id, crate::rules::RULES.iter().map(|r| r.id))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Err(ConfigError(format!("unknown rule `{id}` in [rules]{hint}")));
            }
        }
        Ok(config)
    }

    /// The bounds of a source's events (the defaults when not configured).
    pub fn bounds(&self, source: Option<&str>) -> EventBounds {
        source
            .and_then(|s| self.sources.get(s))
            .copied()
            .unwrap_or_default()
    }
}
