//! The one cost table. The static estimator and the runtime meter both read these constants and
//! functions, so the two cannot drift apart; `docs/cost-model.md` explains every entry.
//!
//! Units: the CPU part follows cel-go's model (one unit is roughly one basic operation, about
//! 50–100 ns), so people who know Kubernetes CEL limits can reason with the numbers. On top of
//! it, every string, bytes, list and map that an evaluation builds is charged its size (the
//! allocation part), which cel-go does not meter.
//!
//! Sizes are in bytes for strings and bytes (UTF-8 length: never smaller than the code-point
//! count cel-go uses, and O(1) to read), elements for lists, entries for maps.
//!
//! Every function here is monotone non-decreasing in each size argument; the estimator relies on
//! that to turn size upper bounds into cost upper bounds.

/// Version of the cost model. Any change to a constant or formula in this file, or to a rule
/// of the estimator that changes a figure, changes it; a stored verdict is only valid for the
/// version it was computed with. `docs/cost-model.md` keeps the changelog, and
/// `analyzer/tests/model_version.rs` fails when a figure moves without a new version.
pub const COST_MODEL_VERSION: u32 = 10;

/// The versions this build can still price (`CostModel::with_version`, `ozcheck filter
/// --compare-model`): version 3 is version 4 with the per-size key charges and the optional's
/// allocation at zero; version 4 is version 5 with the estimator's loop-blind rules; version 5
/// is version 6 with the looser bounds of formatted JSON values and of entries; version 6 is
/// version 7 with a list indexed by a `lists.range` loop's variable priced at its whole size
/// on every iteration; version 7 is version 8 with every part of a split priced as kept by a
/// `filter` over it and without [`parse_double`] and [`FORMAT_FLOAT`]; version 8 is version 9
/// with every element of a JSON part counted at two bytes by a loop that stops at its body's
/// first error; version 9 is version 10 with every element of a JSON part priced as a number
/// and as a string at once ([`crate::CostModel`]'s version switches).
pub const CARRIED_VERSIONS: [u32; 8] = [3, 4, 5, 6, 7, 8, 9, 10];

/// The default cost limit of one evaluation (the same order as Kubernetes' per-call limit).
pub const DEFAULT_COST_LIMIT: u64 = 1_000_000;

/// A literal.
pub const CONST: u64 = 0;
/// An identifier, a field selection, a presence test.
pub const SELECT: u64 = 1;
/// The default cost of a call whose work does not depend on its arguments' sizes: arithmetic,
/// numeric comparison, `!`, unary `-`, `size`, `type`, conversions, index, timestamp accessors.
pub const CALL: u64 = 1;
/// Building a list (a literal, or the accumulator of `map`/`filter`).
pub const LIST_CREATE: u64 = 10;
/// Building a map literal.
pub const MAP_CREATE: u64 = 30;
/// Building a message literal.
pub const STRUCT_CREATE: u64 = 40;

/// Fixed cost of `all` and `exists` (reading the result).
pub const COMPREHENSION_RESULT: u64 = 1;
/// Per-element overhead of `all`: the loop condition (2) and reading the accumulator (1).
pub const ALL_PER_ELEMENT: u64 = 3;
/// Per-element overhead of `exists`: the loop condition with its negation (3) and the
/// accumulator read (1).
pub const EXISTS_PER_ELEMENT: u64 = 4;
/// Fixed cost of `exists_one`: the final `acc == 1` (call plus accumulator read).
pub const EXISTS_ONE_RESULT: u64 = 2;
/// Per-element overhead of `exists_one` when the predicate is false (reading the accumulator).
pub const EXISTS_ONE_SKIP: u64 = 1;
/// Per-element overhead of `exists_one` when the predicate is true (`acc + 1`).
pub const EXISTS_ONE_COUNT: u64 = 2;
/// Fixed cost of `map` and `filter`: the empty accumulator list (10) and the result read (1).
pub const MAP_FILTER_FIXED: u64 = LIST_CREATE + 1;
/// Per-element overhead of `map` (and of a kept element of three-argument `map`): building
/// `[t]` (10), appending it (1) and reading the accumulator (1).
pub const MAP_APPEND: u64 = LIST_CREATE + 2;
/// Per-element overhead of a kept element of `filter`: `[x]` (10), the append (1), the
/// accumulator read (1) and the iteration variable read (1).
pub const FILTER_APPEND: u64 = LIST_CREATE + 3;
/// Per-element overhead of an element that `filter` or three-argument `map` drops.
pub const FILTER_SKIP: u64 = 1;

