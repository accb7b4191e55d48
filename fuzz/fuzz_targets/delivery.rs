//! Any delivery (headers and body from the fuzzer's bytes) goes through the signature check and
//! both source functions without a panic; whatever event comes out stays within the checks the
//! edge relies on, and its rendering can never close its own `<event_data>` tag.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_runtime::config::{SourceConfig, SourceKind};
use ozcheck_runtime::filter::check_bounds;
use ozcheck_runtime::render::event_answer;
use ozcheck_runtime::source::{Delivery, SIGNATURE_HEADER, map_delivery, sign, verify};

fuzz_target!(|data: &[u8]| {
    // Bytes before the first NUL are header lines (`name: value`), the rest is the body.
    let split = data.iter().position(|b| *b == 0).unwrap_or(0);
    let (head, body) = data.split_at(split);
    let body = body.strip_prefix(&[0]).unwrap_or(body);
    let headers: Vec<(String, String)> = String::from_utf8_lossy(head)
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    let delivery = Delivery {
        headers,
        body: body.to_vec(),
    };
    // A forged or garbled signature header never verifies; the right one always does.
    let _ = verify("k", body, delivery.header(SIGNATURE_HEADER));
    assert!(verify("k", body, Some(&sign("k", body))));
    for kind in [SourceKind::Github, SourceKind::Json] {
        let source = SourceConfig {
            secret: Some("k".into()),
            ..SourceConfig::new("s", kind)
        };
        if let Ok(event) = map_delivery(&source, &delivery) {
            assert!(!event.id.is_empty() && !event.kind.is_empty());
            assert!(event.attributes.is_object());
            let _ = check_bounds(&event, &source.bounds);
            let answer = event_answer(&event);
            assert_eq!(answer.matches("</event_data>").count(), 1);
            // Nothing the sender wrote stands outside the label unescaped: the first line is
            // one line, and only the tag and the closing tag hold a `<`.
            assert_eq!(answer.matches('<').count(), 2);
        }
    }
});
