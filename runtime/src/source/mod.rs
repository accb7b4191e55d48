//! Deliveries to event sources: the HMAC-SHA256 signature check (constant time, over the raw
//! bytes) and the source functions that map a delivery to an event, for GitHub webhooks
//! ([`github`]) and generic JSON ([`json`]). Nothing here trusts the body; every failure is a
//! value, never a panic.
//!
//! **An event holds only what the signed delivery binds** (E11): a signature covers the body,
//! not the headers, so a source function may take from a header only what the body confirms
//! (GitHub's `X-GitHub-Event` must name the kind of object the body holds).

pub mod github;
pub mod json;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::config::{SourceConfig, SourceKind};
use crate::model::Event;

/// The signature header (GitHub's name; every source kind uses it).
pub const SIGNATURE_HEADER: &str = "x-hub-signature-256";

/// A delivery as it arrived: lower-case header names and the raw body.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    /// Headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Delivery {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `sha256=<hex>` of the HMAC-SHA256 of `body` under `secret`, as senders write it.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Whether `header` is the right signature of `body` under `secret`, compared in constant time.
pub fn verify(secret: &str, body: &[u8], header: Option<&str>) -> bool {
    let Some(hex_digest) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Ok(digest) = hex::decode(hex_digest) else {
        return false;
    };
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&digest).is_ok()
}

/// What identifies a delivery as the sender signed it (E11), the key under which the edge
/// remembers it ([`crate::store::Store::remember_delivery`]): a JSON source's event id, which
/// the body holds; for GitHub, whose signature covers the body but not `X-GitHub-Delivery`,
/// `sha256:` and the hex SHA-256 of the raw body, so the same signed bytes under any delivery
/// id are one event, and GitHub's own redelivery (same id, same body) is one too.
pub fn identity(source: &SourceConfig, delivery: &Delivery, event: &Event) -> String {
    match source.kind {
        SourceKind::Json => format!("id:{}", event.id),
        SourceKind::Github => {
            use sha2::Digest;
            format!("sha256:{}", hex::encode(Sha256::digest(&delivery.body)))
        }
    }
}

/// Why a source's function gave no event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unmapped {
    /// The function cannot read the delivery (not JSON, a field missing): the sender gets 422
    /// and the same delivery sent again runs the function again.
    Unreadable(String),
    /// The function refuses it: an unsigned header contradicts the signed body, so the event it
    /// would give is not what the sender signed.
    Unbound(String),
}

impl Unmapped {
    /// What went wrong, in words.
    pub fn reason(&self) -> &str {
        match self {
            Unmapped::Unreadable(r) | Unmapped::Unbound(r) => r,
        }
    }
}

/// Maps a (verified) delivery to its event with the source's function, or says why it gives
/// none.
pub fn map_delivery(source: &SourceConfig, delivery: &Delivery) -> Result<Event, Unmapped> {
    // The event reader's rules first (decision 0006): a body with two values for one key reads
    // differently to every reader after us, so it is refused before any mapping takes one.
    // (Text that is not JSON at all is reported by the parser below.)
    if let Ok(text) = std::str::from_utf8(&delivery.body) {
        match ozcheck_analyzer::eval::check_json(text) {
            Ok(()) | Err(ozcheck_analyzer::eval::EventError::Json(_)) => {}
            Err(refused) => {
                return Err(Unmapped::Unreadable(format!(
                    "the body is refused: {refused}"
                )));
            }
        }
    }
    let body: Value = serde_json::from_slice(&delivery.body)
        .map_err(|e| Unmapped::Unreadable(format!("the body is not JSON: {e}")))?;
    if !body.is_object() {
        return Err(Unmapped::Unreadable(
            "the body is not a JSON object".to_owned(),
        ));
    }
    let event = match source.kind {
        SourceKind::Github => github::map(&source.name, delivery, &body),
        SourceKind::Json => {
            json::map(&source.name, &source.mapping, &body).map_err(Unmapped::Unreadable)
        }
    }?;
    refuse_nul(&event)?;
    Ok(event)
}

