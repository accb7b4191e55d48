//! Spot checks of the estimator's soundness against the metered evaluator: for filters over
//! adversarial events that fill their bounds (the most elements, the longest strings, the whole
//! budget in one part or split between two), the metered cost never exceeds the estimate's max.
//! Small bounds keep the quadratic cases fast; the estimator sees the same bounds.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::cost::CostModel;
use ozcheck_analyzer::eval::{Event, Limits, ManualClock, Program};
use ozcheck_analyzer::{EventBounds, Options, check_filter, compile};
use serde_json::{Value, json};

const BOUNDS: EventBounds = EventBounds {
    text: 1024,
    attributes: 512,
    header_field: 64,
};

/// The largest `n` for which `make(n)` fits the attribute bound as compact JSON.
fn fill(make: impl Fn(usize) -> Value) -> Value {
    let fits =
        |n: usize| serde_json::to_string(&make(n)).unwrap().len() as u64 <= BOUNDS.attributes;
    let mut n = 0;
    while fits(n + 1) {
        n += 1;
    }
    make(n)
}

/// Distinct short keys: `a`, `b`, …, `z`, `ba`, ….
fn key(mut i: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (i % 26) as u8);
        i /= 26;
        if i == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}

fn list(n: usize, item: &Value) -> Value {
    Value::Array(vec![item.clone(); n])
}

