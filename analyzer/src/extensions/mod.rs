//! The CEL extension libraries an environment may enable, beyond the standard library: the
//! strings, lists and sets extensions, optional types and two-variable comprehensions, as
//! cel-go names and versions them.
//!
//! An environment ([`crate::check::Env`]) carries the set it enables; the checker refuses a
//! function, macro or piece of syntax whose extension is not in it, and says which extension
//! would provide it. The default is [`Extensions::KUBERNETES`], the set Kubernetes' CEL
//! environment enables (so a filter that validates there reads the same here); hosts narrow it
//! per environment (`[extensions]` in `ozcheck.toml`).

mod settings;

use std::fmt;
use std::str::FromStr;

pub use settings::{Choice, ContradictoryChoice, ExtensionSettings};

/// One extension library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Extension {
    /// cel-go's `ext.Strings()`: `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`,
    /// `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`, `strings.quote`,
    /// `format`, `reverse`.
    Strings,
    /// cel-go's `ext.Lists()`: `slice`, `flatten`, `distinct`, `sort`, `sortBy`, `reverse`,
    /// `lists.range`.
    Lists,
    /// cel-go's `ext.Sets()`: `sets.contains`, `sets.equivalent`, `sets.intersects`.
    Sets,
    /// cel-go's `cel.OptionalTypes()`: `a.?b`, `a[?i]`, `[?x]`, `{?k: v}`, `optional.of`,
    /// `optional.ofNonZeroValue`, `optional.none`, `optional.unwrap`, `hasValue`, `value`,
    /// `orValue`, `or`, `optMap`, `optFlatMap`, `first`, `last`, `unwrapOpt`.
    Optional,
    /// cel-go's `ext.TwoVarComprehensions()`: `all`, `exists` and `existsOne` over `(i, v)` or
    /// `(k, v)`, `transformList`, `transformMap`, `transformMapEntry`.
    TwoVarComprehensions,
}

impl Extension {
    /// Every extension, in the order they are listed.
    pub const ALL: [Extension; 5] = [
        Extension::Strings,
        Extension::Lists,
        Extension::Sets,
        Extension::Optional,
        Extension::TwoVarComprehensions,
    ];

    /// The name used in configuration and messages.
    pub fn name(self) -> &'static str {
        match self {
            Extension::Strings => "strings",
            Extension::Lists => "lists",
            Extension::Sets => "sets",
            Extension::Optional => "optional",
            Extension::TwoVarComprehensions => "two-var-comprehensions",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an extension.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown extension `{name}`{}", hint(*suggestion))]
pub struct UnknownExtension {
    /// The name as written.
    pub name: String,
    /// The closest extension name, if one is close.
    pub suggestion: Option<&'static str>,
}

fn hint(suggestion: Option<&str>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => format!("; the extensions are {}", Extensions::ALL),
    }
}

impl FromStr for Extension {
    type Err = UnknownExtension;

    /// Reads an extension name; cel-go's spellings (`two_var_comprehensions`,
    /// `optional_types`) are accepted too.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let found = match name {
            "strings" => Extension::Strings,
            "lists" => Extension::Lists,
            "sets" => Extension::Sets,
            "optional" | "optional_types" | "optional-types" => Extension::Optional,
            "two-var-comprehensions" | "two_var_comprehensions" => Extension::TwoVarComprehensions,
            _ => {
                return Err(UnknownExtension {
                    name: shown(name),
                    suggestion: crate::check::suggest::closest(
                        name,
                        Extension::ALL.iter().map(|e| e.name()),
                    ),
                });
            }
        };
        Ok(found)
    }
}

impl<'de> serde::Deserialize<'de> for Extension {
    /// An extension name, as [`FromStr`] reads it; another name is an error with a suggestion.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Extension {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// The longest name an error repeats; a longer one is cut (a configuration is hostile input).
const MAX_SHOWN_NAME: usize = 64;

fn shown(name: &str) -> String {
    match name.char_indices().nth(MAX_SHOWN_NAME) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_owned(),
    }
}

/// A set of extensions.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Extensions(u8);

impl Extensions {
    /// The standard library alone.
    pub const NONE: Extensions = Extensions(0);
    /// Every extension ozcheck knows.
    pub const ALL: Extensions = Extensions(
        Extension::Strings.bit()
            | Extension::Lists.bit()
            | Extension::Sets.bit()
            | Extension::Optional.bit()
            | Extension::TwoVarComprehensions.bit(),
    );
    /// What Kubernetes' CEL environment enables: strings, lists, sets, optional types and
    /// two-variable comprehensions (it pins the strings extension at version 2, which lacks
    /// `reverse`; ozcheck's `strings` includes it). The default of every environment.
    pub const KUBERNETES: Extensions = Extensions::ALL;

    /// Whether `extension` is in the set.
    pub const fn contains(self, extension: Extension) -> bool {
        self.0 & extension.bit() != 0
    }

    /// The set with `extension` added.
    #[must_use]
    pub const fn with(self, extension: Extension) -> Extensions {
        Extensions(self.0 | extension.bit())
    }

    /// The set without `extension`.
    #[must_use]
    pub const fn without(self, extension: Extension) -> Extensions {
        Extensions(self.0 & !extension.bit())
    }

    /// The extensions in the set, in [`Extension::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Extension> {
        Extension::ALL
            .into_iter()
            .filter(move |e| self.contains(*e))
    }

    /// The set named by `names` (each an [`Extension`] name).
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Extensions, UnknownExtension> {
        names.iter().try_fold(Extensions::NONE, |set, name| {
            Ok(set.with(name.as_ref().parse()?))
        })
    }
}

impl Default for Extensions {
    fn default() -> Self {
        Extensions::KUBERNETES
    }
}

impl fmt::Display for Extensions {
    /// The names, comma-separated in backticks (`none` for the empty set).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Extensions::NONE {
            return f.write_str("none");
        }
        let names: Vec<String> = self.iter().map(|e| format!("`{e}`")).collect();
        f.write_str(&names.join(", "))
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_get_a_suggestion() {
        for e in Extension::ALL {
            assert_eq!(e.name().parse::<Extension>(), Ok(e));
        }
        assert_eq!(
            "two_var_comprehensions".parse::<Extension>(),
            Ok(Extension::TwoVarComprehensions)
        );
        let err = "string".parse::<Extension>().unwrap_err();
        assert_eq!(err.suggestion, Some("strings"));
        assert!(err.to_string().contains("did you mean `strings`"), "{err}");
        let err = "regex".parse::<Extension>().unwrap_err();
        assert!(
            err.to_string().contains("`two-var-comprehensions`"),
            "{err}"
        );
    }

    #[test]
    fn sets_hold_what_they_are_given() {
        let set = Extensions::from_names(&["strings", "sets"]).unwrap();
        assert!(set.contains(Extension::Strings) && set.contains(Extension::Sets));
        assert!(!set.contains(Extension::Optional));
        assert_eq!(set.to_string(), "`strings`, `sets`");
        assert_eq!(
            set.without(Extension::Sets)
                .with(Extension::Lists)
                .iter()
                .count(),
            2
        );
        assert_eq!(Extensions::NONE.to_string(), "none");
        assert_eq!(Extensions::default(), Extensions::KUBERNETES);
        assert!(Extensions::from_names(&["strings", "nope"]).is_err());
    }
}
