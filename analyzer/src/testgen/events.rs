//! Events within bounds for property tests: random ones, and adversarial ones that pour the
//! whole attributes budget into one to four keys of the shapes that make filters expensive.

use serde_json::{Map, Value as Json, json};

use super::{KEYS, Rng};
use crate::EventBounds;

/// The compact JSON size of a value.
fn json_len(value: &Json) -> u64 {
    serde_json::to_string(value).unwrap().len() as u64
}

fn small_string(rng: &mut Rng, max_chars: u64) -> String {
    let n = rng.below(max_chars + 1);
    (0..n)
        .map(|_| ['a', 'b', '0', 'x', 'ñ'][rng.below(5) as usize])
        .collect()
}

/// One attribute value of a random shape, at most about `budget` bytes of JSON.
fn attribute_value(rng: &mut Rng, budget: u64, fill: bool) -> Json {
    let target = if fill { budget } else { rng.below(budget + 1) };
    match rng.below(10) {
        0 => Json::String(small_string(rng, target.saturating_sub(2))),
        1 => {
            // The densest list: one-digit ints, the worst case for counting elements.
            let n = target.saturating_sub(1) / 2;
            Json::Array((0..n).map(|i| json!(i % 10)).collect())
        }
        2 => {
            let mut items = Vec::new();
            let mut used = 2;
            while used < target {
                let s = small_string(rng, if fill { 0 } else { 3 });
                used += s.len() as u64 + 3;
                items.push(Json::String(s));
            }
            Json::Array(items)
        }
        3 => {
            let mut map = Map::new();
            for i in 0..target / 8 {
                map.insert(format!("k{i}"), Json::String(small_string(rng, 2)));
            }
            Json::Object(map)
        }
        4 => Json::Bool(rng.chance(50)),
        5 => {
            // A list indexed by its own elements: one large string first, then indexes of it.
            let big = target / 2;
            let mut items = vec![Json::String("x".repeat(big as usize))];
            let n = target.saturating_sub(big + 4) / 2;
            items.extend((0..n).map(|_| json!(0)));
            Json::Array(items)
        }
        6 => {
            // A nested object under the keys filters read, each holding a dense list.
            let share = target / KEYS.len() as u64;
            Json::Object(
                KEYS.iter()
                    .map(|k| {
                        (
                            (*k).to_owned(),
                            Json::Array(vec![json!(0); (share / 2) as usize]),
                        )
                    })
                    .collect(),
            )
        }
        7 => {
            // Small objects under the keys filters read (what a loop's body selects from its
            // element), strings and lists among them, and sometimes a number last, on which
            // a body that needs a field fails after every other element ran.
            let mut items = Vec::new();
            let mut used = 2;
            while used + 8 < target {
                let item = match rng.below(5) {
                    0 => json!(small_string(rng, 3)),
                    1 => json!([0, 0]),
                    _ => {
                        let key = KEYS[rng.below(KEYS.len() as u64) as usize];
                        let value = match rng.below(3) {
                            0 => json!(0),
                            1 => json!(small_string(rng, 2)),
                            _ => json!({ KEYS[rng.below(KEYS.len() as u64) as usize]: "" }),
                        };
                        json!({ key: value })
                    }
                };
                used += json_len(&item) + 1;
                items.push(item);
            }
            if rng.chance(50) {
                items.push(json!(0));
            }
            Json::Array(items)
        }
        8 => {
            // Numbers and strings or lists in one list, in a random share (cost-model version
            // 10 prices the two kinds apart): numbers first, then one long string or list, or
            // the two kinds alternating.
            let share = target * rng.below(101) / 100;
            let number = match rng.below(3) {
                0 => json!(0),
                1 => json!(1.5),
                _ => json!(1e308),
            };
            let mut items = vec![number.clone(); (share / (json_len(&number) + 1)) as usize];
            let rest = target.saturating_sub(share + 4);
            match rng.below(3) {
                0 => items.push(json!("x".repeat(rest as usize))),
                1 => items.push(Json::Array(vec![json!(0); (rest / 2) as usize])),
                _ => {
                    let short = match rng.below(3) {
                        0 => json!(""),
                        1 => json!("ab"),
                        _ => json!([]),
                    };
                    let n = rest / (json_len(&short) + 1);
                    let mut mixed = Vec::new();
                    for i in 0..items.len().max(n as usize) {
                        if i < items.len() {
                            mixed.push(number.clone());
                        }
                        if (i as u64) < n {
                            mixed.push(short.clone());
                        }
                    }
                    items = mixed;
                }
            }
            Json::Array(items)
        }
        _ => json!(rng.below(1000)),
    }
}

/// Random attributes within `bound` bytes of compact JSON: either a few random values or,
/// adversarially, the whole budget split between one to three keys.
fn attributes(rng: &mut Rng, bound: u64) -> Json {
    let fill = rng.chance(60);
    // Most keys are present most of the time, so filters get past their first lookup.
    let present: Vec<&str> = KEYS.iter().copied().filter(|_| rng.chance(75)).collect();
    let mut map = Map::new();
    for key in &present {
        let share = bound / present.len() as u64;
        map.insert((*key).to_owned(), attribute_value(rng, share, fill));
    }
    let mut value = Json::Object(map);
    // Trim until it fits: drop list elements, shorten strings, finally drop keys.
    loop {
        let size = json_len(&value);
        if size <= bound {
            break;
        }
        let excess = (size - bound) as usize;
        let Json::Object(map) = &mut value else {
            unreachable!()
        };
        let key = map.keys().next().cloned().unwrap();
        match map.get_mut(&key).unwrap() {
            Json::Array(items) if !items.is_empty() => {
                let drop = excess.div_ceil(2).clamp(1, items.len());
                items.truncate(items.len() - drop);
            }
            Json::String(s) if !s.is_empty() => {
                s.pop();
            }
            Json::Object(m) if !m.is_empty() => {
                let first = m.keys().next().cloned().unwrap();
                m.remove(&first);
            }
            _ => {
                map.remove(&key);
            }
        }
    }
    value
}

/// A random event within `bounds`: text of random or full length, attributes random or filling
/// the budget in one to four keys of adversarial shapes.
pub fn event_json(rng: &mut Rng, bounds: &EventBounds) -> Json {
    let text_len = if rng.chance(50) {
        bounds.text
    } else {
        rng.below(bounds.text + 1)
    };
    let mut text = String::new();
    while (text.len() as u64) < text_len {
        let c = ['a', 'b', 'x', '0', ' ', 'ñ', 'L'][rng.below(7) as usize];
        if text.len() + c.len_utf8() > text_len as usize {
            break;
        }
        text.push(c);
    }
    // Headers sometimes name an attribute, so computed keys find a member.
    let header = |rng: &mut Rng| {
        if rng.chance(30) {
            rng.pick(KEYS).to_owned()
        } else {
            small_string(rng, bounds.header_field / 2)
        }
    };
    json!({
        "id": header(rng),
        "source": "gh/acme",
        "type": header(rng),
        "action": header(rng),
        "subject": header(rng),
        "text": text,
        "attributes": attributes(rng, bounds.attributes),
    })
}
