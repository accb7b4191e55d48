//! Deliveries to event sources: the HMAC-SHA256 signature check (constant time, over the raw
//! bytes) and the declarative functions that map a delivery to an event, for GitHub-style and
//! generic JSON sources. Nothing here trusts the body; every failure is a value, never a panic.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use crate::config::{JsonMapping, SourceConfig, SourceKind};
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

/// Maps a (verified) delivery to its event with the source's function, or says why it cannot be
/// read (the sender then gets 422).
pub fn map_delivery(source: &SourceConfig, delivery: &Delivery) -> Result<Event, String> {
    let body: Value =
        serde_json::from_slice(&delivery.body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if !body.is_object() {
        return Err("the body is not a JSON object".to_owned());
    }
    match source.kind {
        SourceKind::Github => map_github(&source.name, delivery, &body),
        SourceKind::Json => map_json(&source.name, &source.mapping, &body),
    }
}

fn string_at<'a>(body: &'a Value, pointers: &[&str]) -> Option<&'a str> {
    pointers.iter().find_map(|p| body.pointer(p)?.as_str())
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn map_github(source: &str, delivery: &Delivery, body: &Value) -> Result<Event, String> {
    let id = delivery
        .header("x-github-delivery")
        .filter(|s| !s.is_empty())
        .ok_or("the X-GitHub-Delivery header is missing")?;
    let kind = delivery
        .header("x-github-event")
        .filter(|s| !s.is_empty())
        .ok_or("the X-GitHub-Event header is missing")?;
    let repo = string_at(body, &["/repository/full_name"]).unwrap_or("");
    let number = [
        "/pull_request/number",
        "/issue/number",
        "/check_suite/pull_requests/0/number",
        "/check_run/pull_requests/0/number",
        "/number",
    ]
    .iter()
    .find_map(|p| body.pointer(p)?.as_u64());
    let subject = match number {
        Some(n) if !repo.is_empty() => format!("{repo}#{n}"),
        _ => repo.to_owned(),
    };
    let text = string_at(
        body,
        &[
            "/comment/body",
            "/review/body",
            "/pull_request/title",
            "/issue/title",
            "/head_commit/message",
        ],
    )
    .unwrap_or("");
    // The attributes are a fixed, small selection: a webhook body is far larger than the 8 KiB
    // an event may carry, and a filter needs only these.
    let picks: [(&str, &[&str]); 9] = [
        ("sender", &["/sender/login"]),
        (
            "conclusion",
            &["/check_suite/conclusion", "/check_run/conclusion"],
        ),
        ("status", &["/check_suite/status", "/check_run/status"]),
        ("draft", &["/pull_request/draft"]),
        ("merged", &["/pull_request/merged"]),
        (
            "state",
            &["/review/state", "/pull_request/state", "/issue/state"],
        ),
        (
            "ref",
            &["/ref", "/check_suite/head_branch", "/pull_request/head/ref"],
        ),
        (
            "head_sha",
            &["/check_suite/head_sha", "/check_run/head_sha", "/after"],
        ),
        ("number", &["/pull_request/number", "/issue/number"]),
    ];
    let mut attributes = Map::new();
    for (name, pointers) in picks {
        if let Some(v) = pointers.iter().find_map(|p| body.pointer(p)) {
            if !v.is_null() {
                attributes.insert(name.to_owned(), v.clone());
            }
        }
    }
    Ok(Event {
        source: source.to_owned(),
        id: id.to_owned(),
        kind: kind.to_owned(),
        action: string_at(body, &["/action"]).unwrap_or("").to_owned(),
        subject,
        text: text.to_owned(),
        attributes: Value::Object(attributes),
    })
}

fn map_json(source: &str, mapping: &JsonMapping, body: &Value) -> Result<Event, String> {
    let id = body
        .pointer(&mapping.id)
        .and_then(scalar_text)
        .ok_or_else(|| format!("no event id at {}", mapping.id))?;
    let kind = body
        .pointer(&mapping.kind)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("no event type at {}", mapping.kind))?;
    let optional = |pointer: &str, name: &str| -> Result<String, String> {
        match body.pointer(pointer) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("the {name} at {pointer} is not a string")),
        }
    };
    let attributes = match body.pointer(&mapping.attributes) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err(format!(
                "the attributes at {} are not an object",
                mapping.attributes
            ));
        }
    };
    Ok(Event {
        source: source.to_owned(),
        id,
        kind: kind.to_owned(),
        action: optional(&mapping.action, "action")?,
        subject: optional(&mapping.subject, "subject")?,
        text: optional(&mapping.text, "text")?,
        attributes,
    })
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
        SourceConfig {
            name: "s".into(),
            kind,
            secret: None,
            plugin: None,
            bounds: ozcheck_analyzer::EventBounds::DEFAULT,
            eval_cost_limit: None,
            mapping: JsonMapping::default(),
        }
    }

    #[test]
    fn github_delivery_maps_type_subject_and_attributes() {
        let d = Delivery {
            headers: vec![
                ("x-github-event".into(), "check_suite".into()),
                ("x-github-delivery".into(), "d1".into()),
            ],
            body: br#"{"action":"completed","repository":{"full_name":"octo/demo"},
                "check_suite":{"conclusion":"failure","pull_requests":[{"number":12}]},
                "sender":{"login":"ada"}}"#
                .to_vec(),
        };
        let e = map_delivery(&source(SourceKind::Github), &d).unwrap();
        assert_eq!(e.id, "d1");
        assert_eq!(e.kind, "check_suite");
        assert_eq!(e.action, "completed");
        assert_eq!(e.subject, "octo/demo#12");
        assert_eq!(e.attributes["conclusion"], "failure");
        assert_eq!(e.attributes["sender"], "ada");
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
                .contains("X-GitHub-Delivery")
        );
        assert!(
            map_delivery(&json, &body(b"not json"))
                .unwrap_err()
                .contains("not JSON")
        );
        assert!(
            map_delivery(&json, &body(b"[1]"))
                .unwrap_err()
                .contains("object")
        );
        assert!(
            map_delivery(&json, &body(br#"{"type":"t"}"#))
                .unwrap_err()
                .contains("id")
        );
        assert!(
            map_delivery(&json, &body(br#"{"id":1,"type":"t","attributes":[]}"#))
                .unwrap_err()
                .contains("attributes")
        );
        let e = map_delivery(&json, &body(br#"{"id":7,"type":"t","subject":"x"}"#)).unwrap();
        assert_eq!((e.id.as_str(), e.subject.as_str()), ("7", "x"));
    }
}
