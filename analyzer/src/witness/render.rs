//! Rendering a template under one set of choices into the compact JSON text of an event that
//! fits its bounds exactly as the runtime measures them.
//!
//! Every slot renders at its least size plus at most the extra bytes it is given, so sizes add
//! up before anything is written: the attributes object gets `bound − least size` extra bytes,
//! shared among its growable members by weight, and so on down the tree. Strings grow by filler
//! characters (one byte each), lists and objects by more elements or entries, or by larger ones.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::plan::{Compared, Kind, Slot, Template};
use super::text::{self, Measure};
use crate::EventBounds;

/// How a slot's content is chosen when it is a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// The slot's own filler character, repeated.
    Filler,
    /// The empty string.
    Empty,
    /// A literal of the expression, exactly.
    Exact(usize),
    /// A literal, then filler.
    Prefix(usize),
    /// Filler, then a literal.
    Suffix(usize),
    /// A literal repeated to fill the slot: every position a match (what `replace`, `split`
    /// and the searches of a literal do the most work on).
    Repeat(usize),
    /// The key objects hold their computed-key member under.
    MemberKey,
    /// `"` repeated: what `strings.quote` doubles.
    Quotes,
    /// Distinct characters: every part of `split('')` differs.
    Distinct,
    /// Distinct tokens joined by a literal: every part of `split(literal)` differs.
    Tokens(usize),
    /// One long run of filler, then a literal repeated: one long part and many empty ones.
    Halves(usize),
    /// The value of an entry: its key, then filler (`v.startsWith(k)`, `v.contains(k)` and
    /// `v == k` hold on every entry, so an `all` over them visits them all).
    KeyFirst,
    /// The value of an entry: filler, then its key (`v.endsWith(k)` holds).
    KeyLast,
    /// A literal then a separator the expression splits at, repeated (with one filler
    /// character between them when the flag is set): every part of the split is the literal
    /// (or the literal and one more character), so a `filter` or `all` testing the parts
    /// against it passes every one.
    Joined(usize, usize, bool),
    /// Parts of `n` filler characters, each followed by a separator the expression splits at
    /// (a literal), repeated: every part of the split is `n` bytes long, so a length test
    /// against an integer literal (`split(' ').all(w, w.size() > 3)`) passes on each of the
    /// most parts that can pass it.
    Parts(usize, u64),
    /// A separator the expression splits at (a literal) repeated, then the `k`-th of
    /// [`split_tails`]: every part of the split but the last is empty, the last is the tail.
    /// Empty parts make a conversion or a test of their content error cheaply, which `all`
    /// and `exists` go on past, and the tail ends the loop without the error (`"   …  0"` for
    /// `split(' ').all(w, int(w) > 0)`).
    Separated(usize, usize),
}

/// How the elements (or entry values) of a container share its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spread {
    /// As many elements as fit, each as small as it can be.
    Least,
    /// Elements of a few extra bytes each.
    Small(u64),
    /// Elements of about the square root of the container's size.
    Root,
    /// Two elements sharing everything.
    Two,
    /// One element taking everything.
    One,
    /// One large element first (the computed-key member, else an entry value, else an
    /// element), then elements `0` that index it: a list indexed by its own elements reaches
    /// the large one every time.
    Pointer,
    /// One element of half the bytes, the others as small as they can be: `sort` and `sortBy`
    /// charge every comparison at the longest key.
    Lopsided,
    /// The entries of an object with keys of about the square root of its size (values as
    /// small as they can be): loops over keys that compare or search them.
    LongKeys,
    /// Two entries whose keys share the object's bytes.
    TwoKeys,
    /// One entry whose key and value share the object's bytes evenly: what a search of one in
    /// the other (`v.contains(k)`) costs most on, a product of the two sizes. A list's one
    /// element takes everything, as with `One`.
    Balanced,
    /// The elements of a list all different (`0`, `1`, `2`… or the shortest distinct strings):
    /// `distinct()` and the `sets` functions compare each with all those before it.
    Distinct,
}

const SPREADS: [Spread; 12] = [
    Spread::Least,
    Spread::Small(1),
    Spread::Small(10),
    Spread::Root,
    Spread::Two,
    Spread::One,
    Spread::Pointer,
    Spread::Lopsided,
    Spread::LongKeys,
    Spread::TwoKeys,
    Spread::Distinct,
    Spread::Balanced,
];

/// How many bytes the elements a list holds before its largest constant index may take (with
/// their commas) when the attributes' bound is not enough for all of them: a filter reading
/// `l[100000]` gets a list that ends before it (its read fails as on any shorter list), and one
/// reading `l[1000]` of a list of objects gets one that fits the attributes' bound. Elements
/// `0` reach index 1,024. When the attributes' least size with every constant index written
/// out (the elements before each within the attributes' bound) fits the bound, that is the
/// event: `l[2000]` after 2,000 elements `0` (`Renderer::event`).
const MAX_BEFORE_INDEX: u64 = 2048;

/// Number of scalar choices besides the literals.
const SCALARS: usize = 10;
/// The scalar option of the number 0.
pub(crate) const SCALAR_ZERO: u8 = 1;
/// The scalar option of the double whose text is longest for its JSON (`1e308`).
pub(crate) const SCALAR_LONGEST: u8 = 8;

/// One choice per knob: the kind, string content, scalar, spread and tail of every slot, and
/// how the attributes' budget is split among its members (0: by the worst monomial's weights,
/// 1: evenly, `2 + i`: all to the `i`-th growable member).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Choices {
    pub(crate) kind: Vec<u8>,
    pub(crate) text: Vec<u8>,
    pub(crate) scalar: Vec<u8>,
    pub(crate) spread: Vec<u8>,
    /// The last element of a list, or the value of the last entry of an object, when it is not
    /// one more like the others (0): see [`tail_options`].
    pub(crate) tail: Vec<u8>,
    pub(crate) split: u8,
}

impl Choices {
    /// The best guesses: every knob at its first option.
    pub(crate) fn first(template: &Template) -> Choices {
        let n = template.slots;
        Choices {
            kind: vec![0; n],
            text: vec![0; n],
            scalar: vec![0; n],
            spread: vec![0; n],
            tail: vec![0; n],
            split: 0,
        }
    }
}

/// The text option that names the computed-key member.
pub(crate) const TEXT_MEMBER_KEY: u8 = 1;
/// The spread option that puts the computed-key member first.
pub(crate) const SPREAD_POINTER: u8 = 6;
/// The spread option of one element taking everything.
pub(crate) const SPREAD_ONE: u8 = 5;

/// How many options each knob family has.
pub(crate) fn text_options(t: &Template) -> usize {
    TEXTS
        + LITERAL_TEXTS * t.strings.len()
        + JOINED_TEXTS * t.strings.len() * t.separators.len()
        + t.separators.len() * part_lengths(t).len()
        + t.separators.len() * split_tails(t).len()
}

/// The last parts of [`Text::Separated`]: `0`, `1`, `-1`, `1e308`, `true`, `false`, each
/// literal, and each integer literal and its neighbours, as text. None without an `all` or
/// `exists`.
pub(crate) fn split_tails(t: &Template) -> Vec<String> {
    if !t.quantified {
        return Vec::new();
    }
    let mut out: Vec<String> = ["0", "1", "-1", "1e308", "true", "false"]
        .map(str::to_owned)
        .into();
    out.extend(t.strings.iter().cloned());
    for &k in &t.ints {
        for n in [k, k.saturating_add(1), k.saturating_sub(1)] {
            out.push(n.to_string());
        }
    }
    out
}

