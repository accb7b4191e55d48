//! The longest strings the runtime lets into its stores' keys.
//!
//! A `PostgreSQL` B-tree refuses an entry of more than 2,704 bytes (a third of an 8 KiB page,
//! less its bookkeeping), and it fails the whole statement that writes one: in a group of 512
//! deliveries sharing one statement, one event with a long identity failed the rest, and
//! the sweeper, which routes the oldest unrouted event first, failed on it at every pass (the
//! attack on large groups, decision 0010, "Tenth pass"). `SQLite` has no such limit, and
//! the stores must behave alike, so every string that becomes part of a key is bounded here,
//! before any store sees it, with a clear refusal.
//!
//! The widest key is the ledger's: a job id, an event's source and id. A trigger's job id is
//! `rt.ROUTINE.TRIGGER.EVENT_ID` (at most 3 + 128 + 1 + 128 + 1 + 1,024 = 1,285 bytes), the
//! source a configured name (128) and the id a header field (1,024): 2,437 bytes, with up to 4
//! bytes of length and 3 of padding per value and 8 of entry header, 2,466. Every other key is
//! narrower (a job id given by a caller is at most 512 bytes; a wait's name and subject, 512
//! and 1,024). `tests/keys.rs` refuses one byte past each limit and takes each at it;
//! `tests/attack_large_groups_pg.rs` routes a ledger key of a 1,285-byte job id and a 1,024-byte
//! event id, and waits on 1,024-byte subjects, in large groups on `PostgreSQL`.
//!
//! Length is not the only difference between the stores: `PostgreSQL` cannot keep a NUL
//! character (U+0000) in a text column at all and fails the statement, which the API answered
//! as `503 store-unavailable` (an answer that says "try again" to a request that never
//! succeeds), while `SQLite` and memory kept it. So every key and every text field a caller
//! gives (a job id, a wait's name, source, types, subject and filter, an output's or a step's
//! name) is refused here with a NUL in it, before any store sees it: `invalid-key` for a key,
//! `invalid-text` for a filter. An event's fields are refused likewise when a delivery is read
//! (`source::map_delivery`). Rust strings are UTF-8, so NUL is the one character `PostgreSQL`
//! refuses; `tests/stores_agree_on_refusals.rs` runs every refusal on all three stores.

use crate::error::RuntimeError;
use crate::model::Event;

/// The longest header field an event may have (`id`, `source`, `type`, `action`, `subject`),
/// and so the longest subject a wait may have, in bytes.
pub const MAX_FIELD: usize = 1024;

/// The largest `header_field` bound a source may declare: [`MAX_FIELD`], as bounds count it.
pub const MAX_HEADER_FIELD: u64 = MAX_FIELD as u64;

/// The longest name in a configuration (a source, routine, trigger, flow or step), in bytes.
pub const MAX_NAME: usize = 128;

/// The longest job id a caller may give, in bytes.
pub const MAX_JOB_ID: usize = 512;

/// The longest wait name, in bytes.
pub const MAX_WAIT_NAME: usize = 512;

/// Why `value`, called `what`, is too long for a key of at most `max` bytes; `None` when it
/// fits.
pub fn too_long(what: &str, value: &str, max: usize) -> Option<String> {
    (value.len() > max).then(|| {
        format!(
            "{what} is {} bytes long; the runtime keeps at most {max}",
            value.len()
        )
    })
}

/// [`too_long`] and [`storable`] as the error a caller gets: `key-too-long` or `invalid-key`,
/// the arguments refused.
pub fn check(what: &str, value: &str, max: usize) -> Result<(), RuntimeError> {
    storable(what, value)?;
    match too_long(what, value, max) {
        Some(why) => Err(RuntimeError::invalid("key-too-long", why)),
        None => Ok(()),
    }
}

/// Why `value`, called `what`, cannot be kept by every store: it holds a NUL character, which
/// `PostgreSQL` refuses in text; `None` when every store keeps it.
pub fn unstorable(what: &str, value: &str) -> Option<String> {
    value.contains('\0').then(|| {
        format!("{what} holds a NUL character (U+0000), which the runtime's stores do not keep")
    })
}

/// [`unstorable`] as the error a caller gets for a key it names (a job id, a wait's name):
/// `invalid-key`, the arguments refused. A lookup checks this too, so that a key no store can
/// hold is a 400 on every store rather than a 404 on one and a 503 on another.
pub fn storable(what: &str, value: &str) -> Result<(), RuntimeError> {
    match unstorable(what, value) {
        Some(why) => Err(RuntimeError::invalid("invalid-key", why)),
        None => Ok(()),
    }
}

/// [`unstorable`] for a text field that is no key (a wait's filter): `invalid-text`.
pub fn storable_text(what: &str, value: &str) -> Result<(), RuntimeError> {
    match unstorable(what, value) {
        Some(why) => Err(RuntimeError::invalid("invalid-text", why)),
        None => Ok(()),
    }
}

/// Why an event's identity cannot be kept: its `source` longer than a configured name may be,
/// or its `id` longer than any source's `header_field` bound may be. A delivery checks its
/// source's own bounds before this; this guards the library's callers.
pub fn event_refusal(event: &Event) -> Option<String> {
    too_long("the event's `source`", &event.source, MAX_NAME)
        .or_else(|| too_long("the event's `id`", &event.id, MAX_FIELD))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_at_its_limit_fits_and_one_byte_more_does_not() {
        assert_eq!(too_long("x", &"a".repeat(MAX_NAME), MAX_NAME), None);
        let refused = too_long("the name", &"a".repeat(MAX_NAME + 1), MAX_NAME).unwrap();
        assert_eq!(
            refused,
            "the name is 129 bytes long; the runtime keeps at most 128"
        );
        // Bytes, not characters: 43 three-byte characters are 129 bytes.
        assert!(too_long("x", &"€".repeat(43), MAX_NAME).is_some());
    }

    #[test]
    fn a_nul_character_is_refused_in_a_key_and_in_a_text() {
        assert_eq!(unstorable("x", "a\u{1}b\u{7f}€"), None);
        let refused = check("the job id", "a\0b", MAX_JOB_ID).unwrap_err();
        assert_eq!(refused.code(), "invalid-key");
        assert!(
            refused.to_string().contains("the job id holds a NUL"),
            "{refused}"
        );
        let refused = storable_text("the filter", "'\0' == ''").unwrap_err();
        assert_eq!(refused.code(), "invalid-text");
    }

    #[test]
    fn an_event_identity_is_bounded_in_source_and_id() {
        let mut event = Event {
            source: "s".repeat(MAX_NAME),
            id: "i".repeat(MAX_FIELD),
            kind: "t".into(),
            action: String::new(),
            subject: String::new(),
            text: String::new(),
            attributes: serde_json::json!({}),
        };
        assert_eq!(event_refusal(&event), None);
        event.id.push('i');
        assert!(
            event_refusal(&event)
                .unwrap()
                .contains("`id` is 1025 bytes")
        );
        event.id.pop();
        event.source.push('s');
        assert!(
            event_refusal(&event)
                .unwrap()
                .contains("`source` is 129 bytes")
        );
    }
}