/// Allocation charge per byte of a string or bytes value that evaluation builds.
pub const ALLOC_PER_BYTE: u64 = 1;
/// Allocation charge per element of a list that evaluation builds.
pub const ALLOC_PER_ELEMENT: u64 = 1;
/// Allocation charge per entry of a map that evaluation builds.
pub const ALLOC_PER_ENTRY: u64 = 2;

/// Allocation charge of an optional that holds a value (version 4): its value lives in a shared
/// allocation of its own, [`BUILT_PER_CONTAINER`] bytes, which at two units (and the one unit
/// of the call or selection that makes it) stays under [`MAX_BYTES_PER_UNIT`].
pub const ALLOC_PER_OPTIONAL: u64 = 2;

/// Allocation charge of the container of a list that a library function builds (`reverse`,
/// `slice`, `flatten`, `distinct`, `sort`, `sortBy`, `unwrapOpt`, `split`, `lists.range`;
/// version 4): [`BUILT_PER_CONTAINER`] bytes, which a call of one unit on an empty list
/// (`[].reverse().reverse()…`) left at 64 bytes a unit. A literal or a macro's result pays
/// `LIST_CREATE` for it instead.
pub const ALLOC_PER_LIST: u64 = 3;

/// The most bytes counted against [`MEMORY_LIMIT`] per unit charged, for every kind of value
/// an evaluation builds (docs/cost-model.md §1, "Memory follows cost"): a map entry's 56 bytes
/// for its 2 units. At the default limit that is 28,000,000 bytes, inside the 32 MiB cap, so an
/// accepted filter never stops with `memory`.
pub const MAX_BYTES_PER_UNIT: u64 = 28;

/// The most entries a map holds: its index is of `u32` positions.
pub const MAP_MAX_ENTRIES: u64 = u32::MAX as u64;

/// The key comparisons one lookup makes in a map of `entries` entries, at most: each entry up
/// to eight (linear search), then `⌊log₂ entries⌋ + 1` (binary search over the sorted index),
/// never less than eight, so that the count never decreases as a map grows (the estimator
/// prices a lookup at the most entries a map may have). At most 32 for any map
/// ([`MAP_MAX_ENTRIES`]).
pub const fn key_probes(entries: u64) -> u64 {
    if entries <= 8 {
        entries
    } else {
        let binary = (u64::BITS - entries.leading_zeros()) as u64;
        if binary < 8 { 8 } else { binary }
    }
}

/// One comparison of a key of `len` bytes, past the first ten (which the lookup's `CALL`
/// covers, so a lookup of a short key costs one unit as in cel-go): `⌊len / 10⌋`.
pub const fn key_compare(len: u64) -> u64 {
    len / 10
}

/// `k in m`, `m[k]`, `m[?k]` with a key of `key_len` bytes (0 for a number or bool) in a map of
/// `entries` entries: one call and every probe's comparison, each walking at most the key.
pub const fn key_lookup(entries: u64, key_len: u64) -> u64 {
    CALL.saturating_add(key_probes(entries).saturating_mul(key_compare(key_len)))
}