/// The text option `Separated(separator, tail)`, where `separator` indexes
/// [`Template::separators`] and `tail` [`split_tails`].
pub(crate) fn text_separated(t: &Template, separator: usize, tail: usize) -> u8 {
    let n = TEXTS
        + LITERAL_TEXTS * t.strings.len()
        + JOINED_TEXTS * t.strings.len() * t.separators.len()
        + t.separators.len() * part_lengths(t).len()
        + separator * split_tails(t).len()
        + tail;
    u8::try_from(n).unwrap_or(0)
}

/// The lengths of the parts of [`Text::Parts`]: one byte, and one more than each of the
/// lengths a length test names (positive integer literals up to 256, at most four;
/// `size() > 3` holds on parts of four).
fn part_lengths(t: &Template) -> Vec<u64> {
    let mut out = vec![1];
    for n in t.ints.iter().filter_map(|&i| u64::try_from(i).ok()) {
        if (1..=256).contains(&n) && !out.contains(&(n + 1)) && out.len() < 5 {
            out.push(n + 1);
        }
    }
    out
}

/// The text option `Parts(separator, part_lengths[length])`, where `separator` indexes
/// [`Template::separators`].
pub(crate) fn text_parts(t: &Template, separator: usize, length: usize) -> u8 {
    let n = TEXTS
        + LITERAL_TEXTS * t.strings.len()
        + JOINED_TEXTS * t.strings.len() * t.separators.len()
        + separator * part_lengths(t).len()
        + length;
    u8::try_from(n).unwrap_or(0)
}

/// How many part lengths [`text_parts`] takes.
pub(crate) fn part_length_options(t: &Template) -> usize {
    part_lengths(t).len()
}

/// Text choices that need no literal, those made once per literal, and those made once per
/// literal and separator.
const TEXTS: usize = 7;
const LITERAL_TEXTS: usize = 6;
const JOINED_TEXTS: usize = 2;
/// The text option of the empty string.
pub(crate) const TEXT_EMPTY: u8 = 2;
/// The text option of `"` repeated.
pub(crate) const TEXT_QUOTES: u8 = 3;
/// The text option of distinct characters.
pub(crate) const TEXT_DISTINCT: u8 = 4;
/// The text option of an entry's value made of its key, then filler.
pub(crate) const TEXT_KEY_FIRST: u8 = 5;
/// The text option of an entry's value made of filler, then its key.
pub(crate) const TEXT_KEY_LAST: u8 = 6;

/// The text option `Tokens(literal)` or `Halves(literal)` of the `literal`-th literal.
pub(crate) fn text_of_literal(literal: usize, halves: bool) -> u8 {
    let n = TEXTS + LITERAL_TEXTS * literal + if halves { 5 } else { 4 };
    u8::try_from(n).unwrap_or(0)
}

/// The text option `Prefix(literal)` or `Suffix(literal)` of the `literal`-th literal.
pub(crate) fn text_affixed(literal: usize, suffix: bool) -> u8 {
    let n = TEXTS + LITERAL_TEXTS * literal + if suffix { 2 } else { 1 };
    u8::try_from(n).unwrap_or(0)
}

/// The text option `Joined(literal, separator, spaced)`, where `separator` indexes
/// [`Template::separators`].
pub(crate) fn text_joined(t: &Template, literal: usize, separator: usize, spaced: bool) -> u8 {
    let n = TEXTS
        + LITERAL_TEXTS * t.strings.len()
        + JOINED_TEXTS * (separator * t.strings.len() + literal)
        + usize::from(spaced);
    u8::try_from(n).unwrap_or(0)
}

/// The tail options: none (0), then, only when the expression has an `all` or `exists`, the
/// empty string, one filler character, the element at its least size as the best guesses
/// render it with every leaf the empty string (`{"name":""}`, which ends
/// `items.all(x, x.name.size() > 3)`) or the number 0, each literal after or before one filler
/// character, and every scalar but the slot's own number (the literals among
/// them, `0`, `true`, `false`…), the element with every string leaf each literal
/// exactly (`{"name":"a"}`, which ends `items.exists(x, x.name == 'a')`), and last, when the
/// expression compares fields with literals, the element with every string leaf under such a
/// field the literal compared with it and the others empty (`{"kind":"b","name":"a"}`, which
/// ends `items.exists(x, x.name == 'a' && x.kind == 'b')`).
/// After many elements on which the predicate errors (`0` for a string test), a tail that
/// decides the loop (`''` makes `f.size() > 3` false and ends an `all` without the error;
/// `'v'` makes `t.startsWith('v')` true and ends an `exists`) makes an event the filter runs on
/// to the end: `all` and `exists` go on past an error and a decisive result absorbs it
/// (`eval/loops.rs`, `quantifier`).
pub(crate) fn tail_options(t: &Template) -> usize {
    if t.quantified {
        TAILS + 3 * t.strings.len() + scalar_options(t) - 1 + usize::from(!t.compared.is_empty())
    } else {
        1
    }
}

/// Tail options that need no literal: none, the empty string, one filler character, the
/// element with empty or zero leaves.
const TAILS: usize = 5;

pub(crate) fn scalar_options(t: &Template) -> usize {
    SCALARS + t.strings.len() + 3 * t.ints.len()
}

/// Spreads that make no difference for a slot render the same event, which the search
/// recognises without evaluating it again. After the fixed ones, `Small(n)` for each of the
/// lengths the filter's integer literals name ([`small_lengths`]).
pub(crate) fn spread_options(t: &Template) -> usize {
    SPREADS.len() + small_lengths(t).len()
}

/// The extra bytes a length test against an integer literal asks for: a string of filler and
/// `n` more bytes is `n + 1` long, so `size() > n` holds on it (a key of `n` filler bytes and
/// its one-character word, likewise). Positive literals up to 256, at most four.
fn small_lengths(t: &Template) -> Vec<u64> {
    t.ints
        .iter()
        .filter_map(|&i| u64::try_from(i).ok())
        .filter(|&n| (2..=256).contains(&n) && n != 10)
        .take(4)
        .collect()
}

/// The spread option of one element of half the bytes and many small ones.
pub(crate) const SPREAD_LOPSIDED: u8 = 7;
/// The spread option of entries with long keys.
pub(crate) const SPREAD_LONG_KEYS: u8 = 8;
/// The spread option of distinct elements.
pub(crate) const SPREAD_DISTINCT: u8 = 10;
/// The spread option of one element of a few bytes more than its least.
pub(crate) const SPREAD_SMALL: u8 = 1;
/// The spread option of one entry whose key and value share the bytes.
pub(crate) const SPREAD_BALANCED: u8 = 11;

/// Renders events from one template.
#[derive(Clone)]
pub(crate) struct Renderer<'t> {
    pub(crate) template: &'t Template,
    pub(crate) choices: &'t Choices,
    /// How many bytes the elements before a list's largest constant index may take
    /// ([`MAX_BEFORE_INDEX`], or the attributes' bound).
    before_index: u64,
    fillers: Vec<char>,
    /// The characters generated keys are made of: none of a literal's, so that no key equals a
    /// literal or a key joined with one (`k == j + 'x'` never holds and never stops a loop).
    key_chars: Vec<char>,
    /// [`Renderer::least`] of each slot rendered so far, by the slot's address: rendering a
    /// slot asks the least size of the slots inside it, and those of theirs, so without it the
    /// work doubled at every level of nesting (`a.exists(x0, x0.exists(x1, …))`, twelve levels:
    /// 2.8 s a witness).
    least_sizes: std::cell::RefCell<HashMap<usize, u64>>,
    /// How many slots this renderer has rendered (what the nesting test counts).
    rendered: std::cell::Cell<usize>,
}

