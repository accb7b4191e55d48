//! A delivery's way in (E11, E16): the source, the signature, the source's function, the
//! bounds, then the event into the edge. Every outcome is an HTTP status plus audit records;
//! refusals are audited once per kind, source and minute with the previous minute's count, the
//! rest go to the log.

use serde_json::json;

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
        let stored = self.ingest(&event).await?;
        Ok(Delivered {
            status: if stored.is_some() { 202 } else { 200 },
            duplicate: stored.is_none(),
            event: Some(event),
            error: None,
        })
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
