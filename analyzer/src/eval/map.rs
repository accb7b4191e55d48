//! Map values: CEL's map keys, and an immutable map that keeps insertion order and looks keys
//! up with CEL's heterogeneous numeric rules.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::value::{Value, brief_value};

/// A map key: CEL allows bool, int, uint and string keys. Keys order by kind first (bool, int,
/// uint, string), then by value; the order only serves lookups.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// A bool key.
    Bool(bool),
    /// An int key.
    Int(i64),
    /// A uint key.
    Uint(u64),
    /// A string key.
    String(Arc<str>),
}

impl Key {
    /// The key as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }

    /// The key a value makes, when it may be one (doubles never are, as in the CEL spec).
    pub fn from_value(value: &Value) -> Option<Key> {
        match value {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Uint(u) => Some(Key::Uint(*u)),
            Value::String(s) => Some(Key::String(s.clone())),
            _ => None,
        }
    }

    /// The deep size of the key (see [`Value::deep_size`]).
    pub fn deep_size(&self) -> u64 {
        match self {
            Key::String(s) => s.len() as u64,
            _ => 1,
        }
    }

    /// The key written as a JSON object key.
    pub(crate) fn json_name(&self) -> String {
        match self {
            Key::Bool(b) => b.to_string(),
            Key::Int(i) => i.to_string(),
            Key::Uint(u) => u.to_string(),
            Key::String(s) => s.to_string(),
        }
    }
}

/// Maps at or below this many entries are searched linearly: faster than any index for the small
/// maps filters usually see.
const LINEAR_LOOKUP: usize = 8;

/// An immutable map that keeps its insertion order (for iteration and JSON output) and looks keys
/// up by binary search once it has more than a few entries. A sorted index rather than a hash
/// table: lookups by `&str` need no allocation, and keys chosen by whoever wrote the event cannot
/// degrade it the way colliding hashes degrade a hash table.
#[derive(Clone, Debug, Default)]
pub struct MapValue {
    entries: Vec<(Key, Value)>,
    /// Entry positions sorted by key; empty while the map is small.
    sorted: Vec<u32>,
    /// The deep size: per entry, the key's and the value's plus one.
    deep: u64,
}

/// Why a map could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapError {
    /// A key that is not bool, int, uint or string.
    InvalidKey(String),
    /// The same key twice (numerically equal int and uint keys count as the same).
    RepeatedKey(String),
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::InvalidKey(k) => write!(f, "unsupported key type for map: {k}"),
            MapError::RepeatedKey(k) => write!(f, "repeated key in map literal: {k}"),
        }
    }
}