impl<'t> Renderer<'t> {
    pub(crate) fn new(template: &'t Template, choices: &'t Choices) -> Self {
        let used: String = template.strings.concat();
        let mut fillers: Vec<char> = ('a'..='z').filter(|c| !used.contains(*c)).collect();
        if fillers.is_empty() {
            fillers = ('a'..='z').collect();
        }
        let mut key_chars: Vec<char> = KEY_ALPHABET
            .chars()
            .filter(|c| !used.contains(*c))
            .collect();
        if key_chars.len() < 8 {
            key_chars = KEY_ALPHABET.chars().collect();
        }
        Renderer {
            template,
            choices,
            before_index: MAX_BEFORE_INDEX,
            fillers,
            key_chars,
            least_sizes: std::cell::RefCell::new(HashMap::new()),
            rendered: std::cell::Cell::new(0),
        }
    }

    /// The event's compact JSON within `bounds`.
    pub(crate) fn event(&self, bounds: &EventBounds) -> String {
        // Every constant index written out when the attributes' least size allows it
        // (`l[2000]` after 2,000 elements `0`), else those within `MAX_BEFORE_INDEX` bytes.
        // Only for a template with such a list (one rendering more per candidate).
        if bounds.attributes > self.before_index && reaches(&self.template.attributes, &|i| i > 0) {
            let wide = Renderer {
                before_index: bounds.attributes,
                // Least sizes depend on how many elements before an index are written.
                least_sizes: std::cell::RefCell::new(HashMap::new()),
                ..self.clone()
            };
            if wide.least(&self.template.attributes) <= bounds.attributes {
                return wide.event_within(bounds);
            }
        }
        self.event_within(bounds)
    }

