//! Any bytes as a plugin file, under every kind of path: the lint must end in findings whose
//! spans lie inside the file, and render in every format, never a panic, hang or stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_lint::render::{Format, render};
use ozcheck_lint::{Config, Input, PluginContext, lint};

fuzz_target!(|data: &[u8]| {
    for path in [
        "agents/a.yaml",
        "flows/f.yaml",
        "routines/r.yaml",
        "plugin.yaml",
    ] {
        let input = Input::from_bytes(path, data, true);
        let context = PluginContext {
            files: vec![Input::from_bytes("agents/b.yaml", data, false)],
            agents_complete: true,
            ..PluginContext::default()
        };
        let reports = lint(&[input], &context, &Config::default());
        for report in &reports {
            let len = report.source.text.len();
            for f in &report.findings {
                assert!(f.span.start <= f.span.end && f.span.end <= len, "{f:?}");
            }
        }
        for format in [Format::Full, Format::Json, Format::Sarif, Format::Github] {
            let _ = render(&reports, format, false);
        }
    }
});
