//! The source function of GitHub webhooks: the event id from `X-GitHub-Delivery`, the type from
//! `X-GitHub-Event` **as far as the signed body binds it**, the subject `owner/repo#number`, the
//! text of the comment, review or title, and a small fixed selection of attributes.
//!
//! GitHub signs the body only. A node that reads a source's deliveries could send a signed body
//! again under a new delivery id and another `X-GitHub-Event` (a `pull_request` body as a
//! `check_suite`), so the type is checked against the body: every type GitHub sends names the
//! object its body holds (`check_suite`, `pull_request` and `review`, `issue` and `comment`, …),
//! written down in [`BINDINGS`]. A header type whose object the body does not hold, while the body
//! holds another type's, is refused ([`Unmapped::Unbound`]). A body that holds no known type's
//! object is taken with its header's type (GitHub signs no such body; test senders do).

use serde_json::{Map, Value};

use super::{Delivery, Unmapped};
use crate::model::Event;

/// What a GitHub event type's body holds at its top level: all of `has`, none of `lacks`.
#[derive(Debug)]
pub struct Binding {
    /// The `X-GitHub-Event` value.
    pub kind: &'static str,
    /// Top-level keys the body of this type always has.
    pub has: &'static [&'static str],
    /// Top-level keys that mark a more specific type sharing `has` (a review also holds its
    /// pull request).
    pub lacks: &'static [&'static str],
}

const fn bind(
    kind: &'static str,
    has: &'static [&'static str],
    lacks: &'static [&'static str],
) -> Binding {
    Binding { kind, has, lacks }
}

/// The body shape of each GitHub event type the edge binds. A type not listed here is bound
/// only when the body holds none of the listed shapes.
pub const BINDINGS: &[Binding] = &[
    bind(
        "pull_request",
        &["pull_request"],
        &["review", "comment", "thread"],
    ),
    bind("pull_request_review", &["pull_request", "review"], &[]),
    bind(
        "pull_request_review_comment",
        &["pull_request", "comment"],
        &[],
    ),
    bind(
        "pull_request_review_thread",
        &["pull_request", "thread"],
        &[],
    ),
    bind("issues", &["issue"], &["comment"]),
    bind("issue_comment", &["issue", "comment"], &[]),
    bind("discussion", &["discussion"], &["comment"]),
    bind("discussion_comment", &["discussion", "comment"], &[]),
    bind(
        "commit_comment",
        &["comment"],
        &["issue", "pull_request", "discussion"],
    ),
    bind("check_suite", &["check_suite"], &[]),
    bind("check_run", &["check_run"], &["deployment_status"]),
    bind(
        "workflow_run",
        &["workflow_run"],
        &["deployment", "deployment_status"],
    ),
    bind("workflow_job", &["workflow_job"], &[]),
    bind(
        "deployment",
        &["deployment"],
        &["deployment_status", "workflow_job"],
    ),
    bind("deployment_status", &["deployment_status"], &[]),
    bind("release", &["release"], &[]),
    bind("push", &["ref", "before", "after"], &[]),
    bind("create", &["ref", "ref_type", "master_branch"], &[]),
    bind("delete", &["ref", "ref_type"], &["master_branch", "before"]),
    bind("status", &["sha", "state", "context"], &[]),
    bind("merge_group", &["merge_group"], &[]),
    bind(
        "label",
        &["label"],
        &["issue", "pull_request", "discussion"],
    ),
    bind("milestone", &["milestone"], &["issue", "pull_request"]),
    bind("fork", &["forkee"], &[]),
    bind("star", &["starred_at"], &[]),
    bind("ping", &["zen"], &[]),
];

impl Binding {
    fn holds(&self, body: &Map<String, Value>) -> bool {
        self.has.iter().all(|k| body.contains_key(*k))
            && !self.lacks.iter().any(|k| body.contains_key(*k))
    }
}

/// Checks `kind` (from the unsigned header) against the signed `body`: `Ok` when the body holds
/// that type's object, or no known type's object at all.
pub fn check_binding(kind: &str, body: &Map<String, Value>) -> Result<(), Unmapped> {
    if BINDINGS.iter().any(|b| b.kind == kind && b.holds(body)) {
        return Ok(());
    }
    match BINDINGS.iter().find(|b| b.holds(body)) {
        None => Ok(()),
        Some(held) => Err(Unmapped::Unbound(format!(
            "the X-GitHub-Event header says `{kind}`, but the signed body holds a `{}` event",
            held.kind
        ))),
    }
}

fn string_at<'a>(body: &'a Value, pointers: &[&str]) -> Option<&'a str> {
    pointers.iter().find_map(|p| body.pointer(p)?.as_str())
}