/// Adversarial attribute objects.
fn attribute_sets() -> Vec<Value> {
    let mut sets = Vec::new();
    for item in [
        json!(0),
        json!(""),
        json!("a"),
        json!([]),
        json!("xxxxxxxxxx"),
        json!({}),
    ] {
        // Everything in `a`; split between `a` and `b`; and the same list under every name
        // the filters use.
        sets.push(fill(|n| json!({ "a": list(n, &item) })));
        sets.push(fill(
            |n| json!({ "a": list(n, &item), "b": list(n, &item) }),
        ));
        sets.push(fill(
            |n| json!({ "a": list(n, &item), "b": list(n / 3, &item) }),
        ));
        sets.push(fill(|n| json!({ "labels": list(n, &item) })));
        sets.push(fill(
            |n| json!({ "reviewers": list(n, &item), "owners": list(n, &item) }),
        ));
    }
    // One long string everywhere it matters.
    sets.push(fill(
        |n| json!({ "a": ["y".repeat(n)], "b": ["y".repeat(n)] }),
    ));
    sets.push(fill(|n| json!({ "labels": ["z".repeat(n)] })));
    sets.push(fill(|n| json!({ "a": "q".repeat(n) })));
    // Many entries with empty values, or values that contain the needle.
    for value in [json!(""), json!("x"), json!([]), json!(0)] {
        sets.push(fill(|n| {
            Value::Object((0..n).map(|i| (key(i), value.clone())).collect())
        }));
    }
    // Version 5's shapes: a list beside the value its elements are compared with (equal
    // elements, so every comparison walks to the end), the budget in one long pair, members
    // concatenated, lists iterated beside the text.
    for len in [1, 8, 40] {
        let s = "y".repeat(len);
        sets.push(fill(
            |n| json!({ "reviewers": list(n, &json!(s)), "author": s }),
        ));
        sets.push(fill(
            |n| json!({ "labels": list(n, &json!("a".repeat(len))) }),
        ));
        sets.push(fill(
            |n| json!({ "l": list(n, &json!(s)), "m": list(n, &json!(s)) }),
        ));
    }
    sets.push(fill(
        |n| json!({ "reviewers": ["y".repeat(n)], "author": "y".repeat(n) }),
    ));
    sets.push(fill(|n| json!({ "keyword": "a".repeat(n) })));
    sets.push(json!({ "keyword": "LGTM" }));
    sets.push(fill(|n| json!({ "l": ["x".repeat(n)] })));
    sets.push(fill(
        |n| json!({ "p0": "a".repeat(n), "p1": "a", "p2": "a", "p3": "a", "p4": "a" }),
    ));
    sets.push(fill(|n| {
        let s = "a".repeat(n);
        json!({ "p0": s, "p1": s, "p2": s, "p3": s, "p4": s })
    }));
    // Version 6's shapes: the key and the value of one entry share its bytes (one entry split
    // at every ratio, values that repeat their key, many tiny entries, the entries at the top),
    // and `%s` of numbers whose text is longest for their bytes.
    for key_share in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let split = |n: usize| {
            let k = ((n as f64) * key_share) as usize;
            ("k".repeat(k.max(1)), "k".repeat(n - k.min(n)))
        };
        sets.push(fill(|n| {
            let (k, v) = split(n);
            json!({ "m": { k: v } })
        }));
        sets.push(fill(|n| {
            let (k, v) = split(n);
            Value::Object([(k, json!(v))].into_iter().collect())
        }));
    }
    for len in [1, 3, 12] {
        sets.push(fill(|n| {
            let entries = (0..n).map(|i| {
                let k = format!("{}{}", key(i), "k".repeat(len));
                (k.clone(), json!(k.repeat(2)))
            });
            json!({ "m": Value::Object(entries.collect()) })
        }));
        sets.push(fill(|n| {
            Value::Object((0..n).map(|i| (key(i), json!("k".repeat(len)))).collect())
        }));
    }
    for number in [
        json!(1e308),
        json!(5e-324),
        json!(-2.225_073_858_507_201_4e-308),
    ] {
        sets.push(fill(
            |n| json!({ "l": list(n, &number), "m": list(n, &number) }),
        ));
        sets.push(fill(|n| json!({ "l": list(n, &json!([number])) })));
    }
    sets.push(fill(|n| {
        Value::Object((0..n).map(|i| (key(i), json!(1e308))).collect())
    }));
    // Elements at constant indices: one large, two or three equal halves, the same string
    // twice (so a comparison walks to the end), a nested list first.
    sets.push(fill(|n| json!({ "a": ["y".repeat(n)] })));
    sets.push(fill(|n| json!({ "a": ["y".repeat(n), "y".repeat(n)] })));
    sets.push(fill(
        |n| json!({ "a": ["y".repeat(n), "y".repeat(n), "y".repeat(n)] }),
    ));
    sets.push(fill(|n| json!({ "a": ["y".repeat(n), "y"] })));
    sets.push(fill(|n| json!({ "a": [list(n, &json!(0)), []] })));
    // One long string among the most empty ones (every comparison of `sort` at the longest).
    for long in [1, 64, 160, 230] {
        sets.push(fill(|n| {
            let mut items = vec![json!("y".repeat(long))];
            items.extend(std::iter::repeat_n(json!(""), n));
            json!({ "l": items.clone(), "labels": items })
        }));
    }
    // Nested lists.
    sets.push(fill(|n| json!({ "a": list(n, &json!([1])) })));
    sets.push(fill(|n| json!({ "a": [list(n, &json!(1))] })));
    sets.push(json!({ "a": [1e-300, -1.5e300, 123_456_789], "n": 1e-300 }));
    sets
}

fn texts() -> Vec<String> {
    vec!["a".repeat(1024), "LGTM ".repeat(204)]
}

