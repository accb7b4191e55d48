//! A delivery's way in (E11, E16): the source, the signature, the source's function, the
//! bounds, then the event into the edge. Every outcome is an HTTP status plus audit records;
//! refusals are audited once per kind, source and minute with the previous minute's count, the
//! rest go to the log.
//!
//! **A delivery is one event however often it is sent** (E3, E11): the edge remembers each
//! delivery's identity (what the sender signed: [`crate::source::identity`]) with its first
//! arrival for [`crate::edge::DELIVERIES_KEPT`], past its body's retention, so the same signed
//! bytes under another delivery id, or a redelivery days later, are `200 duplicate`, audited
//! as `event.duplicate`, and route nothing.

use std::time::Duration;

use serde_json::json;

use crate::clock::{DAY, Timestamp};

use crate::edge::Runtime;
use crate::filter::check_bounds;
use crate::model::Event;
use crate::source::{Delivery, SIGNATURE_HEADER, Unmapped, map_delivery, verify};
use crate::store::{Store, StoreError};

/// What became of a delivery.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivered {
    /// The HTTP status for the sender.
    pub status: u16,
    /// The event it held, once read.
    pub event: Option<Event>,
    /// Whether the event was known already (a redelivery).
    pub duplicate: bool,
    /// Why it was refused or could not be read.
    pub error: Option<String>,
}

impl Delivered {
    fn status(status: u16, error: impl Into<String>) -> Self {
        Self {
            status,
            event: None,
            duplicate: false,
            error: Some(error.into()),
        }
    }
}

/// How long before its body's retention ends a remembered delivery already counts as past it:
/// the event may be purged while its redelivery is being taken, and one taken as new then would
/// reach waits of jobs started after it first arrived. (A router that died on it leaves it to
/// the sweeper, which routes it within seconds.)
const RETENTION_MARGIN: Duration = Duration::from_secs(60);

/// The answer to a duplicate delivery.
fn duplicate(event: Event) -> Delivered {
    Delivered {
        status: 200,
        event: Some(event),
        duplicate: true,
        error: None,
    }
}

impl<S: Store> Runtime<S> {
    /// Takes a delivery to `source`.
    pub async fn deliver(
        &self,
        source: &str,
        delivery: &Delivery,
    ) -> Result<Delivered, StoreError> {
        let Some(config) = self.config().source(source).cloned() else {
            return Ok(Delivered::status(
                404,
                format!("no event source `{source}`"),
            ));
        };
        if let Some(secret) = &config.secret {
            if !verify(secret, &delivery.body, delivery.header(SIGNATURE_HEADER)) {
                let reason = if delivery.header(SIGNATURE_HEADER).is_some() {
                    "wrong signature"
                } else {
                    "missing signature"
                };
                self.refuse(source, "signature", reason).await?;
                return Ok(Delivered::status(401, reason));
            }
        }
        let delivery_id = delivery
            .header("x-github-delivery")
            .or_else(|| delivery.header("webhook-id"))
            .unwrap_or("");
        self.audit(
            "event.delivery",
            json!({"source": source, "plugin": config.plugin.as_deref().unwrap_or(source),
                   "id": delivery_id, "size": delivery.body.len()}),
        )
        .await?;
        let event = match map_delivery(&config, delivery) {
            Ok(event) => event,
            Err(Unmapped::Unreadable(reason)) => {
                // Nothing about this delivery is recorded as done, so sending it again runs the
                // source's function again.
                self.audit("event.failed", json!({"source": source, "reason": reason}))
                    .await?;
                return Ok(Delivered::status(422, reason));
            }
            Err(Unmapped::Unbound(reason)) => {
                // An unsigned header contradicts the signed body (E11): the event it would give
                // is not the one the sender signed, so nothing is routed.
                self.refuse(source, "binding", &reason).await?;
                return Ok(Delivered::status(400, reason));
            }
        };
        // A source's bounds are at most what the runtime keeps (`keys`) when its configuration
        // was checked; the second test holds for one that was not.
        let refused = check_bounds(&event, &config.bounds)
            .err()
            .or_else(|| crate::keys::event_refusal(&event));
        if let Some(reason) = refused {
            self.refuse(source, "bounds", &reason).await?;
            return Ok(Delivered::status(413, reason));
        }
        let mut event = event;
        let identity = crate::source::identity(&config, delivery, &event);
        let now = self.now();
        let first = self
            .store()
            .remember_delivery(source, &identity, &event.id, now)
            .await?;
        let mut replay = None;
        if let Some((first_id, first_at)) = first {
            if first_at < now.minus(DAY).plus(RETENTION_MARGIN) {
                // Its body is purged (or about to be): the event it was is older than any
                // look-back, and it must not reach a job started after it first arrived (E3).
                self.audit_duplicate(source, &event.id, &first_id, first_at, "past retention")
                    .await?;
                event.id = first_id;
                return Ok(duplicate(event));
            }
            if first_id != event.id {
                replay = Some((std::mem::replace(&mut event.id, first_id), first_at));
            }
        }
        let stored = self.ingest(&event).await?;
        if let (None, Some((delivery_id, first_at))) = (&stored, replay) {
            self.audit_duplicate(source, &delivery_id, &event.id, first_at, "replayed")
                .await?;
        }
        Ok(Delivered {
            status: if stored.is_some() { 202 } else { 200 },
            duplicate: stored.is_none(),
            event: Some(event),
            error: None,
        })
    }

    /// The `event.duplicate` record of a delivery whose identity was remembered under another
    /// delivery id, or past retention: the sender gets `200`, nothing is routed.
    async fn audit_duplicate(
        &self,
        source: &str,
        delivery_id: &str,
        event_id: &str,
        first_at: Timestamp,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.audit(
            "event.duplicate",
            json!({"source": source, "id": delivery_id, "event": event_id,
                   "first_at": first_at.0, "reason": reason}),
        )
        .await
    }

    async fn refuse(&self, source: &str, kind: &str, reason: &str) -> Result<(), StoreError> {
        let minute = self.now().minute();
        let (count, previous) = self.store().count_refusal(source, kind, minute).await?;
        if count == 1 {
            self.audit(
                "event.refused",
                json!({"source": source, "kind": kind, "reason": reason,
                       "previous_minute": previous}),
            )
            .await?;
        } else {
            self.log(format!(
                "event.refused {source} {kind}: {reason} ({count} this minute)"
            ));
        }
        Ok(())
    }
}