impl MapValue {
    /// Builds a map from entries, refusing invalid and repeated keys.
    pub fn from_entries(pairs: Vec<(Value, Value)>) -> Result<MapValue, MapError> {
        let mut entries = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let Some(key) = Key::from_value(&k) else {
                return Err(MapError::InvalidKey(k.type_value().name().to_owned()));
            };
            entries.push((key, v));
        }
        if let Some(at) = first_repeat(&entries) {
            return Err(MapError::RepeatedKey(brief_value(
                &entries[at].0.to_value(),
            )));
        }
        Ok(MapValue::from_distinct(entries))
    }

    /// Builds a map from string keys known to be distinct (JSON objects: the event reader
    /// refuses repeated keys, and `serde_json` keeps the last of them).
    pub(crate) fn from_distinct(entries: Vec<(Key, Value)>) -> MapValue {
        let deep = entries
            .iter()
            .fold(0u64, |deep, (k, v)| deep.saturating_add(entry_deep(k, v)));
        let mut map = MapValue {
            entries,
            sorted: Vec::new(),
            deep,
        };
        map.reindex();
        map
    }

    /// Builds the sorted index once the map has outgrown linear search.
    fn reindex(&mut self) {
        if self.entries.len() <= LINEAR_LOOKUP {
            return;
        }
        let mut sorted: Vec<u32> = (0..self.entries.len() as u32).collect();
        sorted
            .sort_unstable_by(|&a, &b| self.entries[a as usize].0.cmp(&self.entries[b as usize].0));
        self.sorted = sorted;
    }

    fn get_key(&self, key: &Key) -> Option<&Value> {
        if self.sorted.is_empty() {
            return self
                .entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value);
        }
        self.sorted
            .binary_search_by(|&i| self.entries[i as usize].0.cmp(key))
            .ok()
            .map(|at| &self.entries[self.sorted[at] as usize].1)
    }

    /// Looks a key up with CEL's heterogeneous numeric rules: `m[1]`, `m[1u]` and `m[1.0]` find
    /// the same entry whichever of int or uint it was written with.
    pub fn get(&self, key: &Value) -> Option<&Value> {
        match key {
            Value::Bool(b) => self.get_key(&Key::Bool(*b)),
            Value::String(s) => self.get_str(s),
            Value::Int(i) => self.get_key(&Key::Int(*i)).or_else(|| {
                u64::try_from(*i)
                    .ok()
                    .and_then(|u| self.get_key(&Key::Uint(u)))
            }),
            Value::Uint(u) => self.get_key(&Key::Uint(*u)).or_else(|| {
                i64::try_from(*u)
                    .ok()
                    .and_then(|i| self.get_key(&Key::Int(i)))
            }),
            Value::Double(d) => {
                if d.fract() != 0.0 || !d.is_finite() {
                    return None;
                }
                // The range checks keep the casts exact: only doubles that are whole numbers
                // inside the integer range can equal an integer key.
                let as_int = (*d >= -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18)
                    .then(|| self.get_key(&Key::Int(*d as i64)))
                    .flatten();
                as_int.or_else(|| {
                    (*d >= 0.0 && *d < 1.844_674_407_370_955_2e19)
                        .then(|| self.get_key(&Key::Uint(*d as u64)))
                        .flatten()
                })
            }
            _ => None,
        }
    }

    /// Looks up a string key.
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        if self.sorted.is_empty() {
            return self.entries.iter().find_map(|(k, value)| match k {
                Key::String(s) if &**s == key => Some(value),
                _ => None,
            });
        }
        // Non-string keys sort before every string key.
        self.sorted
            .binary_search_by(|&i| match &self.entries[i as usize].0 {
                Key::String(s) => (**s).cmp(key),
                _ => Ordering::Less,
            })
            .ok()
            .map(|at| &self.entries[self.sorted[at] as usize].1)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in insertion order.
    pub fn entries(&self) -> &[(Key, Value)] {
        &self.entries
    }

    /// The deep size (see [`Value::deep_size`]), in O(1).
    pub fn deep_size(&self) -> u64 {
        self.deep
    }
}

/// A key as CEL compares keys: an int and a uint of the same value are one key.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SameKey<'a> {
    Bool(bool),
    Number(i128),
    String(&'a str),
}

impl<'a> SameKey<'a> {
    fn of(key: &'a Key) -> Self {
        match key {
            Key::Bool(b) => SameKey::Bool(*b),
            Key::Int(i) => SameKey::Number(i128::from(*i)),
            Key::Uint(u) => SameKey::Number(i128::from(*u)),
            Key::String(s) => SameKey::String(s),
        }
    }
}

/// The position of the first entry (in insertion order) whose key an earlier entry already has.
/// Sorting positions by key makes this `n log n` comparisons: inserting each key into a sorted
/// index instead moved the index once per entry, `n²` work for keys that arrive in descending
/// order (`lists.range(100000).transformMapEntry(i, v, {100000 - v: v})` ran 1.4 s).
fn first_repeat(entries: &[(Key, Value)]) -> Option<usize> {
    if entries.len() <= LINEAR_LOOKUP {
        return (1..entries.len()).find(|&j| {
            let later = SameKey::of(&entries[j].0);
            entries[..j].iter().any(|(k, _)| SameKey::of(k) == later)
        });
    }
    let mut order: Vec<u32> = (0..entries.len() as u32).collect();
    // Stable: within one key, positions stay ascending, so the second of a run is its first
    // repeat.
    order.sort_by(|&a, &b| {
        SameKey::of(&entries[a as usize].0).cmp(&SameKey::of(&entries[b as usize].0))
    });
    order
        .windows(2)
        .filter(|pair| {
            SameKey::of(&entries[pair[0] as usize].0) == SameKey::of(&entries[pair[1] as usize].0)
        })
        .map(|pair| pair[1] as usize)
        .min()
}