    fn event_within(&self, bounds: &EventBounds) -> String {
        let t = self.template;
        let mut out = String::from("{");
        for (i, (name, slot)) in crate::eval::HEADER_FIELDS
            .iter()
            .zip(&t.headers)
            .enumerate()
        {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{name}\":");
            self.string(slot, bounds.header_field, &mut out);
        }
        out.push_str(",\"text\":");
        self.string(&t.text, bounds.text, &mut out);
        out.push_str(",\"attributes\":");
        let least = self.least(&t.attributes);
        let extra = bounds.attributes.saturating_sub(least);
        self.render_top(&t.attributes, extra, &mut out);
        out.push('}');
        out
    }

    /// A header or the text: a JSON string of at most `max` decoded bytes.
    fn string(&self, slot: &Slot, max: u64, out: &mut String) {
        let mut text = match self.kind(slot) {
            Kind::Str => self.content(slot, max, Measure::Decoded),
            _ => String::new(),
        };
        while text.len() as u64 > max {
            text.pop();
        }
        let _ = write!(out, "{}", serde_json::Value::String(text));
    }

    fn kind(&self, slot: &Slot) -> Kind {
        let i = self.choices.kind[slot.id] as usize;
        slot.kinds.get(i).copied().unwrap_or(slot.kinds[0])
    }

    fn text(&self, slot: &Slot) -> Text {
        if !slot.used {
            return Text::Empty;
        }
        // The cheap tries first: the search may stop before the last options.
        let i = self.choices.text[slot.id] as usize;
        let n = self.template.strings.len();
        match i {
            0 => Text::Filler,
            1 => Text::MemberKey,
            2 => Text::Empty,
            3 => Text::Quotes,
            4 => Text::Distinct,
            5 => Text::KeyFirst,
            6 => Text::KeyLast,
            _ if n == 0 => Text::Filler,
            _ if i
                >= TEXTS
                    + LITERAL_TEXTS * n
                    + JOINED_TEXTS * n * self.template.separators.len() =>
            {
                let j = i
                    - TEXTS
                    - LITERAL_TEXTS * n
                    - JOINED_TEXTS * n * self.template.separators.len();
                let lengths = part_lengths(self.template);
                let parts = self.template.separators.len() * lengths.len();
                if j >= parts {
                    let tails = split_tails(self.template).len().max(1);
                    let j = j - parts;
                    return match self.template.separators.get(j / tails) {
                        Some(&separator) => Text::Separated(separator, j % tails),
                        None => Text::Filler,
                    };
                }
                match self.template.separators.get(j / lengths.len()) {
                    Some(&separator) => Text::Parts(separator, lengths[j % lengths.len()]),
                    None => Text::Filler,
                }
            }
            _ if i >= TEXTS + LITERAL_TEXTS * n => {
                let j = i - TEXTS - LITERAL_TEXTS * n;
                let (pair, spaced) = (j / JOINED_TEXTS, j % JOINED_TEXTS == 1);
                match self.template.separators.get(pair / n) {
                    Some(&separator) if separator != pair % n => {
                        Text::Joined(pair % n, separator, spaced)
                    }
                    _ => Text::Filler,
                }
            }
            _ => {
                let literal = ((i - TEXTS) / LITERAL_TEXTS).min(n - 1);
                match (i - TEXTS) % LITERAL_TEXTS {
                    0 => Text::Exact(literal),
                    1 => Text::Prefix(literal),
                    2 => Text::Suffix(literal),
                    3 => Text::Repeat(literal),
                    4 => Text::Tokens(literal),
                    _ => Text::Halves(literal),
                }
            }
        }
    }

    fn spread(&self, slot: &Slot) -> Spread {
        let i = self.choices.spread[slot.id] as usize;
        match SPREADS.get(i) {
            Some(Spread::Pointer) if slot.member.is_none() && slot.element.is_none() => {
                Spread::Least
            }
            Some(s) => *s,
            None => small_lengths(self.template)
                .get(i - SPREADS.len())
                .map_or(Spread::Least, |&n| Spread::Small(n)),
        }
    }

    fn filler(&self, slot: &Slot) -> char {
        self.fillers[slot.id % self.fillers.len()]
    }

    /// Whether the slot is read under the current choices, from its parent's point of view:
    /// the slots a choice can matter for.
    pub(crate) fn active(&self, slot: &Slot, out: &mut Vec<usize>) {
        out.push(slot.id);
        match self.kind(slot) {
            Kind::Object => {
                for (_, child) in &slot.keys {
                    self.active(child, out);
                }
                for child in [&slot.element, &slot.value, &slot.member]
                    .into_iter()
                    .flatten()
                {
                    self.active(child, out);
                }
            }
            Kind::List => {
                for child in [&slot.element, &slot.member]
                    .into_iter()
                    .flatten()
                    .map(Box::as_ref)
                    .chain(slot.at.iter().map(|(_, c)| c))
                {
                    self.active(child, out);
                }
            }
            Kind::Str | Kind::Scalar => {}
        }
    }

    /// The least size of a slot's rendering.
    pub(crate) fn least(&self, slot: &Slot) -> u64 {
        let key = std::ptr::from_ref(slot) as usize;
        if let Some(&known) = self.least_sizes.borrow().get(&key) {
            return known;
        }
        let mut s = String::new();
        self.render(slot, 0, &mut s);
        let size = s.len() as u64;
        self.least_sizes.borrow_mut().insert(key, size);
        size
    }

    /// Whether extra bytes make the slot larger.
    fn growable(&self, slot: &Slot) -> bool {
        match self.kind(slot) {
            Kind::Str => !matches!(
                self.text(slot),
                Text::Empty | Text::Exact(_) | Text::MemberKey
            ),
            Kind::List => true,
            Kind::Object => {
                slot.element.is_some()
                    || slot.member.is_some()
                    || slot.keys.iter().any(|(_, c)| self.growable(c))
                    || (slot.used && slot.keys.is_empty())
            }
            Kind::Scalar => false,
        }
    }

    /// Renders a slot at its least size plus at most `extra` bytes.
    pub(crate) fn render(&self, slot: &Slot, extra: u64, out: &mut String) {
        self.rendered.set(self.rendered.get() + 1);
        match self.kind(slot) {
            Kind::Str => self.render_str(slot, extra, out),
            Kind::Scalar => self.render_scalar(slot, out),
            Kind::List => self.render_list(slot, extra, out),
            Kind::Object => self.render_object(slot, extra, false, out),
        }
    }

    fn render_top(&self, slot: &Slot, extra: u64, out: &mut String) {
        self.render_object(slot, extra, true, out);
    }

    fn render_str(&self, slot: &Slot, extra: u64, out: &mut String) {
        let text = self.content(slot, extra, Measure::Json);
        let _ = write!(out, "{}", serde_json::Value::String(text));
    }

    /// The contents of a string slot given `extra` bytes beyond its least size, counted as
    /// `measure` says.
    fn content(&self, slot: &Slot, extra: u64, measure: Measure) -> String {
        self.content_of(slot, extra, measure, None)
    }

    /// [`Self::content`], for the value of an entry under `key` when one is given (the texts
    /// made of the key need it; without one they are filler).
    fn content_of(&self, slot: &Slot, extra: u64, measure: Measure, key: Option<&str>) -> String {
        let strings = &self.template.strings;
        let fill =
            |n: u64| -> String { std::iter::repeat_n(self.filler(slot), n as usize).collect() };
        match self.text(slot) {
            Text::Filler => fill(1 + extra),
            // The value takes the key's bytes and what is left of its own beyond them.
            Text::KeyFirst | Text::KeyLast if key.is_some() => {
                let key = key.unwrap_or_default();
                let pad = fill(extra.saturating_sub(measure.str_len(key)));
                if self.text(slot) == Text::KeyFirst {
                    format!("{key}{pad}")
                } else {
                    format!("{pad}{key}")
                }
            }
            Text::KeyFirst | Text::KeyLast => fill(1 + extra),
            Text::Joined(i, j, spaced) => {
                let unit = if spaced {
                    format!("{}{}{}", strings[i], self.filler(slot), strings[j])
                } else {
                    format!("{}{}", strings[i], strings[j])
                };
                text::repeat_str(&unit, extra, measure)
            }
            Text::Separated(separator, k) => {
                // Within `extra` with the tail and one separator left out, so that a text cut
                // to its bound keeps its tail.
                let tails = split_tails(self.template);
                let tail = tails.get(k).map_or("", String::as_str);
                let separator = &strings[separator];
                let room = extra.saturating_sub(measure.str_len(tail) + measure.str_len(separator));
                format!("{}{tail}", text::repeat_str(separator, room, measure))
            }
            Text::Parts(separator, n) => {
                let unit = format!("{}{}", fill(n), strings[separator]);
                text::repeat_str(&unit, extra, measure)
            }
            Text::Empty => String::new(),
            Text::Exact(i) => strings[i].clone(),
            Text::Prefix(i) => format!("{}{}", strings[i], fill(extra)),
            Text::Suffix(i) => format!("{}{}", fill(extra), strings[i]),
            Text::Repeat(i) => repeated(&strings[i], extra),
            Text::MemberKey => self.template.member_key.clone(),
            Text::Quotes => text::repeat_char(text::QUOTE, extra, measure),
            Text::Distinct => text::distinct_chars(extra, measure),
            Text::Tokens(i) => text::tokens(&strings[i], extra, measure),
            Text::Halves(i) => text::halves(&strings[i], self.filler(slot), extra, measure),
        }
    }

    fn render_scalar(&self, slot: &Slot, out: &mut String) {
        let value = self.scalar(slot, self.choices.scalar[slot.id] as usize);
        let _ = write!(out, "{value}");
    }

    /// The `i`-th scalar option of a slot.
    fn scalar(&self, slot: &Slot, i: usize) -> serde_json::Value {
        let t = self.template;
        match i {
            0 => serde_json::json!(slot.id),
            1 => serde_json::json!(0),
            2 => serde_json::json!(1),
            3 => serde_json::json!(-1),
            4 => serde_json::json!(true),
            5 => serde_json::json!(false),
            6 => serde_json::Value::Null,
            7 => serde_json::json!(0.5),
            // The doubles whose text (`%s`, `string`) is longest for their JSON: 309 and 327
            // bytes out of 5 and 7.
            8 => serde_json::json!(1e308),
            9 => serde_json::json!(-5e-324),
            _ if i < SCALARS + t.strings.len() => {
                serde_json::Value::String(t.strings[i - SCALARS].clone())
            }
            _ => {
                let j = i - SCALARS - t.strings.len();
                let k = t.ints.get(j / 3).copied().unwrap_or(0);
                serde_json::json!(match j % 3 {
                    0 => k,
                    1 => k.saturating_add(1),
                    _ => k.saturating_sub(1),
                })
            }
        }
    }

    /// The JSON of the tail of a container whose elements (or entries' values) are `element`,
    /// if the container's tail choice sets one.
    fn tail(&self, container: &Slot, element: Option<&Slot>) -> Option<String> {
        let element = element?;
        let i = usize::from(self.choices.tail[container.id]);
        if i == 0 || !self.template.quantified {
            return None;
        }
        let strings = &self.template.strings;
        let filler = self.filler(element);
        let value = match i {
            1 => serde_json::Value::String(String::new()),
            2 => serde_json::Value::String(filler.to_string()),
            3 | 4 => {
                let mut leaves = Choices::first(self.template);
                set_leaves(element, i == 4, TEXT_EMPTY, &mut leaves);
                let mut out = String::new();
                Renderer::new(self.template, &leaves).render(element, 0, &mut out);
                return Some(out);
            }
            _ if i < TAILS + 2 * strings.len() => {
                let j = i - TAILS;
                let literal = &strings[j / 2];
                serde_json::Value::String(if j % 2 == 0 {
                    format!("{literal}{filler}")
                } else {
                    format!("{filler}{literal}")
                })
            }
            _ if i < TAILS + 2 * strings.len() + scalar_options(self.template) - 1 => {
                self.scalar(element, i - TAILS - 2 * strings.len() + 1)
            }
            _ if i + 1 - TAILS - 2 * strings.len() - scalar_options(self.template)
                == strings.len() =>
            {
                let mut leaves = Choices::first(self.template);
                set_compared_leaves(element, None, self.template, &mut leaves);
                let mut out = String::new();
                Renderer::new(self.template, &leaves).render(element, 0, &mut out);
                return Some(out);
            }
            _ => {
                let j = i + 1 - TAILS - 2 * strings.len() - scalar_options(self.template);
                let exact = u8::try_from(TEXTS + LITERAL_TEXTS * j).unwrap_or(0);
                let mut leaves = Choices::first(self.template);
                set_leaves(element, false, exact, &mut leaves);
                let mut out = String::new();
                Renderer::new(self.template, &leaves).render(element, 0, &mut out);
                return Some(out);
            }
        };
        Some(value.to_string())
    }

    /// A list: its elements within `extra` bytes, then its tail if it has one (the tail is part
    /// of its least size, and the comma before it is taken from `extra`).
    fn render_list(&self, slot: &Slot, extra: u64, out: &mut String) {
        out.push('[');
        let tail = self.tail(slot, slot.element.as_deref());
        let budget = if tail.is_some() {
            extra.saturating_sub(1)
        } else {
            extra
        };
        let mut first = true;
        self.list_items(slot, budget, &mut first, out);
        if let Some(tail) = tail {
            if !first {
                out.push(',');
            }
            out.push_str(&tail);
        }
        out.push(']');
    }

    /// The elements of a list within `budget` bytes (commas between them included).
    fn list_items(&self, slot: &Slot, budget: u64, first: &mut bool, out: &mut String) {
        let spread = self.spread(slot);
        if !slot.at.is_empty() {
            self.indexed(slot, spread, budget, first, out);
            return;
        }
        let mut budget = budget;
        let heavy = slot
            .member
            .as_deref()
            .or(slot.value.as_deref())
            .or(slot.element.as_deref());
        if let (Spread::Pointer, Some(member)) = (spread, heavy) {
            let least = self.least(member);
            if budget >= least {
                let share = (budget - least) / 2;
                let start = out.len();
                self.render(member, share, out);
                budget -= (out.len() - start) as u64;
                *first = false;
            }
            // Every other element is `0`: an index of the member.
            while budget >= 2 || (*first && budget >= 1) {
                if *first {
                    out.push('0');
                    budget -= 1;
                    *first = false;
                } else {
                    out.push_str(",0");
                    budget -= 2;
                }
            }
            return;
        }
        let Some(element) = &slot.element else {
            // Nothing iterates the list, but a function of the whole may read its elements
            // (`format`, `string`, `==`): they are the slot's scalar, `0` by default.
            let one = self.opaque_scalar(slot);
            let n = if spread == Spread::Distinct {
                u64::MAX
            } else {
                (budget + 1) / (one.len() as u64 + 1)
            };
            let mut left = budget;
            for i in 0..n {
                let item = if spread == Spread::Distinct {
                    i.to_string()
                } else {
                    one.clone()
                };
                let size = item.len() as u64 + u64::from(i > 0);
                if size > left {
                    break;
                }
                left -= size;
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&item);
                *first = false;
            }
            return;
        };
        self.repeat(element, spread, budget, first, out);
    }

    /// The elements of a list read at constant indices (`l[0]`, `l[1]`): every element up to
    /// the largest index (the elements before it within [`MAX_BEFORE_INDEX`] bytes) is written
    /// whatever the budget (they are part
    /// of the list's least size), each indexed one from its own slot and the others as small as
    /// the list's element can be (`0` when nothing iterates the list). The indexed slots that
    /// grow share `budget` as members under constant keys share an object's (by the worst
    /// monomial's weights, else evenly; with the spread `One` all to the last index, with
    /// `Lopsided` all to the first, with `Two` or `Balanced` evenly; with `Distinct` and no
    /// element slot, half the bytes, the rest to more elements after them, the slot's scalar),
    /// and a list that is also iterated gives its element's
    /// copies, after them, a share by the element's weight.
    fn indexed(
        &self,
        slot: &Slot,
        spread: Spread,
        budget: u64,
        first: &mut bool,
        out: &mut String,
    ) {
        let small = match &slot.element {
            Some(element) => {
                let mut one = String::new();
                self.render(element, 0, &mut one);
                one
            }
            None => "0".to_owned(),
        };
        let before = |i: i64| u64::try_from(i).map(|i| i.saturating_mul(small.len() as u64 + 1));
        let at: Vec<&(i64, Slot)> = slot
            .at
            .iter()
            .filter(|(i, _)| before(*i).is_ok_and(|b| b <= self.before_index))
            .collect();
        let mut growers: Vec<(usize, f64)> = at
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| self.growable(c))
            .map(|(k, (_, c))| (k, c.weight))
            .collect();
        match spread {
            Spread::One => growers = growers.split_off(growers.len().saturating_sub(1)),
            Spread::Lopsided => growers.truncate(1),
            Spread::Two | Spread::Balanced => growers.iter_mut().for_each(|(_, w)| *w = 1.0),
            _ => {}
        }
        // Nothing iterates the list, but a function of the whole may read all its elements
        // (`a[0] in a`): with `Distinct`, the indexed ones share half the bytes and as many of
        // the slot's scalar as fit follow them; with `Small(n)`, each takes `n` bytes more than
        // its least (`[0]`: `in` charges every element at the needle's size, up to the list's)
        // and the elements after them the rest.
        let trailing =
            slot.element.is_none() && matches!(spread, Spread::Distinct | Spread::Small(_));
        let budget_at = match spread {
            _ if !trailing => budget,
            Spread::Small(n) => {
                for (_, w) in &mut growers {
                    *w = 1.0;
                }
                n.saturating_mul(growers.len() as u64).min(budget)
            }
            _ => budget / 2,
        };
        let rest = at.len();
        if let Some(element) = &slot.element {
            growers.push((rest, element.weight));
        }
        let shares = self.shares(&growers, budget_at, false);
        let share = |k: usize| shares.iter().find(|(j, _)| *j == k).map_or(0, |(_, s)| *s);
        let last = at.iter().map(|(i, _)| *i).max().unwrap_or(-1);
        for i in 0..=last {
            if !*first {
                out.push(',');
            }
            *first = false;
            match at.iter().position(|(j, _)| *j == i) {
                Some(k) => self.render(&at[k].1, share(k), out),
                None => out.push_str(&small),
            }
        }
        if trailing {
            let one = self.opaque_scalar(slot);
            let mut left = budget.saturating_sub(shares.iter().map(|(_, s)| s).sum());
            while left > one.len() as u64 {
                out.push(',');
                out.push_str(&one);
                left -= one.len() as u64 + 1;
            }
        }
        if let Some(element) = &slot.element {
            let left = share(rest);
            // Each copy after the indexed elements takes a comma more.
            let budget = if *first { left } else { left.saturating_sub(1) };
            if !*first && left > 0 {
                let mut items = String::new();
                let mut fresh = true;
                self.repeat(element, spread, budget, &mut fresh, &mut items);
                if !items.is_empty() {
                    out.push(',');
                    out.push_str(&items);
                }
            } else {
                self.repeat(element, spread, budget, first, out);
            }
        }
    }

    /// Renders copies of `element` spread over `budget` bytes (commas included): `n` copies of
    /// `s` bytes take `n·s + n − 1`.
    fn repeat(
        &self,
        element: &Slot,
        spread: Spread,
        budget: u64,
        first: &mut bool,
        out: &mut String,
    ) {
        let least = self.least(element);
        let grows = self.growable(element);
        let fit = |size: u64| (budget + 1) / (size + 1);
        if spread == Spread::Distinct && matches!(self.kind(element), Kind::Scalar | Kind::Str) {
            let strings = self.kind(element) == Kind::Str;
            let mut left = budget;
            for i in 0u64.. {
                let item = if strings {
                    serde_json::Value::String(text::nth_word(i + 1, &self.key_chars)).to_string()
                } else {
                    i.to_string()
                };
                let size = item.len() as u64 + u64::from(!*first);
                if size > left {
                    break;
                }
                left -= size;
                if !*first {
                    out.push(',');
                }
                *first = false;
                out.push_str(&item);
            }
            return;
        }
        if spread == Spread::Lopsided && grows && budget / 2 >= least {
            let mut one = String::new();
            self.render(element, budget / 2 - least, &mut one);
            if !*first {
                out.push(',');
            }
            *first = false;
            out.push_str(&one);
            // Each small one takes its least size and a comma.
            let n = budget.saturating_sub(one.len() as u64) / (least + 1);
            self.copies(element, n, 0, first, out);
            return;
        }
        let (count, extra) = match spread {
            Spread::One | Spread::Two | Spread::Balanced if grows => {
                let n = if spread == Spread::Two { 2 } else { 1 };
                let size = ((budget + 1) / n).saturating_sub(1);
                if size >= least {
                    (n, size - least)
                } else {
                    (fit(least), 0)
                }
            }
            Spread::Small(k) if grows => (fit(least + k), k),
            Spread::Root if grows => {
                let k = (budget as f64).sqrt() as u64;
                (fit(least + k), k)
            }
            _ => (fit(least), 0),
        };
        self.copies(element, count, extra, first, out);
    }

    fn copies(&self, element: &Slot, n: u64, extra: u64, first: &mut bool, out: &mut String) {
        let mut one = String::new();
        self.render(element, extra, &mut one);
        for _ in 0..n {
            if !*first {
                out.push(',');
            }
            *first = false;
            out.push_str(&one);
        }
    }

    fn render_object(&self, slot: &Slot, extra: u64, top: bool, out: &mut String) {
        out.push('{');
        let mut first = true;
        let mut entry = |out: &mut String, key: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            let _ = write!(out, "{}:", serde_json::Value::String(key.to_owned()));
        };
        // Who shares the extra bytes: growable members, the computed-key member, the entries.
        let mut growers: Vec<(usize, f64)> = Vec::new();
        for (i, (_, child)) in slot.keys.iter().enumerate() {
            if self.growable(child) {
                growers.push((i, child.weight));
            }
        }
        let member_at = slot.keys.len();
        if let Some(member) = &slot.member {
            growers.push((member_at, member.weight));
        }
        let entries_at = member_at + 1;
        if let Some(element) = &slot.element {
            let w = element.weight + slot.value.as_ref().map_or(0.0, |v| v.weight);
            growers.push((entries_at, w));
        }
        // A map read at a computed key and nothing else: other entries beside that member make
        // every look-up probe more keys (`m[?event.text]` in a map of many short keys), so
        // they take a share of the bytes when nothing weighs more.
        let filler = slot.used && slot.element.is_none() && slot.member.is_some();
        if filler {
            growers.push((entries_at, 0.0));
        }
        let shares = self.shares(&growers, extra, top);
        let share = |i: usize| shares.iter().find(|(j, _)| *j == i).map_or(0, |(_, s)| *s);
        for (i, (key, child)) in slot.keys.iter().enumerate() {
            entry(out, key);
            self.render(child, share(i), out);
        }
        if let Some(member) = &slot.member {
            entry(out, &self.template.member_key);
            self.render(member, share(member_at), out);
        }
        if filler && share(entries_at) > 0 {
            let taken: Vec<&str> = slot
                .keys
                .iter()
                .map(|(k, _)| k.as_str())
                .chain([self.template.member_key.as_str()])
                .collect();
            let value = self.opaque_scalar(slot);
            self.keyed(
                ("", ""),
                &|_, _| value.clone(),
                share(entries_at),
                &taken,
                None,
                first,
                out,
            );
        } else if slot.element.is_some() {
            let taken: Vec<&str> = slot
                .keys
                .iter()
                .map(|(k, _)| k.as_str())
                .chain([self.template.member_key.as_str()])
                .collect();
            self.entries(slot, share(entries_at), &taken, first, out);
        } else if slot.used && slot.keys.is_empty() && slot.member.is_none() {
            // An object read only as a whole (`format`, `string`, `==`): entries of the slot's
            // scalar under generated keys.
            let value = self.opaque_scalar(slot);
            if self.spread(slot) == Spread::One {
                // One entry holding a list of them: a list element takes fewer bytes than an
                // entry.
                let mut list = String::from("[");
                let n = extra.saturating_sub(8) / (value.len() as u64 + 1);
                for i in 0..n {
                    if i > 0 {
                        list.push(',');
                    }
                    list.push_str(&value);
                }
                list.push(']');
                self.keyed(("", ""), &|_, _| list.clone(), extra, &[], None, first, out);
            } else {
                self.keyed(
                    ("", ""),
                    &|_, _| value.clone(),
                    extra,
                    &[],
                    None,
                    first,
                    out,
                );
            }
        }
        out.push('}');
    }

    /// Splits `extra` among the growers by weight (evenly when no weight is set), or as the
    /// split choice says at the top level.
    fn shares(&self, growers: &[(usize, f64)], extra: u64, top: bool) -> Vec<(usize, u64)> {
        if growers.is_empty() {
            return Vec::new();
        }
        let split = if top { self.choices.split } else { 0 };
        let weights: Vec<f64> = match split {
            0 if growers.iter().any(|(_, w)| *w > 0.0) => growers.iter().map(|(_, w)| *w).collect(),
            0 | 1 => vec![1.0; growers.len()],
            k => (0..growers.len())
                .map(|i| if i == usize::from(k) - 2 { 1.0 } else { 0.0 })
                .collect(),
        };
        let total: f64 = weights.iter().sum();
        growers
            .iter()
            .zip(&weights)
            .map(|((i, _), w)| {
                let s = if total > 0.0 {
                    (extra as f64 * w / total).floor() as u64
                } else {
                    0
                };
                (*i, s)
            })
            .collect()
    }

    /// The entries of an iterated object: distinct generated keys (after the element slot's
    /// literal prefix, if it has one, or a run of filler when the spread asks for long keys)
    /// with values from the value slot.
    fn entries(&self, slot: &Slot, budget: u64, taken: &[&str], first: bool, out: &mut String) {
        let element = slot
            .element
            .as_deref()
            .expect("entries need an element slot");
        let spread = self.spread(slot);
        let pad =
            |n: u64| -> String { std::iter::repeat_n(self.filler(element), n as usize).collect() };
        // A key is a literal it must start with, filler, the word that makes it distinct, and
        // a literal it must end with: keys pass the tests a loop makes of them (`startsWith`,
        // `endsWith`, `size() > 2`) and none stops an `all`.
        let (starts, ends) = match (self.kind(element), self.text(element)) {
            (Kind::Str, Text::Exact(i) | Text::Prefix(i)) => {
                (self.template.strings[i].as_str(), "")
            }
            (Kind::Str, Text::Suffix(i)) => ("", self.template.strings[i].as_str()),
            _ => ("", ""),
        };
        let filler = match spread {
            Spread::Small(k) => pad(k),
            Spread::LongKeys => pad((budget as f64).sqrt() as u64),
            Spread::TwoKeys => pad((budget / 2).saturating_sub(12)),
            // The key's JSON and the value's share the entry's bytes (`"K":"V"` takes five
            // more); the key's generated word adds one byte.
            Spread::Balanced => pad((budget.saturating_sub(6) / 2).saturating_sub(1)),
            _ => String::new(),
        };
        let prefix = format!("{starts}{filler}");
        let Some(v) = &slot.value else {
            self.keyed(
                (&prefix, ends),
                &|_, _| "0".to_owned(),
                budget,
                taken,
                None,
                first,
                out,
            );
            return;
        };
        // The last entry's key: the literals the keys start and end with around the first free
        // word, without the filler the spread adds (which grows with the budget: the tail is
        // part of the object's least size, so its size must not).
        let tail = self.tail(slot, Some(v)).map(|value| {
            // Words differ, so one of the first `taken.len() + 1` is free.
            let key = (1..=taken.len() as u64 + 1)
                .map(|n| format!("{starts}{}{ends}", text::nth_word(n, &self.key_chars)))
                .find(|k| !taken.contains(&k.as_str()))
                .unwrap_or_default();
            (key, value)
        });
        let least = self.least(v);
        let extra = match spread {
            Spread::Small(k) => k,
            Spread::Root => (budget as f64).sqrt() as u64,
            Spread::Two => (budget / 2).saturating_sub(least + 8),
            Spread::One => budget.saturating_sub(least + 8),
            Spread::Balanced => {
                budget.saturating_sub((prefix.len() + ends.len()) as u64 + least + 5)
            }
            _ => 0,
        };
        let heavy =
            (spread == Spread::Lopsided && budget / 2 > least + 8).then(|| budget / 2 - least - 8);
        // A value made of its entry's key is rendered per entry; any other once, and once more
        // for the heavy first entry.
        let by_key =
            self.kind(v) == Kind::Str && matches!(self.text(v), Text::KeyFirst | Text::KeyLast);
        let mut common = String::new();
        self.render(v, extra, &mut common);
        let mut first_one = String::new();
        if let Some(h) = heavy {
            self.render(v, h, &mut first_one);
        }
        let value = |key: &str, first: bool| -> String {
            let extra = if first { heavy.unwrap_or(extra) } else { extra };
            if by_key {
                let text = self.content_of(v, extra, Measure::Json, Some(key));
                serde_json::Value::String(text).to_string()
            } else if first && heavy.is_some() {
                first_one.clone()
            } else {
                common.clone()
            }
        };
        self.keyed(
            (&prefix, ends),
            &value,
            budget,
            taken,
            tail.as_ref().map(|(k, v)| (k.as_str(), v.as_str())),
            first,
            out,
        );
    }

    /// Entries under distinct generated keys (each `prefix`, a short word, then `suffix`) while
    /// they fit in `budget`: the value of each is `value(key, whether it is the first entry)`,
    /// as JSON. With a `tail` (a key and the JSON of a value), one more entry last: its size does
    /// not depend on the budget, it is part of the object's least size, and only the comma
    /// before it is taken from `budget`. No other entry takes its key.
    #[allow(clippy::too_many_arguments)]
    fn keyed(
        &self,
        (prefix, suffix): (&str, &str),
        value: &dyn Fn(&str, bool) -> String,
        budget: u64,
        taken: &[&str],
        tail: Option<(&str, &str)>,
        mut first: bool,
        out: &mut String,
    ) {
        // The empty key is skipped: it is the one key a predicate on keys (`k.size() > 0`,
        // `k != ''`) most often fails on, and a failing predicate ends `all` at once.
        let word = |n: u64| format!("{prefix}{}{suffix}", text::nth_word(n, &self.key_chars));
        let tail_key = tail.map(|(key, _)| key);
        let mut left = if tail.is_some() {
            budget.saturating_sub(1)
        } else {
            budget
        };
        let mut entry = 0u64;
        let mut n = 1u64;
        loop {
            let key = word(n);
            n += 1;
            if taken.contains(&key.as_str()) || tail_key == Some(key.as_str()) {
                continue;
            }
            let value = value(&key, entry == 0);
            entry += 1;
            let key_json = serde_json::Value::String(key).to_string();
            let size = key_json.len() as u64 + 1 + value.len() as u64 + u64::from(!first);
            if size > left {
                break;
            }
            left -= size;
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&key_json);
            out.push(':');
            out.push_str(&value);
        }
        if let Some((key, tail)) = tail {
            if !first {
                out.push(',');
            }
            let _ = write!(out, "{}:{tail}", serde_json::Value::String(key.to_owned()));
        }
    }

    /// The element of a list, or the value of an entry of an object, that nothing iterates:
    /// the slot's scalar choice, `0` at first.
    fn opaque_scalar(&self, slot: &Slot) -> String {
        let mut one = String::new();
        if self.choices.scalar[slot.id] == 0 {
            one.push('0');
        } else {
            self.render_scalar(slot, &mut one);
        }
        one
    }
}

