//! The size bounds of the events a source may deliver. The static analysis is only sound
//! because the runtime refuses events that exceed them.

/// Largest event a source may deliver, in bytes (KiB = 1024 bytes).
///
/// `text` is the UTF-8 length of `event.text`; `attributes` is the length of `event.attributes`
/// written as compact JSON (no whitespace, the shortest escapes); the header fields are the UTF-8
/// lengths of their strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventBounds {
    /// `event.text`, bytes. Default 16 KiB.
    pub text: u64,
    /// `event.attributes` as compact JSON, bytes. Default 8 KiB.
    pub attributes: u64,
    /// Each of `event.id`, `event.source`, `event.type`, `event.action`, `event.subject`, bytes.
    /// Default 256.
    pub header_field: u64,
}

impl EventBounds {
    /// 16 KiB of text, 8 KiB of attributes, 256 bytes per header field.
    pub const DEFAULT: EventBounds = EventBounds {
        text: 16 * 1024,
        attributes: 8 * 1024,
        header_field: 256,
    };
}

impl Default for EventBounds {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One bound a source declares: what `ozcheck.toml` sets under `[sources.NAME]` and
/// `ozcheck filter` takes as `--max-…`. The estimate is monotone in each (docs/cost-model.md
/// §5.1), which is what lets a refused filter be told the bound that would pass it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// `event.text`, bytes.
    Text,
    /// `event.attributes` as compact JSON, bytes.
    Attributes,
    /// Each header field (`id`, `source`, `type`, `action`, `subject`), bytes.
    HeaderField,
}

impl Bound {
    /// Every bound, in the order explanations list them.
    pub const ALL: [Bound; 3] = [Bound::Text, Bound::Attributes, Bound::HeaderField];

    /// The key of the bound under `[sources.NAME]` in `ozcheck.toml`.
    pub fn key(self) -> &'static str {
        match self {
            Bound::Text => "text",
            Bound::Attributes => "attributes",
            Bound::HeaderField => "header_field",
        }
    }

    /// What the bound limits, in words.
    pub fn subject(self) -> &'static str {
        match self {
            Bound::Text => "event.text",
            Bound::Attributes => "event.attributes",
            Bound::HeaderField => "each header field",
        }
    }

    /// The least value the bound can take: no text, no header, and `{}` for the attributes
    /// (an event's attributes are always an object).
    pub fn least(self) -> u64 {
        match self {
            Bound::Text | Bound::HeaderField => 0,
            Bound::Attributes => 2,
        }
    }
}

impl EventBounds {
    /// The value of one bound.
    pub fn get(&self, bound: Bound) -> u64 {
        match bound {
            Bound::Text => self.text,
            Bound::Attributes => self.attributes,
            Bound::HeaderField => self.header_field,
        }
    }

    /// These bounds with one of them set to `value`.
    #[must_use]
    pub fn with(mut self, bound: Bound, value: u64) -> Self {
        match bound {
            Bound::Text => self.text = value,
            Bound::Attributes => self.attributes = value,
            Bound::HeaderField => self.header_field = value,
        }
        self
    }
}
