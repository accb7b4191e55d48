//! The switches of the cost model that both the estimator and the meter read: whether the
//! allocation part is charged, which version of the table is priced, and how the estimator
//! relates the sizes of event parts.

use super::table;

/// Which parts of the cost model are charged, and under which version of the table.
///
/// The estimator and the meter take the same value, so a "CPU only" comparison with cel-go's
/// published numbers runs the very same code paths as production, minus the allocation charges;
/// and an earlier version (`ozcheck filter --compare-model`) runs them with that version's
/// parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CostModel {
    /// Charge every string, bytes, list and map that evaluation builds (the `alloc_*` entries of
    /// the table). On in production; off only to compare with cel-go, which does not meter it.
    pub allocations: bool,
    /// The version of the table priced: [`table::COST_MODEL_VERSION`] in production, or an
    /// earlier one this build still carries ([`table::CARRIED_VERSIONS`]). Not serialized: a
    /// report carries the version apart.
    #[serde(skip, default = "current_version")]
    version: u32,
}

fn current_version() -> u32 {
    table::COST_MODEL_VERSION
}

impl CostModel {
    /// The production model: CPU part plus allocation part.
    pub const FULL: CostModel = CostModel {
        allocations: true,
        version: table::COST_MODEL_VERSION,
    };
    /// The CPU part alone, as cel-go meters it.
    pub const CPU_ONLY: CostModel = CostModel {
        allocations: false,
        version: table::COST_MODEL_VERSION,
    };

    /// `units` when allocations are charged, else zero.
    pub const fn alloc(self, units: u64) -> u64 {
        if self.allocations { units } else { 0 }
    }

    /// The same model under an earlier version of the table, when this build carries it
    /// (`None` otherwise; see [`table::CARRIED_VERSIONS`]).
    #[must_use]
    pub fn with_version(self, version: u32) -> Option<CostModel> {
        table::CARRIED_VERSIONS
            .contains(&version)
            .then_some(CostModel { version, ..self })
    }

    /// The version of the table this model prices.
    pub const fn version(self) -> u32 {
        self.version
    }

    /// The bytes of one key comparison past the first [`table::KEY_FREE_BYTES`] (see
    /// [`table::key_lookup`]): zero before version 4, which charged every lookup one call.
    pub const fn key_bytes(self, len: u64) -> u64 {
        if self.version >= 4 { len } else { 0 }
    }

    /// Whether the estimator's version-4 bounds apply: `format` of `split` parts summed over
    /// the text, numeric clauses bounded per clause, `replace` counts bounded by the text
    /// (docs/cost-model.md §2.1). Version 3 priced those shapes looser.
    pub(crate) const fn tighter_bounds(self) -> bool {
        self.version >= 4
    }

    /// Whether `min(a, b)` of two sizes is bounded by the operand that holds the innermost
    /// loop's element (version 5 on), so that the loop sums it over the list's bytes; earlier
    /// versions took the operand whose part the estimator met last, which inside a loop is
    /// often a part outside it, priced at its cap on every iteration.
    pub(crate) const fn loop_aware_min(self) -> bool {
        self.version >= 5
    }

    /// Whether the estimator's final maximisation bounds the terms of degree one of a budget
    /// together (version 5 on) rather than each at the whole budget.
    pub(crate) const fn shares_linear_terms(self) -> bool {
        self.version >= 5
    }

    /// Whether a comprehension over a range of several possible values is priced as the
    /// largest of the loops over each (version 5 on) rather than over their merge.
    pub(crate) const fn sums_each_alternative(self) -> bool {
        self.version >= 5
    }

    /// Whether `format` patterns of `%b`, `%o`, `%x` and `%X` clauses (and no `%s`) are bounded
    /// per clause (version 5 on); earlier versions priced them as `%s` of their arguments.
    pub(crate) const fn bounds_radix_clauses(self) -> bool {
        self.version >= 5
    }

    /// Whether `%s` text of a JSON value of `b` bytes is bounded by `52·b + 49` (version 6 on)
    /// rather than `52·b` plus the longest formatted scalar, which a loop paid on every element
    /// (docs/cost-model.md §2.1).
    pub(crate) const fn bounds_formatted_json(self) -> bool {
        self.version >= 6
    }

    /// Whether the key (or index) and the value of one entry a two-variable loop binds are
    /// sized apart, together at most the entry's bytes (version 6 on), rather than each at the
    /// whole entry (docs/cost-model.md §4).
    pub(crate) const fn splits_entries(self) -> bool {
        self.version >= 6
    }

    /// Whether a list indexed by a non-negative int literal gives the element at that index, a
    /// part disjoint from the elements at other literal indices (version 6 on), rather than a
    /// member that may be any element.
    pub(crate) const fn indexes_apart(self) -> bool {
        self.version >= 6
    }

    /// Whether `sort()` of a JSON list bounds its count times its longest element together
    /// (version 6 on): `ℓ · L ≤ b²/8` for a list of `b` bytes.
    pub(crate) const fn sorts_within_list(self) -> bool {
        self.version >= 6
    }

    /// Whether `format` on a literal pattern and a list literal prices the formatting of only
    /// the elements its clauses take, by position (version 6 on): the evaluator formats the
    /// `i`-th clause with the `i`-th element and never reads the ones past the last clause
    /// (docs/cost-model.md §2.1). The list is still built and its elements evaluated.
    pub(crate) const fn formats_consumed_args(self) -> bool {
        self.version >= 6
    }