/// How many times building a map of `entries` entries walks each key, at most: the check for
/// repeated keys sorts the keys and the index sorts them again, and a sort compares each key in
/// about `⌈log₂ n⌉ + 1` rounds, each comparison walking at most the shorter key (so it is
/// counted against the key it moves): `2 (⌈log₂ n⌉ + 1)`, and nothing below two entries. Never
/// less than the pairwise check of small maps (`n − 1` comparisons a key).
pub const fn map_build_passes(entries: u64) -> u64 {
    if entries < 2 {
        0
    } else {
        let log = (u64::BITS - (entries - 1).leading_zeros()) as u64;
        let sorted = 2 * (log + 1);
        let pairwise = entries - 1;
        if entries <= 8 && pairwise > sorted {
            pairwise
        } else {
            sorted
        }
    }
}

/// The key work of building a map of `entries` entries whose string keys together come to
/// `key_compares` = `Σ key_compare(|kᵢ|)`: [`map_build_passes`] walks of each key.
pub const fn map_build(entries: u64, key_compares: u64) -> u64 {
    map_build_passes(entries).saturating_mul(key_compares)
}

/// One traversal of `len` bytes: `ceil(0.1 · len)`.
pub const fn traversal(len: u64) -> u64 {
    len.div_ceil(10)
}

/// `s.contains(t)`: `ceil(0.1·|s|) · ceil(0.1·|t|)`, as cel-go.
pub const fn contains(haystack: u64, needle: u64) -> u64 {
    traversal(haystack).saturating_mul(traversal(needle))
}

/// `s.startsWith(p)` and `s.endsWith(p)`: only the prefix or suffix is traversed.
pub const fn starts_ends_with(affix: u64) -> u64 {
    traversal(affix)
}

/// The longest pattern `matches` compiles, in bytes (a filter's own source limit). Longer
/// patterns can only come from the event, and are refused before they are parsed.
pub const REGEX_MAX_PATTERN: u64 = 1024;
/// The largest count a counted repetition may have (`a{1000}`), as in RE2.
pub const REGEX_MAX_REPEAT: u32 = 1000;
/// The most Unicode property classes (`\pL`, `\p{Greek}`) one pattern may name; each takes up
/// to ~30 µs to look up.
pub const REGEX_MAX_UNICODE_CLASSES: u64 = 32;
/// The most work case-insensitive matching may add to one compilation, in units of about 15 ns
/// of case folding (see `regex::fold`): about a millisecond. `(?i)\pL` takes 15,800.
pub const REGEX_MAX_FOLDED: u64 = 65_536;
/// The largest compiled size of a pattern: states plus transitions of its automaton. The search
/// does at most this much work per input byte, and compiling it takes well under a millisecond.
pub const REGEX_MAX_SIZE: u64 = 4096;
/// Compiling a pattern that is not a literal, charged before the compilation: the price of the
/// largest compilation the limits above allow (measured at about 3 ms). Literal patterns are
/// compiled once, with the program, and never charged.
pub const REGEX_COMPILE: u64 = 40_000;

/// `s.matches(re)` where `re` compiles to `size` (states plus transitions): the lazy DFA does at
/// most `size` steps of work per input byte, and an input that makes it build a new state at
/// almost every byte (`a[ab]{20}[^ab]` over random `a`/`b` text) reaches that bound, at about
/// 10–21 ns per byte and unit of size on the reference machine. The search is therefore
/// `(|s|+1) · ceil(size/4)`: every byte, not cel-go's every tenth, at a quarter of the compiled
/// size (cel-go prices the pattern's length, which a counted repetition (`a{1000}`) makes
/// arbitrarily wrong, and a tenth of the input, which the DFA's worst case makes 10× wrong).
pub const fn matches(input: u64, size: u64) -> u64 {
    input.saturating_add(1).saturating_mul(size.div_ceil(4))
}

/// Equality or ordering of two strings or two bytes values: one traversal of the shorter.
pub const fn compare_sized(a: u64, b: u64) -> u64 {
    let shorter = if a < b { a } else { b };
    traversal(shorter)
}

/// `a + b` on strings or bytes: one traversal of the result (the allocation is charged apart).
pub const fn concat(a: u64, b: u64) -> u64 {
    traversal(a.saturating_add(b))
}