fn entry_deep(key: &Key, value: &Value) -> u64 {
    key.deep_size()
        .saturating_add(value.deep_size())
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_repeated_key_is_reported_in_small_and_large_maps() {
        for n in [3usize, 8, 9, 40, 1000] {
            // Keys n-1 … 0 (descending), then a uint equal to an int key, then a string twice.
            let mut pairs: Vec<(Value, Value)> = (0..n as i64)
                .rev()
                .map(|i| (Value::Int(i), Value::Null))
                .collect();
            assert!(MapValue::from_entries(pairs.clone()).is_ok(), "{n}");
            pairs.push((Value::string("s"), Value::Null));
            pairs.push((Value::Uint(1), Value::Null));
            pairs.push((Value::string("s"), Value::Null));
            assert_eq!(
                MapValue::from_entries(pairs).unwrap_err(),
                MapError::RepeatedKey("1u".to_owned()),
                "{n}"
            );
        }
        let map = MapValue::from_entries(
            (0..100i64)
                .rev()
                .map(|i| (Value::Int(i), Value::Int(-i)))
                .collect(),
        )
        .unwrap();
        assert!(map.get(&Value::Uint(42)).unwrap().cel_eq(&Value::Int(-42)));
        assert_eq!(map.entries()[0].0, Key::Int(99));
    }

    #[test]
    fn map_lookup_crosses_numeric_key_types() {
        let map =
            MapValue::from_entries(vec![(Value::Uint(3), Value::Bool(true))]).expect("valid map");
        assert!(map.get(&Value::Int(3)).is_some());
        assert!(map.get(&Value::Double(3.0)).is_some());
        assert!(map.get(&Value::Double(3.5)).is_none());
        let repeated = MapValue::from_entries(vec![
            (Value::Int(0), Value::Int(1)),
            (Value::Uint(0), Value::Int(2)),
        ]);
        assert!(matches!(repeated, Err(MapError::RepeatedKey(_))));
    }

    #[test]
    fn large_maps_are_indexed() {
        let pairs = (0..20)
            .map(|i| (Value::Int(i), Value::Int(i * 2)))
            .collect();
        let map = MapValue::from_entries(pairs).expect("valid map");
        assert_eq!(map.sorted.len(), 20);
        assert!(map.get_str("x").is_none());
        assert!(map.get(&Value::Uint(19)).unwrap().cel_eq(&Value::Int(38)));
    }

    #[test]
    fn sorted_index_finds_every_key_of_a_mixed_map() {
        let mut pairs: Vec<(Value, Value)> = (0..12)
            .map(|i| (Value::string(&format!("k{i}")), Value::Int(i)))
            .collect();
        pairs.push((Value::Bool(true), Value::Int(100)));
        pairs.push((Value::Uint(7), Value::Int(101)));
        let map = MapValue::from_entries(pairs).expect("valid map");
        for i in 0..12 {
            assert!(
                map.get_str(&format!("k{i}"))
                    .unwrap()
                    .cel_eq(&Value::Int(i))
            );
        }
        assert!(
            map.get(&Value::Bool(true))
                .unwrap()
                .cel_eq(&Value::Int(100))
        );
        assert!(map.get(&Value::Int(7)).unwrap().cel_eq(&Value::Int(101)));
        assert!(map.get_str("k12").is_none());
        let repeated =
            MapValue::from_entries((0..12).map(|i| (Value::Int(i % 11), Value::Null)).collect());
        assert!(matches!(repeated, Err(MapError::RepeatedKey(_))));
    }
}
