//! Where a store lives, as `--db` names it: a file path or `sqlite://PATH` for the embedded
//! `SQLite` store (one edge), `postgres://…` or `postgresql://…` for a `PostgreSQL` database that
//! several edges share.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A store's location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    /// An `SQLite` database file (created if missing).
    Sqlite(PathBuf),
    /// A `PostgreSQL` connection URL.
    Postgres(String),
}

/// Why a `--db` value names no store.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` names no store: {reason}")]
pub struct BadLocation {
    /// The value as given (a password in it is hidden).
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for StoreLocation {
    type Err = BadLocation;

    fn from_str(value: &str) -> Result<Self, BadLocation> {
        let bad = |reason: &str| BadLocation {
            value: hide_password(value),
            reason: reason.to_owned(),
        };
        if value.is_empty() {
            return Err(bad("it is empty"));
        }
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            let rest = value.split_once("://").map_or("", |(_, r)| r);
            let rest = rest.split('?').next().unwrap_or("");
            let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if host.is_empty() && database.is_empty() {
                return Err(bad("a PostgreSQL URL needs a host or a database"));
            }
            return Ok(StoreLocation::Postgres(value.to_owned()));
        }
        if let Some(path) = value
            .strip_prefix("sqlite://")
            .or_else(|| value.strip_prefix("sqlite:"))
        {
            if path.contains('?') {
                return Err(bad(
                    "SQLite URL parameters are not supported: name the file",
                ));
            }
            if path.is_empty() || path == ":memory:" {
                return Err(bad(
                    "name the SQLite file (an in-memory store would lose its waits)",
                ));
            }
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = value.split_once("://") {
            return Err(bad(&format!(
                "the scheme `{scheme}` is not supported: use a file path, sqlite://PATH or \
                 postgres://USER@HOST/DATABASE"
            )));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(value)))
    }
}

impl fmt::Display for StoreLocation {
    /// The location as a user may see it in logs (without a password).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            StoreLocation::Postgres(url) => f.write_str(&hide_password(url)),
        }
    }
}

/// `scheme://user:secret@host…` → `scheme://user:***@host…`.
fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<StoreLocation, BadLocation> {
        s.parse()
    }

    #[test]
    fn paths_and_urls_name_their_store() {
        assert_eq!(
            parse("waits.db"),
            Ok(StoreLocation::Sqlite("waits.db".into()))
        );
        assert_eq!(
            parse("sqlite://a/b.db"),
            Ok(StoreLocation::Sqlite("a/b.db".into()))
        );
        assert_eq!(
            parse("sqlite:///abs.db"),
            Ok(StoreLocation::Sqlite("/abs.db".into()))
        );
        assert_eq!(
            parse("sqlite:w.db"),
            Ok(StoreLocation::Sqlite("w.db".into()))
        );
        let pg = "postgres://oz:pw@db:5432/waits?options=-c%20search_path%3Dedge";
        assert_eq!(parse(pg), Ok(StoreLocation::Postgres(pg.into())));
        assert!(matches!(
            parse("postgresql://db/w"),
            Ok(StoreLocation::Postgres(_))
        ));
    }

    #[test]
    fn what_names_no_store_is_refused_with_the_reason() {
        for (value, words) in [
            ("", "empty"),
            ("sqlite://", "name the SQLite file"),
            ("sqlite::memory:", "in-memory"),
            ("sqlite://w.db?mode=ro", "parameters"),
            ("postgres://", "host or a database"),
            ("mysql://db/w", "`mysql` is not supported"),
        ] {
            let err = parse(value).unwrap_err();
            assert!(err.to_string().contains(words), "{value}: {err}");
        }
    }

    #[test]
    fn passwords_are_not_shown() {
        let err = parse("postgres://oz:hunter2@?").unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let location = parse("postgres://oz:hunter2@db/w").unwrap();
        assert_eq!(location.to_string(), "postgres://oz:***@db/w");
        assert_eq!(hide_password("postgres://oz@db/w"), "postgres://oz@db/w");
    }
}