/// Every leaf below `slot` (a slot with no members, elements or values) made the empty string,
/// or the number 0 when `zero`, where its kinds allow; a string leaf takes the text option
/// `text` (the empty string, a literal exactly).
/// Whether `slot` or a slot below it is a list read at a constant index `far` says is.
fn reaches(slot: &Slot, far: &dyn Fn(i64) -> bool) -> bool {
    slot.at.iter().any(|(i, _)| far(*i))
        || slot.keys.iter().any(|(_, c)| reaches(c, far))
        || [&slot.element, &slot.value, &slot.member]
            .into_iter()
            .flatten()
            .any(|c| reaches(c, far))
        || slot.at.iter().any(|(_, c)| reaches(c, far))
}

/// Every leaf below `slot` (reached under the constant key `key`, if any) what the comparison
/// of that key with a literal holds on ([`Template::compared`]): the string literal exactly, or
/// the integer literal or a neighbour; any other string leaf empty.
fn set_compared_leaves(slot: &Slot, key: Option<&str>, t: &Template, choices: &mut Choices) {
    let leaf = slot.keys.is_empty()
        && slot.element.is_none()
        && slot.value.is_none()
        && slot.member.is_none()
        && slot.at.is_empty();
    if leaf {
        let compared = key
            .and_then(|key| t.compared.iter().find(|(f, _)| f == key))
            .map(|(_, c)| *c);
        let kind = |kind: Kind| slot.kinds.iter().position(|k| *k == kind);
        match (compared, kind(Kind::Scalar), kind(Kind::Str)) {
            (Some(Compared::Int(j, more)), Some(i), _) => {
                choices.kind[slot.id] = u8::try_from(i).unwrap_or(0);
                let option = SCALARS + t.strings.len() + 3 * j + usize::from(more);
                choices.scalar[slot.id] = u8::try_from(option).unwrap_or(0);
            }
            (Some(Compared::Text(j)), _, Some(i)) => {
                choices.kind[slot.id] = u8::try_from(i).unwrap_or(0);
                choices.text[slot.id] = u8::try_from(TEXTS + LITERAL_TEXTS * j).unwrap_or(0);
            }
            (_, _, Some(i)) => {
                choices.kind[slot.id] = u8::try_from(i).unwrap_or(0);
                choices.text[slot.id] = TEXT_EMPTY;
            }
            _ => {}
        }
    }
    for (key, child) in &slot.keys {
        set_compared_leaves(child, Some(key), t, choices);
    }
    for child in [&slot.element, &slot.value, &slot.member]
        .into_iter()
        .flatten()
        .map(Box::as_ref)
        .chain(slot.at.iter().map(|(_, c)| c))
    {
        set_compared_leaves(child, None, t, choices);
    }
}