/// `string(bytes)` and `bytes(string)`: one traversal (validation or copy).
pub const fn convert_sized(len: u64) -> u64 {
    traversal(len)
}

/// Deep equality (`==`, `!=`) of two lists or maps whose deep sizes (see `eval::Value`: one per
/// element, entry and scalar, one per byte of a string) are `a` and `b`: the comparison walks at
/// most the smaller of the two.
pub const fn equal_deep(a: u64, b: u64) -> u64 {
    if a < b { a } else { b }
}

/// `x in list` over `len` elements whose deep size together is `deep`, with `x` of deep size
/// `needle`: one comparison per element, each walking at most the smaller of the two values.
pub const fn in_list(len: u64, needle: u64, deep: u64) -> u64 {
    let walked = len.saturating_mul(needle);
    len.saturating_add(if walked < deep { walked } else { deep })
}

/// `double(s)` of a string, on top of [`read_sized`] (cost-model version 8,
/// [`crate::CostModel::parse_double`]): a unit a byte, and [`PARSE_DOUBLE`] for the decimal
/// arithmetic of a correctly rounded result. A literal near a halfway point between two
/// doubles, or past their range, takes the parser off its fast path into arithmetic on a
/// decimal of up to 768 digits: about 20 µs a call for six characters (`6e-319`) and up to
/// 720 µs for 16 KiB of digits on a busy machine, where version 7 charged a tenth of a unit a
/// byte (docs/cost-model.md §1).
pub const fn parse_double(len: u64) -> u64 {
    len.saturating_add(PARSE_DOUBLE)
}

/// The fixed part of [`parse_double`].
pub const PARSE_DOUBLE: u64 = 1_000;

/// Each `%f` and `%e` clause of `format` that formats a number (cost-model version 8,
/// [`crate::CostModel::format_float`]): writing a double's exact decimal digits to a precision
/// works on big integers as long as its binary exponent, about 30 to 65 µs for `%.100f` of the
/// largest double or `%.100e` of the smallest normal one on a busy machine, where version 7
/// charged only the text's allocation.
pub const FORMAT_FLOAT: u64 = 600;

/// `size(s)` of a string (counting code points) and the conversions that parse a string
/// (`int(s)`, `uint(s)`, `double(s)`, `bool(s)`, `timestamp(s)`, `duration(s)`): one traversal.
pub const fn read_sized(len: u64) -> u64 {
    traversal(len)
}

/// The one-argument functions that read all of a string argument, charged [`read_sized`] on
/// one (and `CALL` on anything else).
pub fn reads_string(function: &str) -> bool {
    matches!(
        function,
        "size" | "int" | "uint" | "double" | "bool" | "timestamp" | "duration"
    )
}

/// Allocation charge of a built string or bytes value of `len` bytes.
pub const fn alloc_bytes(len: u64) -> u64 {
    len.saturating_mul(ALLOC_PER_BYTE)
}

/// Allocation charge of a built list of `len` elements.
pub const fn alloc_list(len: u64) -> u64 {
    len.saturating_mul(ALLOC_PER_ELEMENT)
}

/// Allocation charge of a built map of `len` entries.
pub const fn alloc_map(len: u64) -> u64 {
    len.saturating_mul(ALLOC_PER_ENTRY)
}

/// The longest string `string(x)` builds from a number, bool, timestamp, duration or type, in
/// bytes. The longest are a timestamp with nanoseconds (`9999-12-31T23:59:59.999999999Z`, 30),
/// a type name (`google.protobuf.Timestamp`, 25), a double in exponent form with a sign
/// (`-2.2250738585072014e-308`, 24), a duration (`-315576000000.999999999s`, 24) and an int
/// (`-9223372036854775808`, 20). The estimator charges this much allocation for such
/// conversions; the evaluator never formats a scalar longer (tested in
/// `analyzer/tests/estimate_classes.rs`).
pub const SCALAR_STRING_MAX: u64 = 32;

