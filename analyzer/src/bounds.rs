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