const FILTERS: &[&str] = &[
    "event.action == 'opened' && !event.attributes.draft",
    "event.text.contains('LGTM')",
    "event.text.matches('a+b')",
    "event.attributes.labels.exists(l, l == 'urgent')",
    "event.attributes.labels.exists(l, event.text.contains(l))",
    "event.attributes.labels.all(l, l.startsWith('area/'))",
    "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))",
    "event.attributes.a.exists(x, event.attributes.a.exists(y, x == y))",
    "event.attributes.a.map(x, x + x).filter(y, y.size() > 3).size() > 0",
    "event.attributes.a.map(x, x + x).map(y, y + y).size() > 0",
    "event.attributes.a.filter(x, x == x).exists(y, y != 'k')",
    "event.attributes.a.map(x, x != 0, [x, x]).size() > 0",
    "event.attributes.a.exists_one(x, x == 0)",
    "event.attributes.a.exists(x, x.exists(y, y == 1))",
    "event.attributes.exists(k, event.attributes[k].contains('x'))",
    "event.attributes.exists(k, k + 'a' == event.attributes[k])",
    "event.attributes.reviewers.exists(r, r in event.attributes.owners)",
    "event.attributes.a == event.attributes.b",
    "event.attributes.a + event.attributes.b == event.attributes.a",
    "event.text + event.text + event.subject != ''",
    "string(event.attributes.n) + string(event.attributes.a[0]) != ''",
    "size(event.text) > 3 ? event.attributes.a.map(x, string(x)).size() > 0 : event.text.endsWith('x')",
    "[event.text, event.id].exists(s, s.contains(event.attributes.a))",
    "event.attributes.a in [event.attributes.b, event.attributes.labels]",
    // Cost-model version 5: a comparison in a loop bounded by the loop's element, linear
    // terms of one budget bounded together, loops over one of several lists or over their
    // concatenation summed per list.
    "event.attributes.reviewers.exists(r, r == event.attributes.author)",
    "event.attributes.reviewers.exists(r, event.attributes.author != r)",
    "event.text.split(' ').exists(w, w == event.attributes.keyword)",
    "event.attributes.labels.exists(l, l < event.text)",
    "event.attributes.p0 + event.attributes.p1 + event.attributes.p2 + event.attributes.p3 + event.attributes.p4 == event.text",
    "(event.action == 'x' ? event.attributes.l : event.text.split('')).exists(c, event.subject.contains(c))",
    "(event.action == 'opened' ? event.attributes.l : event.text.split('')).exists(c, event.subject.contains(c))",
    "event.attributes.?l.orValue(event.text.split('')).exists(c, event.subject.contains(c))",
    "(event.attributes.l + event.text.split('')).exists(c, event.subject.contains(c))",
    "(event.attributes.l + event.attributes.m).map(c, c + 'x').exists(c, event.subject.contains(c))",
    "'%x'.format([event.attributes.a]) != ''",
    "'%X and %x'.format([event.text, event.attributes.labels]) != ''",
    "'%b %o'.format([event.attributes.n, event.attributes.a]) != ''",
    // Cost-model version 6: `%s` of JSON values in a loop at 52 bytes a byte plus 49 (an
    // object's key at its bytes), the key and the value of one entry sharing its bytes.
    "event.attributes.l.exists(k, '%s'.format([k]) == 'x')",
    "event.attributes.exists(k, '%s'.format([k]) == 'x')",
    "event.attributes.l.exists(k, '%s and %s'.format([[k], k]) == 'x')",
    "event.attributes.m.exists(i, v, '%s'.format([i]) == v)",
    "event.attributes.m.exists(k, v, '%d: %s'.format([k, v]) == 'x')",
    "event.attributes.m.exists(k, v, v.contains(k))",
    "event.attributes.exists(k, v, string(v).contains(k))",
    "event.attributes.m.all(k, v, v.startsWith(k))",
    "event.attributes.exists(k, event.attributes[k].contains(k))",
    "event.attributes.exists(k, k.contains(event.attributes[k]) || event.attributes[k].contains(k))",
    "event.attributes.m.exists(k, v, k + v == 'x')",
    "event.attributes.m.exists(k, v, v.exists(w, w.contains(k)))",
    "event.attributes.m.transformList(k, v, v + k).exists(s, s.contains('x'))",
    "event.attributes.m.exists(k, v, string(k).contains(string(v)) || string(v) + string(k) == '')",
    // Cost-model version 6: `sort` of a JSON list, its count and longest element together.
    "event.attributes.l.sort().size() > 0",
    "event.attributes.labels.sort()[0] == event.attributes.labels[0]",
    // Cost-model version 6: elements at different constant indices are disjoint.
    "event.attributes.a[0] + event.attributes.a[1] == 'x'",
    "event.attributes.a[0].contains(event.attributes.a[1])",
    "event.attributes.a[1].contains(event.attributes.a[0]) || event.attributes.a[0] == event.attributes.a[1]",
    "event.attributes.a[0] + event.attributes.a[1] + event.attributes.a[2] == event.attributes.a[0]",
    "event.attributes.a[0].contains(event.attributes.a[0])",
    "event.attributes.a.exists(x, event.attributes.a[0].contains(x))",
    "event.attributes.a[0] == event.attributes.a[1] && event.attributes.a[1].size() == 2",
    // Cost-model version 7: a list indexed by a `lists.range` loop's variable, summed over the
    // list, beside indices the rule leaves alone; the value of a loop over the event.
    "lists.range(3).exists(i, event.attributes.a[i].contains('x'))",
    "lists.range(100).exists(i, event.attributes.a[i] + 'y' == 'x')",
    "lists.range(1000).exists(i, event.text.contains(event.attributes.a[i]))",
    "lists.range(100).exists(i, event.attributes.a[i].contains(event.attributes.a[i + 1]))",
    "lists.range(30).exists(i, lists.range(30).exists(j, event.attributes.a[i] == event.attributes.a[j]))",
    "lists.range(100).map(i, event.attributes.l[i] + 'y').exists(w, w == 'x')",
    "lists.range(100).all(i, v, event.attributes.a[v] != event.attributes.b[i])",
    "lists.range(1000).exists_one(i, event.attributes.labels[i] == event.attributes.a[i % 2])",
    "event.attributes.m.exists(k, v, lists.range(50).exists(i, v[i] == k))",
    "event.exists(k, v, type(v) == string && v.contains(k))",
    "lists.range(size(event.attributes.a)).all(i, event.attributes.a[i].contains('x'))",
    "lists.range(event.attributes.labels.size()).exists(i, event.text.contains(event.attributes.labels[i]))",
    // Version 8: a filter over the parts of a split counts the parts it can keep.
    "event.text.split(' ').filter(w, w.startsWith('L')).map(w, w.substring(1)).exists(t, t == 'x')",
    "event.text.split(' ').filter(w, w.size() > 3).filter(w, w.endsWith('M')).size() > 2",
    "event.text.split('').filter(w, w == 'a' || w == 'L').exists(t, t == 'x')",
    "event.text.split('G').filter(w, w != '').sort().map(w, w + w).exists(t, t == 'x')",
];

