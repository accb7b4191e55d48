//! A tracing layer that keeps the spans it saw, with their fields, for tests and conformance.
//!
//! The span attributes of W9 are asserted through this layer without an OpenTelemetry
//! dependency: it records every field of every closed span, exactly as any other subscriber
//! (an OpenTelemetry layer among them) receives them.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, subscriber::Interest};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// A closed span: its name and the fields that were set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedSpan {
    /// The span's name.
    pub name: String,
    /// The fields with a value; declared fields never set are absent.
    pub fields: Map<String, Value>,
}

/// The layer; clones share the record.
#[derive(Debug, Clone, Default)]
pub struct SpanRecorder {
    closed: Arc<Mutex<Vec<RecordedSpan>>>,
}

impl SpanRecorder {
    /// The spans closed so far, oldest first.
    pub fn spans(&self) -> Vec<RecordedSpan> {
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets the spans recorded so far.
    pub fn clear(&self) {
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// The fields of an open span, kept in its registry extensions.
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), format!("{value:?}").into());
    }
}

impl<S> Layer<S> for SpanRecorder
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, _meta: &'static tracing::Metadata<'static>) -> Interest {
        Interest::always()
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields(Map::new());
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let fields = span
            .extensions_mut()
            .remove::<Fields>()
            .map(|f| f.0)
            .unwrap_or_default();
        self.closed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(RecordedSpan {
                name: span.name().to_owned(),
                fields,
            });
    }
}