/// Maps a GitHub delivery to its event.
pub fn map(source: &str, delivery: &Delivery, body: &Value) -> Result<Event, Unmapped> {
    let unreadable = |m: &str| Unmapped::Unreadable(m.to_owned());
    let id = delivery
        .header("x-github-delivery")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| unreadable("the X-GitHub-Delivery header is missing"))?;
    let kind = delivery
        .header("x-github-event")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| unreadable("the X-GitHub-Event header is missing"))?;
    if let Some(object) = body.as_object() {
        check_binding(kind, object)?;
    }
    Ok(Event {
        source: source.to_owned(),
        id: id.to_owned(),
        kind: kind.to_owned(),
        action: string_at(body, &["/action"]).unwrap_or("").to_owned(),
        subject: subject(body),
        text: text(body).to_owned(),
        attributes: Value::Object(attributes(body)),
    })
}

fn subject(body: &Value) -> String {
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
    match number {
        Some(n) if !repo.is_empty() => format!("{repo}#{n}"),
        _ => repo.to_owned(),
    }
}

fn text(body: &Value) -> &str {
    string_at(
        body,
        &[
            "/comment/body",
            "/review/body",
            "/pull_request/title",
            "/issue/title",
            "/head_commit/message",
        ],
    )
    .unwrap_or("")
}

/// The attributes are a fixed, small selection: a webhook body is far larger than the 8 KiB an
/// event may carry, and a filter needs only these.
fn attributes(body: &Value) -> Map<String, Value> {
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
    attributes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn delivery(kind: &str, body: &Value) -> (Delivery, Value) {
        let d = Delivery {
            headers: vec![
                ("x-github-event".into(), kind.into()),
                ("x-github-delivery".into(), "d1".into()),
            ],
            body: body.to_string().into_bytes(),
        };
        (d, body.clone())
    }

    #[test]
    fn a_delivery_maps_type_subject_and_attributes() {
        let (d, body) = delivery(
            "check_suite",
            &json!({"action": "completed", "repository": {"full_name": "octo/demo"},
                    "check_suite": {"conclusion": "failure", "pull_requests": [{"number": 12}]},
                    "sender": {"login": "ada"}}),
        );
        let e = map("gh", &d, &body).unwrap();
        assert_eq!(e.id, "d1");
        assert_eq!(e.kind, "check_suite");
        assert_eq!(e.action, "completed");
        assert_eq!(e.subject, "octo/demo#12");
        assert_eq!(e.attributes["conclusion"], "failure");
        assert_eq!(e.attributes["sender"], "ada");
    }

    #[test]
    fn a_header_type_the_body_does_not_hold_is_refused() {
        let pr = json!({"action": "opened", "number": 1, "pull_request": {"number": 1},
                        "repository": {"full_name": "o/r"}});
        let review = json!({"action": "submitted", "review": {"state": "approved"},
                            "pull_request": {"number": 1}});
        let comment = json!({"action": "created", "comment": {"body": "hi"},
                             "issue": {"number": 1}});
        let cases = [
            ("check_suite", &pr, "pull_request"),
            ("push", &pr, "pull_request"),
            ("pull_request", &review, "pull_request_review"),
            ("issues", &comment, "issue_comment"),
            ("some_new_type", &pr, "pull_request"),
        ];
        for (kind, body, held) in cases {
            let (d, body) = delivery(kind, body);
            match map("gh", &d, &body) {
                Err(Unmapped::Unbound(reason)) => {
                    assert!(reason.contains(&format!("`{held}`")), "{kind}: {reason}");
                }
                other => panic!("{kind} was not refused: {other:?}"),
            }
        }
        for (kind, body) in [
            ("pull_request", &pr),
            ("pull_request_review", &review),
            ("issue_comment", &comment),
        ] {
            let (d, body) = delivery(kind, body);
            assert_eq!(map("gh", &d, &body).unwrap().kind, kind);
        }
    }

    #[test]
    fn a_body_of_no_known_shape_keeps_its_header_type() {
        let (d, body) = delivery("check_suite", &json!({"action": "completed"}));
        assert_eq!(map("gh", &d, &body).unwrap().kind, "check_suite");
    }

    #[test]
    fn every_binding_holds_a_body_of_its_own_shape_and_no_other_type_claims_it() {
        for b in BINDINGS {
            let body: Map<String, Value> =
                b.has.iter().map(|k| ((*k).to_owned(), json!({}))).collect();
            assert!(b.holds(&body), "{}", b.kind);
            assert_eq!(check_binding(b.kind, &body), Ok(()), "{}", b.kind);
            let first = BINDINGS.iter().find(|o| o.holds(&body)).unwrap();
            assert_eq!(
                first.kind, b.kind,
                "{} is shadowed by {}",
                b.kind, first.kind
            );
        }
    }
}