/// The most bytes one evaluation may build, whatever its cost limit: string and bytes contents
/// ([`built_text`]: twice their length, three times in `format`), [`BUILT_PER_CONTAINER`] per
/// list or map built, [`BUILT_PER_ELEMENT`] per list element (per slot of every buffer a
/// `filter` list grows through) and [`BUILT_PER_ENTRY`] per map entry. Past it the evaluation stops with `memory`. With
/// allocations charged, a unit of cost buys at most `BUILT_PER_ENTRY / ALLOC_PER_ENTRY` = 28
/// bytes (a container costs at least `LIST_CREATE` = 10 units for its 64 bytes), so under the
/// default cost limit no evaluation reaches the cap; it binds when the cost limit is off or
/// raised past 1.19 million units.
pub const MEMORY_LIMIT: u64 = 32 * 1024 * 1024;
/// Bytes counted against [`MEMORY_LIMIT`] for a string or bytes value of `len` bytes: twice its
/// length. A value is assembled in a buffer and then copied into the shared allocation it lives
/// in, so for a moment both exist; counted once, a doubling chain stopped at the cap
/// (`[event.text].map(x, x + x)` eleven times) held 40 MiB at the last concatenation (the 8 MiB
/// operand, the 16 MiB buffer and its 16 MiB copy), found by the `hostile` fuzz target.
pub const fn built_text(len: u64) -> u64 {
    len.saturating_mul(2)
}

/// Bytes counted per list or map an evaluation builds (a literal or the result of `map` and
/// `filter`), whatever its length: the shared header and the container (48 bytes) and the
/// allocator's overhead on its two allocations. Without it, `[[[[[[j]]]]]]` in a nested `map`
/// was counted at 24 bytes a level while it took about 100, and an evaluation stopped at the
/// 32 MiB cap held 125–151 MB.
pub const BUILT_PER_CONTAINER: u64 = 64;
/// Bytes counted per element of a built list (one value).
pub const BUILT_PER_ELEMENT: u64 = 24;
/// Bytes counted per entry of a built map (a key, a value and its index slot).
pub const BUILT_PER_ENTRY: u64 = 56;

// ---- the extension libraries ---------------------------------------------------------------
//
// Strings are sized in bytes as everywhere in this table: a code-point walk over `len` bytes is
// one traversal of them. Every function that builds a string or list also pays its allocation
// (`alloc_bytes`, `alloc_list`, `alloc_map`) on top of these CPU parts, charged once the size of
// the result is known and before it is built.

/// Fixed cost of `transformMap` and `transformMapEntry`: the empty accumulator map (30) and the
/// result read (1).
pub const TRANSFORM_MAP_FIXED: u64 = MAP_CREATE + 1;
/// Per entry `transformMap` or `transformMapEntry` inserts: the insert (1) and the accumulator
/// read (1).
pub const TRANSFORM_MAP_INSERT: u64 = 2;
/// `optMap` and `optFlatMap`: the presence test (1) and wrapping or reading the result (1).
pub const OPT_MAP: u64 = 2;

/// A pass over `len` bytes that finds code-point offsets or builds a new string from them
/// (`charAt`, `substring`, `lowerAscii`, `upperAscii`, `trim`, `reverse`, `strings.quote`):
/// one traversal.
pub const fn string_pass(len: u64) -> u64 {
    traversal(len)
}

/// `s.indexOf(t)` and `s.lastIndexOf(t)`: the search, as `contains`, and the code-point walk
/// that turns byte offsets into indices.
pub const fn index_of(haystack: u64, needle: u64) -> u64 {
    contains(haystack, needle).saturating_add(traversal(haystack))
}

/// `s.replace(old, new)`: the search for `old`, as `contains` (at least one call), then one
/// traversal of the `result` bytes it writes.
pub const fn replace(haystack: u64, needle: u64, result: u64) -> u64 {
    let search = contains(haystack, needle);
    let search = if search < CALL { CALL } else { search };
    search.saturating_add(traversal(result))
}