/// A NUL character (U+0000, `\u0000` in JSON) in an event's text fields: `PostgreSQL` cannot
/// keep it in a text column, so every store refuses it at the door alike, and one such delivery
/// cannot fail the deliveries stored with it. (The attributes are kept as JSON text, where it
/// is escaped.)
fn refuse_nul(event: &Event) -> Result<(), Unmapped> {
    let fields = [
        ("source", &event.source),
        ("id", &event.id),
        ("type", &event.kind),
        ("action", &event.action),
        ("subject", &event.subject),
        ("text", &event.text),
    ];
    match fields.iter().find(|(_, value)| value.contains('\0')) {
        Some((name, _)) => Err(Unmapped::Unreadable(format!(
            "the event's `{name}` holds a NUL character (U+0000), which no store keeps"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_documentation_vector() {
        let sig = sign("It's a Secret to Everybody", b"Hello, World!");
        assert_eq!(
            sig,
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
        assert!(verify(
            "It's a Secret to Everybody",
            b"Hello, World!",
            Some(&sig)
        ));
    }

    #[test]
    fn forged_truncated_and_missing_signatures_fail() {
        let body = b"{}";
        let good = sign("k", body);
        assert!(verify("k", body, Some(&good)));
        assert!(!verify("other", body, Some(&good)));
        assert!(!verify("k", b"{ }", Some(&good)));
        assert!(!verify("k", body, Some(&good[..good.len() - 2])));
        assert!(!verify("k", body, Some("sha256=zz")));
        assert!(!verify("k", body, Some(good.trim_start_matches("sha256="))));
        assert!(!verify("k", body, None));
    }

    fn source(kind: SourceKind) -> SourceConfig {
        SourceConfig::new("s", kind)
    }

    /// A NUL character in any text field is refused before any store sees it; in the
    /// attributes it is kept (escaped in their JSON text).
    #[test]
    fn a_nul_character_in_an_event_field_is_refused() {
        let json = source(SourceKind::Json);
        let body = |b: &str| Delivery {
            headers: vec![],
            body: b.as_bytes().to_vec(),
        };
        for (field, delivery) in [
            ("id", r#"{"id":"a\u0000b","type":"t"}"#),
            ("type", r#"{"id":"1","type":"t\u0000"}"#),
            ("subject", r#"{"id":"1","type":"t","subject":"\u0000"}"#),
            ("text", r#"{"id":"1","type":"t","text":"x\u0000y"}"#),
        ] {
            let refused = map_delivery(&json, &body(delivery)).unwrap_err();
            assert!(
                refused.reason().contains(&format!("`{field}` holds a NUL")),
                "{field}: {}",
                refused.reason()
            );
        }
        let kept = map_delivery(
            &json,
            &body(r#"{"id":"1","type":"t","attributes":{"k":"\u0000"}}"#),
        )
        .unwrap();
        assert_eq!(kept.attributes["k"], "\u{0}");
    }

    #[test]
    fn unreadable_deliveries_say_why() {
        let gh = source(SourceKind::Github);
        let json = source(SourceKind::Json);
        let body = |b: &[u8]| Delivery {
            headers: vec![],
            body: b.to_vec(),
        };
        assert!(
            map_delivery(&gh, &body(b"{}"))
                .unwrap_err()
                .reason()
                .contains("X-GitHub-Delivery")
        );
        assert!(
            map_delivery(&json, &body(b"not json"))
                .unwrap_err()
                .reason()
                .contains("not JSON")
        );
        let twice = map_delivery(&json, &body(br#"{"id":"1","type":"t","id":"2"}"#));
        assert!(
            twice
                .unwrap_err()
                .reason()
                .contains("two values for the key `id`")
        );
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(100), "]".repeat(100));
        assert!(
            map_delivery(&json, &body(deep.as_bytes()))
                .unwrap_err()
                .reason()
                .contains("deeper than 64 levels")
        );
        assert!(
            map_delivery(&json, &body(b"[1]"))
                .unwrap_err()
                .reason()
                .contains("object")
        );
        assert!(
            map_delivery(&json, &body(br#"{"type":"t"}"#))
                .unwrap_err()
                .reason()
                .contains("id")
        );
        assert!(
            map_delivery(&json, &body(br#"{"id":1,"type":"t","attributes":[]}"#))
                .unwrap_err()
                .reason()
                .contains("attributes")
        );
        let e = map_delivery(&json, &body(br#"{"id":7,"type":"t","subject":"x"}"#)).unwrap();
        assert_eq!((e.id.as_str(), e.subject.as_str()), ("7", "x"));
    }
}
