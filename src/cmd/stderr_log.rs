//! The runtime's `tracing` events written to stderr, one line each (`LEVEL target: message`):
//! a minimal layer, so the default build needs no formatting crate.

use std::fmt::Write as _;
use std::io::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

struct StderrLines;

#[derive(Default)]
struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for StderrLines {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() > Level::INFO {
            return;
        }
        let mut line = Line::default();
        event.record(&mut line);
        let meta = event.metadata();
        let _ = writeln!(
            std::io::stderr().lock(),
            "{} {}: {}",
            meta.level(),
            meta.target(),
            line.0
        );
    }
}

/// Installs the stderr writer as the process's `tracing` subscriber (once; later calls and a
/// subscriber set elsewhere are left as they are).
pub fn install() {
    let subscriber = tracing_subscriber::registry().with(StderrLines);
    let _ = tracing::subscriber::set_global_default(subscriber);
}
