// Included (`include!`) by the benches that run the expressions of
// `corpus/events/expressions.json`: `eval.rs`, `estimate.rs` and `side_by_side/bench.rs`.

/// The `(name, expr)` pairs of `expressions.json`'s text, in order.
fn expressions_of(json_text: &str) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(json_text).expect("JSON");
    json["expressions"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().expect("name").to_owned(),
                e["expr"].as_str().expect("expr").to_owned(),
            )
        })
        .collect()
}
