//! Which extensions each environment enables, as a host writes it down: a default for every
//! environment and an override per environment (`filter`, `sender`, `when`, `template`). The
//! lint reads it from the `[extensions]` table of `ozcheck.toml`, the runtime from the
//! `extensions` key of its configuration; both resolve it here, so they enable the same set.
//!
//! ```toml
//! [extensions]
//! disabled = ["two-var-comprehensions"]   # the default of every environment: Kubernetes' set
//!                                         # without two-variable comprehensions
//! [extensions.filter]
//! enabled = ["strings", "optional"]       # wait and trigger filters: exactly these
//! ```
//!
//! Each table holds `enabled` (the set, replacing what it starts from) and `disabled` (taken out
//! of it). The top-level table starts from [`Extensions::KUBERNETES`]; an environment's table
//! starts from the top-level result. Naming an extension in both lists of one table is refused,
//! as is a name that is no extension (with the closest name as a suggestion).

use serde::{Deserialize, Serialize};

use super::{Extension, Extensions};
use crate::check::{Env, EnvKind};

/// One table: the set it enables, and what it takes out of it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "RawChoice", into = "RawChoice")]
pub struct Choice {
    enabled: Option<Extensions>,
    disabled: Extensions,
}

impl Default for Choice {
    /// What it starts from, unchanged (not [`Extensions::default`], which is a full set).
    fn default() -> Self {
        Choice {
            enabled: None,
            disabled: Extensions::NONE,
        }
    }
}

/// A table as written, before its two lists are checked against each other.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawChoice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enabled: Option<Vec<Extension>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    disabled: Vec<Extension>,
}

impl From<Choice> for RawChoice {
    fn from(choice: Choice) -> Self {
        RawChoice {
            enabled: choice.enabled.map(|e| e.iter().collect()),
            disabled: choice.disabled.iter().collect(),
        }
    }
}

/// An extension named in both `enabled` and `disabled` of one table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the extension `{0}` is both in `enabled` and in `disabled`: keep it in one of them (`enabled` \
     is the set, `disabled` takes extensions out of it)"
)]
pub struct ContradictoryChoice(pub Extension);

impl TryFrom<RawChoice> for Choice {
    type Error = ContradictoryChoice;

    fn try_from(raw: RawChoice) -> Result<Self, Self::Error> {
        let set = |list: &[Extension]| {
            list.iter()
                .copied()
                .fold(Extensions::NONE, Extensions::with)
        };
        let enabled = raw.enabled.as_deref().map(set);
        let disabled = set(&raw.disabled);
        if let Some(both) = enabled.and_then(|e| e.iter().find(|x| disabled.contains(*x))) {
            return Err(ContradictoryChoice(both));
        }
        Ok(Choice { enabled, disabled })
    }
}

impl Choice {
    /// Exactly `extensions`.
    pub fn exactly(extensions: Extensions) -> Choice {
        Choice {
            enabled: Some(extensions),
            disabled: Extensions::NONE,
        }
    }

    /// `base` without `extensions`.
    pub fn without(extensions: Extensions) -> Choice {
        Choice {
            enabled: None,
            disabled: extensions,
        }
    }

    /// What this table makes of `base`.
    fn apply(&self, base: Extensions) -> Extensions {
        let set = self.enabled.unwrap_or(base);
        self.disabled.iter().fold(set, Extensions::without)
    }
}

/// The extensions of every environment: `[extensions]` of `ozcheck.toml`, `extensions` of the
/// runtime's configuration. The default enables [`Extensions::KUBERNETES`] everywhere.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "RawSettings", into = "RawSettings")]
pub struct ExtensionSettings {
    /// The set of every environment (from [`Extensions::KUBERNETES`]).
    default: Choice,
    /// Waits' and triggers' `filter`.
    filter: Option<Choice>,
    /// Triggers' `sender`.
    sender: Option<Choice>,
    /// Flow steps' `when`.
    when: Option<Choice>,
    /// `${{ }}` templates.
    template: Option<Choice>,
}

/// The settings as written: the default's two lists and a table per environment.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enabled: Option<Vec<Extension>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    disabled: Vec<Extension>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    filter: Option<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sender: Option<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    when: Option<Choice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    template: Option<Choice>,
}

impl From<ExtensionSettings> for RawSettings {
    fn from(settings: ExtensionSettings) -> Self {
        let default = RawChoice::from(settings.default);
        RawSettings {
            enabled: default.enabled,
            disabled: default.disabled,
            filter: settings.filter,
            sender: settings.sender,
            when: settings.when,
            template: settings.template,
        }
    }
}