fn set_leaves(slot: &Slot, zero: bool, text: u8, choices: &mut Choices) {
    let leaf = slot.keys.is_empty()
        && slot.element.is_none()
        && slot.value.is_none()
        && slot.member.is_none()
        && slot.at.is_empty();
    if leaf {
        let kind = if zero { Kind::Scalar } else { Kind::Str };
        if let Some(i) = slot.kinds.iter().position(|k| *k == kind) {
            choices.kind[slot.id] = u8::try_from(i).unwrap_or(0);
            if zero {
                choices.scalar[slot.id] = SCALAR_ZERO;
            } else {
                choices.text[slot.id] = text;
            }
        }
    }
    for (_, child) in &slot.keys {
        set_leaves(child, zero, text, choices);
    }
    for child in [&slot.element, &slot.value, &slot.member]
        .into_iter()
        .flatten()
        .map(Box::as_ref)
        .chain(slot.at.iter().map(|(_, c)| c))
    {
        set_leaves(child, zero, text, choices);
    }
}

/// The characters generated keys are made of: those that JSON writes as one byte each.
const KEY_ALPHABET: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.~!#$%&'()*+,/:;<=>?@[]^`{|} ";

/// `literal` repeated into its own JSON length plus `extra` bytes (at least once), so the
/// rendered string takes no more room than `Prefix` would.
fn repeated(literal: &str, extra: u64) -> String {
    let escaped = serde_json::Value::String(literal.to_owned())
        .to_string()
        .len()
        - 2;
    if escaped == 0 {
        return String::new();
    }
    let times = (escaped as u64 + extra) / escaped as u64;
    literal.repeat(usize::try_from(times).unwrap_or(1).max(1))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::check::Env;
    use crate::eval::Event;
    use crate::witness::plan;
    use crate::{Options, compile, cost};

    /// The witness template of a filter under `options`.
    fn template_of(source: &str, options: &Options) -> Template {
        let checked = compile(source, &Env::filter(), options).expect("compiles");
        let estimate = cost::estimate(&checked, &Env::filter(), options);
        plan::template(&estimate.derivation, &checked.ast)
    }

    /// Rendering a slot asks the least size of the slots inside it; those are worked out once
    /// per renderer, so a witness of nested loops renders a number of slots that grows with the
    /// event, not with 2 to the nesting (twelve `exists` nested took 2.8 s a witness), and a
    /// nested two-variable loop's template stops repeating the element's subtree as the value's
    /// past `MAX_SLOTS` (twelve levels took 35 s and 4.3 GB).
    #[test]
    fn nested_loops_render_and_plan_in_bounded_work() {
        let options = Options::default();
        let depth = 12;
        let mut one = String::from("event.attributes.a");
        for i in 0..depth {
            let _ = write!(one, ".exists(x{i}, x{i}");
        }
        one.push_str(" == 1");
        one.push_str(&")".repeat(depth));
        let template = template_of(&one, &options);
        let n = template.slots;
        for spread in 0..spread_options(&template) {
            let choices = Choices {
                kind: vec![0; n],
                text: vec![0; n],
                scalar: vec![SCALAR_ZERO; n],
                spread: vec![u8::try_from(spread).expect("few"); n],
                tail: vec![0; n],
                split: 0,
            };
            let renderer = Renderer::new(&template, &choices);
            let event = renderer.event(&options.bounds);
            assert!(event.len() <= 9000, "{}", event.len());
            assert!(
                renderer.rendered.get() < 20_000,
                "{one}: {} slots rendered",
                renderer.rendered.get()
            );
        }
        let mut pairs = String::from("event.attributes.m.exists(k0, v0, ");
        for i in 1..depth {
            let _ = write!(pairs, "v{}.exists(k{i}, v{i}, ", i - 1);
        }
        let _ = write!(pairs, "v{} == k{}", depth - 1, depth - 1);
        pairs.push_str(&")".repeat(depth));
        let template = template_of(&pairs, &options);
        assert!(template.slots <= 2 * plan::MAX_SLOTS, "{}", template.slots);
    }

    /// A tail is part of its container's least size, so every spread must leave room for it:
    /// the last entry's key once took the filler of the long-key spreads, and the event came out
    /// larger than the bounds (a candidate wasted, not an error anyone saw). Every spread, tail,
    /// kind and a few contents, on every slot at once, renders an event the reader accepts.
    #[test]
    fn every_tail_stays_within_the_bounds() {
        let options = Options::default();
        for source in [
            "event.attributes.m.all(k, v, v.startsWith(k))",
            "event.attributes.files.all(f, f.size() > 3 && f.endsWith('.go'))",
            "event.attributes.items.all(x, x.name.size() > 3)",
            "event.attributes.all(k, v, v.all(x, x.size() > 2))",
        ] {
            let template = template_of(source, &options);
            assert!(tail_options(&template) > 1, "{source}");
            let n = template.slots;
            for kind in 0..2u8 {
                for text in [0, TEXT_KEY_FIRST, TEXT_KEY_LAST] {
                    for spread in 0..spread_options(&template) {
                        for tail in 0..tail_options(&template) {
                            let choices = Choices {
                                kind: vec![kind; n],
                                text: vec![text; n],
                                scalar: vec![SCALAR_ZERO; n],
                                spread: vec![u8::try_from(spread).expect("few"); n],
                                tail: vec![u8::try_from(tail).expect("few"); n],
                                split: 0,
                            };
                            let event = Renderer::new(&template, &choices).event(&options.bounds);
                            let read = Event::from_json(&event, &options.bounds);
                            assert!(
                                read.is_ok(),
                                "{source}: {choices:?} renders {read:?}: {}",
                                &event[..event.len().min(200)]
                            );
                        }
                    }
                }
            }
        }
    }

    /// A list read at constant indices writes every element up to the largest index whatever
    /// its budget, so that part of its least size is capped: elements before a large index that
    /// would not fit the attributes' bound (objects before `a[1000]`) are not written. Every
    /// kind and spread, on every slot at once, renders an event the reader accepts.
    #[test]
    fn lists_indexed_by_constants_stay_within_the_bounds() {
        let options = Options::default();
        for source in [
            "event.attributes.a[0].contains(event.attributes.a[1])",
            "event.attributes.a[3].x.contains(event.attributes.a[1])",
            "event.attributes.a.all(e, e.x.size() > 0) && event.attributes.a[1000].x == ''",
            "event.attributes.a[4000] == 0 && event.attributes.a[1000].size() > 0",
        ] {
            let template = template_of(source, &options);
            assert!(!template.attributes.keys[0].1.at.is_empty(), "{source}");
            let n = template.slots;
            for kind in 0..4u8 {
                for spread in 0..spread_options(&template) {
                    let choices = Choices {
                        kind: vec![kind; n],
                        text: vec![0; n],
                        scalar: vec![0; n],
                        spread: vec![u8::try_from(spread).expect("few"); n],
                        tail: vec![0; n],
                        split: 0,
                    };
                    let event = Renderer::new(&template, &choices).event(&options.bounds);
                    let read = Event::from_json(&event, &options.bounds);
                    assert!(
                        read.is_ok(),
                        "{source}: {choices:?} renders {read:?}: {}",
                        &event[..event.len().min(200)]
                    );
                }
            }
        }
    }
}