/// `s.split(sep)`: the search for `sep`, as `contains`, building the list (`LIST_CREATE`) and
/// copying the parts (one traversal of `s`).
pub const fn split(haystack: u64, separator: u64) -> u64 {
    contains(haystack, separator)
        .saturating_add(LIST_CREATE)
        .saturating_add(traversal(haystack))
}

/// `list.join(sep)`: the call, one unit per element read, and one traversal of the `result`
/// bytes.
pub const fn join(elements: u64, result: u64) -> u64 {
    CALL.saturating_add(elements)
        .saturating_add(traversal(result))
}

/// `pattern.format(args)`: one traversal of the pattern; every piece of text it appends is
/// charged as an allocation when it is appended (the estimator bounds their total by the
/// arguments' sizes).
pub const fn format(pattern: u64) -> u64 {
    traversal(pattern)
}

/// The largest precision `%.Nf` and `%.Ne` accept (cel-go's limit for the same reason: the
/// digits a precision asks for are built).
pub const FORMAT_MAX_PRECISION: u64 = 100;

/// The longest text `format` writes for one double with `%s` (alone or inside a list or map):
/// Go's `FormatFloat(x, 'f', -1, 64)`, the fewest digits that read back, never in exponent form.
/// The longest are the smallest subnormals: a sign, `0.`, up to 323 zeros and up to 17 digits
/// (`5e-324` is 326 bytes, `1e308` 309). Tested over every decimal exponent in
/// `analyzer/tests/extension_costs.rs`.
pub const FORMATTED_DOUBLE_MAX: u64 = 343;

/// The longest text `format` writes for one scalar with any clause: `%.100f` of the largest
/// double is a sign, 309 integer digits, the point and [`FORMAT_MAX_PRECISION`] decimals.
pub const FORMATTED_SCALAR_MAX: u64 = 1 + 309 + 1 + FORMAT_MAX_PRECISION;

/// Sorting `len` values (`sort`, `sortBy`): `len · ⌈log₂ len⌉` comparisons, each at most
/// `compare` units.
pub const fn sort(len: u64, compare: u64) -> u64 {
    let log = if len < 2 {
        0
    } else {
        (u64::BITS - (len - 1).leading_zeros()) as u64
    };
    len.saturating_mul(log).saturating_mul(compare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_match_cel_go_reference_numbers() {
        // research/cel-cost-model.md §3.2 #16 prices 500 bytes against a pattern of 5 at 102
        // (a tenth of the input); ozcheck charges every byte, as the DFA's worst case does
        // work at every byte: 501 · 2.
        assert_eq!(matches(500, 5), 1002);
        // #33: two 500-char strings → 50 · 50.
        assert_eq!(contains(500, 500), 2500);
        // #36: a 500-char prefix → 50.
        assert_eq!(starts_ends_with(500), 50);
        assert_eq!(traversal(0), 0);
        assert_eq!(traversal(1), 1);
        assert_eq!(traversal(10), 1);
        assert_eq!(traversal(11), 2);
    }

    #[test]
    fn key_probes_never_decrease() {
        let mut last = 0;
        for n in (0..5000).chain([u64::from(u32::MAX) - 1, u64::from(u32::MAX)]) {
            let probes = key_probes(n);
            assert!(probes >= last, "{n}");
            last = probes;
        }
        assert_eq!(key_probes(MAP_MAX_ENTRIES), 32);
        assert_eq!((key_probes(8), key_probes(9), key_probes(1000)), (8, 8, 10));
    }

    #[test]
    fn formulas_saturate() {
        assert_eq!(contains(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(matches(u64::MAX, 8), u64::MAX);
        assert_eq!(in_list(u64::MAX, 2, 3), u64::MAX);
        assert_eq!(alloc_map(u64::MAX), u64::MAX);
    }
}