impl TryFrom<RawSettings> for ExtensionSettings {
    type Error = ContradictoryChoice;

    fn try_from(raw: RawSettings) -> Result<Self, Self::Error> {
        let default = Choice::try_from(RawChoice {
            enabled: raw.enabled,
            disabled: raw.disabled,
        })?;
        Ok(ExtensionSettings {
            default,
            filter: raw.filter,
            sender: raw.sender,
            when: raw.when,
            template: raw.template,
        })
    }
}

impl ExtensionSettings {
    /// Settings whose every environment starts from `choice`.
    pub fn everywhere(choice: Choice) -> ExtensionSettings {
        ExtensionSettings {
            default: choice,
            ..ExtensionSettings::default()
        }
    }

    /// The same settings with `choice` for environments of `kind` (a general environment has
    /// no table of its own: it takes the default).
    #[must_use]
    pub fn with(mut self, kind: EnvKind, choice: Choice) -> ExtensionSettings {
        match kind {
            EnvKind::Filter => self.filter = Some(choice),
            EnvKind::Sender => self.sender = Some(choice),
            EnvKind::When => self.when = Some(choice),
            EnvKind::Template => self.template = Some(choice),
            EnvKind::General => self.default = choice,
        }
        self
    }

    /// The extensions environments of `kind` enable.
    pub fn of(&self, kind: EnvKind) -> Extensions {
        let base = self.default.apply(Extensions::KUBERNETES);
        let table = match kind {
            EnvKind::Filter => self.filter.as_ref(),
            EnvKind::Sender => self.sender.as_ref(),
            EnvKind::When => self.when.as_ref(),
            EnvKind::Template => self.template.as_ref(),
            EnvKind::General => None,
        };
        table.map_or(base, |t| t.apply(base))
    }

    /// `env` with the extensions of its kind.
    pub fn apply(&self, env: Env) -> Env {
        let extensions = self.of(env.kind());
        env.with_extensions(extensions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<ExtensionSettings, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn the_default_table_starts_from_kubernetes_and_environment_tables_from_it() {
        let settings = parse(
            r#"{"disabled": ["two-var-comprehensions"],
                "filter": {"enabled": ["strings", "optional"]},
                "when": {"disabled": ["sets"]}}"#,
        )
        .unwrap();
        let default = Extensions::KUBERNETES.without(Extension::TwoVarComprehensions);
        assert_eq!(settings.of(EnvKind::Template), default);
        assert_eq!(settings.of(EnvKind::General), default);
        assert_eq!(
            settings.of(EnvKind::Filter),
            Extensions::from_names(&["strings", "optional"]).unwrap()
        );
        assert_eq!(settings.of(EnvKind::When), default.without(Extension::Sets));
        let env = settings.apply(Env::filter());
        assert!(!env.extensions().contains(Extension::Lists));
        assert_eq!(
            ExtensionSettings::default().of(EnvKind::Filter),
            Extensions::KUBERNETES
        );
        let built = ExtensionSettings::everywhere(Choice::without(
            Extensions::NONE.with(Extension::TwoVarComprehensions),
        ))
        .with(EnvKind::Filter, Choice::exactly(Extensions::NONE));
        assert_eq!(built.of(EnvKind::Filter), Extensions::NONE);
        assert_eq!(built.of(EnvKind::Sender), default);
    }

    #[test]
    fn bad_names_keys_and_contradictions_are_refused_with_their_reason() {
        let err = parse(r#"{"filter": {"enabled": ["string"]}}"#).unwrap_err();
        assert!(
            err.contains("unknown extension `string`; did you mean `strings`?"),
            "{err}"
        );
        let err = parse(r#"{"filtr": {}}"#).unwrap_err();
        assert!(err.contains("unknown field `filtr`"), "{err}");
        let err = parse(r#"{"filter": {"enable": []}}"#).unwrap_err();
        assert!(err.contains("unknown field `enable`"), "{err}");
        let err = parse(r#"{"enabled": ["sets"], "disabled": ["sets"]}"#).unwrap_err();
        assert!(
            err.contains("`sets` is both in `enabled` and in `disabled`"),
            "{err}"
        );
        let settings =
            parse(r#"{"disabled": ["sets"], "filter": {"enabled": ["lists"]}}"#).unwrap();
        let again = serde_json::to_string(&settings).unwrap();
        assert_eq!(parse(&again), Ok(settings));
        let long = "x".repeat(100_000);
        let err = parse(&format!(r#"{{"enabled": ["{long}"]}}"#)).unwrap_err();
        assert!(err.len() < 400, "the name is cut: {} bytes", err.len());
    }
}