    /// Whether a JSON list indexed by the bare variable of a loop over `lists.range(n)` gives an
    /// element the loop sums over (version 7 on), as a loop over the list itself does: the
    /// range yields each of `0 … n − 1` once, so the elements its indices reach are different
    /// elements, whose bytes add up to at most the list's (docs/cost-model.md §4). Earlier
    /// versions priced every iteration at a member as large as the whole list.
    pub(crate) const fn sums_range_indices(self) -> bool {
        self.version >= 7
    }

    /// Whether the value a two-variable loop over `event` binds is one of the event's seven
    /// fields, each within its bound (version 7 on), as `event[k]` is, rather than unknown
    /// (unbounded), which priced `event.exists(k, v, v.contains(k))` past `u64::MAX`.
    pub(crate) const fn binds_event_fields(self) -> bool {
        self.version >= 7
    }

    /// Whether `lists.range(size(x))` is a list of at most as many elements as `size(x)` can be
    /// (version 7 on: `x`'s bytes for a JSON value, its bound for a string, its length for a
    /// list or a map), rather than of an unbounded length like any length computed at run time.
    pub(crate) const fn bounds_sized_ranges(self) -> bool {
        self.version >= 7
    }

    /// Whether a `filter` over the parts of a split counts the parts it can keep (version 8
    /// on): a predicate that holds only on strings of at least `m` bytes keeps at most
    /// `(b + s)/(m + s)` of the parts of `b` bytes split at a separator of `s`, and only those
    /// are appended and iterated by what follows (docs/cost-model.md §4). Earlier versions
    /// priced every part of the split as kept.
    pub(crate) const fn counts_kept_parts(self) -> bool {
        self.version >= 8
    }

    /// Whether `x in list` bounds the walk over a list whose elements are parts of one budget
    /// by their sizes summed (version 8 on), rather than by the count times the largest
    /// element (`'urgent' in event.text.split(' ')`: about 268 million, refused, against about
    /// 50,000 reachable).
    pub(crate) const fn sums_list_deep_size(self) -> bool {
        self.version >= 8
    }

    /// Whether a loop that stops at its body's first error (`map`, `filter`, `exists_one`,
    /// `sortBy`) over the elements of a JSON part counts only the elements its body can run on
    /// (version 9 on): an element the body selects a field of, or calls a member function on,
    /// takes more bytes than a number's one, and a `filter` keeps only elements its predicate
    /// runs on and is true on (docs/cost-model.md §4). Earlier versions counted every element
    /// at two bytes (`items.map(i, i.qty * i.price)`: 4,093 iterations where at most 410 run).
    pub(crate) const fn counts_needed_bytes(self) -> bool {
        self.version >= 9
    }

    /// Whether a loop over the elements of a JSON part whose body reads nothing but its
    /// variable is priced as the larger of its elements all numbers, bools or null and all
    /// strings, lists or maps (two bytes at least), and whether a list a `map` built keeps
    /// knowing which of its elements come from which (version 10 on; docs/cost-model.md §4,
    /// "Numbers and the rest, apart"). Earlier versions priced every element at a number's
    /// count and a string's size at once (`a.map(x, x + x)`: 87,606, where 65,488 is reachable).
    pub(crate) const fn splits_scalar_elements(self) -> bool {
        self.version >= 10
    }

    /// What `double(s)` of a string of `len` bytes pays past the traversal every parsing
    /// conversion pays ([`table::parse_double`], version 8 on; earlier versions nothing).
    pub const fn parse_double(self, len: u64) -> u64 {
        if self.version >= 8 {
            table::parse_double(len)
        } else {
            0
        }
    }

    /// What each `%f` or `%e` clause of `format` pays for the digits it computes
    /// ([`table::FORMAT_FLOAT`], version 8 on; earlier versions nothing).
    pub const fn format_float(self) -> u64 {
        if self.version >= 8 {
            table::FORMAT_FLOAT
        } else {
            0
        }
    }

    /// The allocation charge of the container of a list a library function builds
    /// ([`table::ALLOC_PER_LIST`], version 4 on; earlier versions charged none).
    pub const fn list_alloc(self) -> u64 {
        if self.version >= 4 {
            self.alloc(table::ALLOC_PER_LIST)
        } else {
            0
        }
    }

    /// The allocation charge of an optional that holds a value
    /// ([`table::ALLOC_PER_OPTIONAL`], version 4 on; earlier versions charged none).
    pub const fn optional_alloc(self) -> u64 {
        if self.version >= 4 {
            self.alloc(table::ALLOC_PER_OPTIONAL)
        } else {
            0
        }
    }
}

impl Default for CostModel {
    fn default() -> Self {
        Self::FULL
    }
}

/// How the estimator bounds the sizes of different event parts relative to each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SizeModel {
    /// Parts that come from the same budget share it: everything under `event.attributes`
    /// fits in the attributes budget together. This is the production model.
    #[default]
    Shared,
    /// Every part is bounded on its own, each at the full size of its budget (cel-go's and
    /// Kubernetes' way). Sound but loose; kept to show what the shared budget buys.
    Independent,
}