#[test]
fn metered_cost_never_exceeds_the_estimate() {
    let clock = Arc::new(ManualClock::new());
    let mut checked = 0;
    for model in [CostModel::FULL, CostModel::CPU_ONLY] {
        let options = Options {
            bounds: BOUNDS,
            model,
            ..Options::default()
        };
        let limits = Limits {
            cost: None,
            deadline: Duration::from_secs(3600),
            clock: clock.clone(),
            model,
            ..Limits::default()
        };
        for source in FILTERS {
            let bound = check_filter(source, &options)
                .cost
                .unwrap_or_else(|| panic!("{source} is estimated"))
                .max;
            let program = Program::from_checked(
                &compile(source, &ozcheck_analyzer::check::Env::filter(), &options).unwrap(),
            )
            .unwrap();
            for attributes in attribute_sets() {
                for text in texts() {
                    let raw = json!({
                        "id": "i".repeat(64), "source": "s", "type": "t", "action": "opened",
                        "subject": "x".repeat(64), "text": text, "attributes": attributes,
                    });
                    let event = Event::from_value(&raw, &BOUNDS).expect("within bounds");
                    let cost = match program.eval_event(&event, &limits) {
                        Ok(done) => done.cost,
                        Err(err) => err.cost(),
                    };
                    assert!(
                        cost <= bound,
                        "{source} ({model:?}): metered {cost} > estimated {bound} on {raw}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 500, "{checked}");
}
