//! The search for the heaviest event of a template: coordinate ascent over the knobs (a
//! slot's kind, string content, scalar, spread, and the split of the attributes' budget), each
//! candidate rendered, bound as an event and evaluated with the meter. A candidate replaces the
//! best one when it is better: one that passes the limit beats one that does not (it proves a
//! refusal); below the limit, one the filter runs on without a runtime error beats one it fails
//! on (a witness that fails with "no matching overload" measures nothing a user would send);
//! then the costlier wins. The search ends when a whole pass improves nothing, the evaluation
//! budget is spent, or a candidate reaches the cap.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use super::plan::{Kind, Slot, Template};
use super::render::{
    Choices, Renderer, SCALAR_LONGEST, SCALAR_ZERO, SPREAD_BALANCED, SPREAD_DISTINCT,
    SPREAD_LONG_KEYS, SPREAD_LOPSIDED, SPREAD_ONE, SPREAD_POINTER, SPREAD_SMALL, TEXT_DISTINCT,
    TEXT_EMPTY, TEXT_KEY_FIRST, TEXT_KEY_LAST, TEXT_MEMBER_KEY, TEXT_QUOTES, part_length_options,
    scalar_options, split_tails, spread_options, tail_options, text_affixed, text_joined,
    text_of_literal, text_options, text_parts, text_separated,
};
use crate::cost::CostModel;
use crate::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use crate::{EventBounds, Options};

/// The best event found and what it cost.
pub(crate) struct Found {
    pub(crate) event: String,
    pub(crate) cost: u64,
    pub(crate) stopped: bool,
    pub(crate) failure: Option<String>,
    pub(crate) evaluations: usize,
}

/// How many of the heaviest starting points the search climbs from.
const CLIMBS: usize = 3;

/// By cost alone.
fn heavier(a: &Outcome, b: &Outcome) -> bool {
    a.cost > b.cost
}

/// A candidate: its choices, its event and what the filter did on it.
#[derive(Clone)]
struct Best {
    event: String,
    outcome: Outcome,
    state: Choices,
}

/// What one candidate did.
#[derive(Clone, Debug, Default)]
struct Outcome {
    /// Metered cost (past the cap when `stopped`).
    cost: u64,
    /// Stopped at the cap.
    stopped: bool,
    /// The runtime error it ended with, if any.
    failure: Option<String>,
}

impl Outcome {
    /// The order the search climbs: passing `limit` first, then running without error, then
    /// cost.
    fn rank(&self, limit: u64) -> (bool, bool, u64) {
        let proves = self.cost > limit;
        (proves, proves || self.failure.is_none(), self.cost)
    }
}

/// Which knob a candidate changes.
#[derive(Clone, Copy, Debug)]
enum Knob {
    Kind(usize),
    Text(usize),
    Scalar(usize),
    Spread(usize),
    Tail(usize),
    Split,
}

pub(crate) struct Search<'a> {
    pub(crate) template: &'a Template,
    pub(crate) program: &'a Program,
    pub(crate) bounds: EventBounds,
    pub(crate) model: CostModel,
    /// The cost limit the filter is checked against: a candidate past it proves a refusal.
    limit: u64,
    pub(crate) cap: u64,
    pub(crate) budget: usize,
    /// Cost units all evaluations may meter together.
    work: u64,
    /// Cost units metered so far.
    spent: u64,
    seen: HashMap<u64, Outcome>,
    evaluations: usize,
}

impl<'a> Search<'a> {
    pub(crate) fn new(
        template: &'a Template,
        program: &'a Program,
        options: &Options,
        cap: u64,
        budget: usize,
        work: u64,
    ) -> Self {
        Search {
            template,
            program,
            bounds: options.bounds,
            model: options.model,
            limit: options.limit,
            cap,
            budget,
            work,
            spent: 0,
            seen: HashMap::new(),
            evaluations: 0,
        }
    }

    /// Runs the coordinate ascent from the best of a few whole-template strategies, twice: from
    /// the best guesses, then from the best event the first round found (the strategies'
    /// contents over the kinds the climb chose: values that repeat their keys once the climb
    /// has made the range an object).
    pub(crate) fn run(mut self) -> Found {
        let slots = flatten(self.template);
        let first = Choices::first(self.template);
        let (event, outcome) = self.measure(&first);
        let mut top = Best {
            event,
            outcome,
            state: first.clone(),
        };
        let mut base = first;
        for _ in 0..2 {
            self.round(&base, &slots, &mut top);
            if top.outcome.stopped || self.proves(&top) || top.state == base {
                break;
            }
            base = top.state.clone();
        }
        Found {
            event: top.event,
            cost: top.outcome.cost,
            stopped: top.outcome.stopped,
            failure: top.outcome.failure,
            evaluations: self.evaluations,
        }
    }

    /// One round: the strategies over `base`, then climbs from the heaviest few.
    fn round(&mut self, base: &Choices, slots: &[&Slot], top: &mut Best) {
        let (event, outcome) = self.measure(base);
        let mut tried = vec![Best {
            event,
            outcome,
            state: base.clone(),
        }];
        for candidate in strategies(base, slots, self.template) {
            if top.outcome.stopped || self.exhausted() {
                break;
            }
            let (event, outcome) = self.measure(&candidate);
            let found = Best {
                event,
                outcome,
                state: candidate,
            };
            if self.better(&found.outcome, &top.outcome) {
                *top = found.clone();
            }
            tried.push(found);
        }
        // Climbing by cost alone first, then by the full order from where that ended: an event
        // that runs without error is often one knob away from a heavier one that fails (a
        // `draft` that must be a bool once `action` is the literal that reaches it), which a
        // climb by the full order alone never crosses. From the heaviest few distinct starts,
        // not one: each climb ends at a local optimum, and the heaviest start's is not always
        // the best (a map of strings found by one strategy, a list of numbers by another).
        tried.sort_by_key(|b| std::cmp::Reverse(b.outcome.cost));
        tried.dedup_by(|a, b| a.event == b.event);
        let mut ends: Vec<Choices> = Vec::new();
        for start in tried.into_iter().take(CLIMBS) {
            // Once a refusal is proved, the first climb's heaviest event is the witness: more
            // starts would only raise a cost already past the limit.
            let proved = !ends.is_empty() && self.proves(top);
            if top.outcome.stopped || proved || ends.contains(&start.state) {
                break;
            }
            let mut end = self.climb(start, slots, false, top);
            if end.outcome.failure.is_some() && !top.outcome.stopped {
                end = self.climb(end, slots, true, top);
            }
            ends.push(end.state);
        }
        // Last, by the full order from the best event the filter runs on, when no climb ended
        // there.
        if !top.outcome.stopped && !ends.contains(&top.state) {
            let start = top.clone();
            self.climb(start, slots, true, top);
        }
        // Then, for `all` and `exists`, many elements that the predicate errors on cheaply and
        // a tail that ends the loop ([`tails`]). After everything above, so that it only adds:
        // these candidates are alike and heavy, and as starts of the climbs above they would
        // crowd out the others. The climb from the best of them refines the tail and the rest.
        if top.outcome.stopped || self.proves(top) {
            return;
        }
        let before = top.state.clone();
        for candidate in tails(base, slots, self.template) {
            if top.outcome.stopped || self.exhausted() {
                break;
            }
            let (event, outcome) = self.measure(&candidate);
            if self.better(&outcome, &top.outcome) {
                *top = Best {
                    event,
                    outcome,
                    state: candidate,
                };
            }
        }
        if top.state != before && !top.outcome.stopped {
            let start = top.clone();
            self.climb(start, slots, true, top);
        }
    }

    /// Whether `best` costs more than the limit.
    fn proves(&self, best: &Best) -> bool {
        best.outcome.cost > self.limit
    }

    /// Whether the evaluation or work budget is spent.
    fn exhausted(&self) -> bool {
        self.evaluations >= self.budget || self.spent >= self.work
    }

    /// Coordinate ascent from `start`, by cost alone or by the full order ([`Outcome::rank`]);
    /// every candidate also competes for `top` by the full order.
    fn climb(&mut self, start: Best, slots: &[&Slot], by_rank: bool, top: &mut Best) -> Best {
        let mut best = start;
        'passes: for _ in 0..4 {
            let mut improved = false;
            for knob in self.knobs(&best.state, slots) {
                for option in 0..options(knob, self.template, slots) {
                    if top.outcome.stopped || self.exhausted() {
                        break 'passes;
                    }
                    let Some(candidate) = with(&best.state, knob, option) else {
                        continue;
                    };
                    let (event, outcome) = self.measure(&candidate);
                    let found = Best {
                        event,
                        outcome,
                        state: candidate,
                    };
                    if self.better(&found.outcome, &top.outcome) {
                        *top = found.clone();
                    }
                    let improves = if by_rank {
                        self.better(&found.outcome, &best.outcome)
                    } else {
                        heavier(&found.outcome, &best.outcome)
                    };
                    if improves {
                        best = found;
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
        best
    }

    /// By the full order: past the limit, then without error, then cost.
    fn better(&self, a: &Outcome, b: &Outcome) -> bool {
        a.rank(self.limit) > b.rank(self.limit)
    }

    /// The knobs that matter under `state`: those of the slots its kinds make reachable.
    fn knobs(&self, state: &Choices, slots: &[&Slot]) -> Vec<Knob> {
        let renderer = Renderer::new(self.template, state);
        let mut active = Vec::new();
        renderer.active(&self.template.text, &mut active);
        for h in &self.template.headers {
            renderer.active(h, &mut active);
        }
        renderer.active(&self.template.attributes, &mut active);
        // The slots the worst case weighs first, then the others in template order.
        active.sort_by(|a, b| slots[*b].weight.total_cmp(&slots[*a].weight));
        let mut knobs = vec![Knob::Split];
        for id in active {
            let slot = slots[id];
            if slot.kinds.len() > 1 {
                knobs.push(Knob::Kind(id));
            }
            let kind = slot
                .kinds
                .get(state.kind[id] as usize)
                .copied()
                .unwrap_or(slot.kinds[0]);
            match kind {
                Kind::Str if slot.used => knobs.push(Knob::Text(id)),
                Kind::Str => {}
                Kind::Scalar => knobs.push(Knob::Scalar(id)),
                Kind::List | Kind::Object => {
                    knobs.push(Knob::Spread(id));
                    // Only a tail a strategy set is refined: the other climbs stay as they
                    // were.
                    if state.tail[id] != 0 {
                        knobs.push(Knob::Tail(id));
                    }
                    // What fills a container nothing iterates.
                    if slot.used && slot.element.is_none() && slot.member.is_none() {
                        knobs.push(Knob::Scalar(id));
                    }
                }
            }
        }
        knobs
    }

    /// Renders, binds and evaluates one candidate: its text and what it did.
    fn measure(&mut self, choices: &Choices) -> (String, Outcome) {
        let text = Renderer::new(self.template, choices).event(&self.bounds);
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Some(outcome) = self.seen.get(&key) {
            return (text, outcome.clone());
        }
        self.evaluations += 1;
        let outcome = match Event::from_json(&text, &self.bounds) {
            Ok(event) => self.metered(&event),
            // A template that renders out of bounds is a defect of the renderer; the candidate
            // is worthless rather than fatal.
            Err(_) => Outcome {
                failure: Some("the event is out of bounds".to_owned()),
                ..Outcome::default()
            },
        };
        self.spent = self.spent.saturating_add(outcome.cost);
        self.seen.insert(key, outcome.clone());
        (text, outcome)
    }

    fn metered(&self, event: &Event) -> Outcome {
        let limits = Limits {
            cost: Some(self.cap),
            deadline: Duration::from_secs(24 * 3600),
            clock: Arc::new(ManualClock::new()),
            model: self.model,
            ..Limits::with_clock_of(Arc::new(ManualClock::new()))
        };
        match self.program.eval_event(event, &limits) {
            Ok(done) => Outcome {
                cost: done.cost,
                ..Outcome::default()
            },
            Err(EvalError::Stopped(Stop::CostLimit { cost })) => Outcome {
                cost,
                stopped: true,
                failure: None,
            },
            Err(e) => Outcome {
                cost: e.cost(),
                stopped: false,
                failure: Some(e.to_string()),
            },
        }
    }
}

/// Whole-template alternatives to the best guesses, tried before the knobs one by one: every
/// computed-key member reached (strings name it, lists hold it first), every container one
/// large element, every slot a string where it may be one, and then every string one of the
/// contents of `text.rs` (distinct characters, distinct tokens or one long part between each
/// literal, quotes), every container one large element among small ones or long keys, every
/// opaque value the double with the longest text. Each is one evaluation, and together they
/// reach in a few what one knob at a time reaches late or never (the contents that matter
/// are those of every string at once).
fn strategies(first: &Choices, slots: &[&Slot], template: &Template) -> Vec<Choices> {
    let has_member = slots.iter().any(|s| s.member.is_some());
    let mut out = Vec::new();
    if has_member {
        let mut members = first.clone();
        for slot in slots {
            if slot.kinds.contains(&Kind::Str) {
                members.text[slot.id] = TEXT_MEMBER_KEY;
            }
            if slot.member.is_some() {
                members.spread[slot.id] = SPREAD_POINTER;
            }
        }
        out.push(members);
    }
    let mut one = first.clone();
    let mut strings = first.clone();
    for slot in slots {
        one.spread[slot.id] = SPREAD_ONE;
        if let Some(i) = slot.kinds.iter().position(|k| *k == Kind::Str) {
            strings.kind[slot.id] = i as u8;
        }
    }
    out.push(one);
    out.push(strings);
    // The contents below matter once the slots that hold them are strings: each is tried over
    // the best guesses and over the same with every leaf a string where it may be one (a sort
    // key the guesses make a number, say).
    let mut leaves = first.clone();
    // And every leaf the number 0 where it may be a number: what keeps a loop going over
    // values compared with a literal (`m.exists(k, v, v > 3)`), where the guesses make the
    // values strings.
    let mut zeros = first.clone();
    for slot in slots {
        let leaf = slot.keys.is_empty()
            && slot.element.is_none()
            && slot.value.is_none()
            && slot.member.is_none()
            && slot.at.is_empty();
        if let (true, Some(i)) = (leaf, slot.kinds.iter().position(|k| *k == Kind::Str)) {
            leaves.kind[slot.id] = i as u8;
        }
        if let (true, Some(i)) = (leaf, slot.kinds.iter().position(|k| *k == Kind::Scalar)) {
            zeros.kind[slot.id] = i as u8;
            zeros.scalar[slot.id] = SCALAR_ZERO;
        }
    }
    out.push(zeros);
    // And every leaf a list where it may be one, at once: two values compared whole (`a ==
    // b`, `a[0] == a[1]`) walk the smaller's deep size, which lists of many small elements
    // make largest, but only when both are lists (a list against a string is one call), so no
    // single change finds it.
    let mut lists = first.clone();
    for slot in slots {
        let leaf = slot.keys.is_empty()
            && slot.element.is_none()
            && slot.value.is_none()
            && slot.member.is_none()
            && slot.at.is_empty();
        if let (true, Some(i)) = (leaf, slot.kinds.iter().position(|k| *k == Kind::List)) {
            lists.kind[slot.id] = i as u8;
        }
    }
    out.push(lists);
    let mut every = |f: &dyn Fn(&mut Choices, &Slot)| {
        for base in [first, &leaves] {
            let mut c = base.clone();
            for slot in slots {
                f(&mut c, slot);
            }
            out.push(c);
        }
    };
    every(&|c, s| c.text[s.id] = TEXT_DISTINCT);
    every(&|c, s| c.text[s.id] = TEXT_QUOTES);
    for (i, literal) in template.strings.iter().enumerate() {
        if literal.is_empty() {
            continue;
        }
        for halves in [false, true] {
            every(&|c, s| c.text[s.id] = text_of_literal(i, halves));
        }
    }
    every(&|c, s| c.spread[s.id] = SPREAD_LOPSIDED);
    every(&|c, s| c.spread[s.id] = SPREAD_LONG_KEYS);
    every(&|c, s| c.spread[s.id] = SPREAD_DISTINCT);
    every(&|c, s| c.scalar[s.id] = SCALAR_LONGEST);
    every(&|c, s| {
        c.scalar[s.id] = SCALAR_LONGEST;
        c.spread[s.id] = SPREAD_ONE;
    });
    // One entry whose key and value share the bytes: a search of one in the other.
    every(&|c, s| c.spread[s.id] = SPREAD_BALANCED);
    // Contents on which a test of every element passes, so that an `all` (or a `filter`
    // before the loop that costs) visits every one of them rather than stopping at the first:
    // values that repeat their key (`v.startsWith(k)`), strings that begin or end with a
    // literal and are one byte longer (`f.size() > 3 && f.endsWith('.go')`: the literal alone
    // is too short, and a longer element leaves room for fewer), and texts whose every part
    // once split is a literal (`split(' ').filter(w, w.startsWith('#'))`).
    every(&|c, s| c.text[s.id] = TEXT_KEY_FIRST);
    every(&|c, s| c.text[s.id] = TEXT_KEY_LAST);
    for i in 0..template.strings.len() {
        for suffix in [true, false] {
            every(&|c, s| {
                c.text[s.id] = text_affixed(i, suffix);
                c.spread[s.id] = SPREAD_SMALL;
            });
        }
    }
    for separator in 0..template.separators.len() {
        for i in 0..template.strings.len() {
            for spaced in [false, true] {
                every(&|c, s| c.text[s.id] = text_joined(template, i, separator, spaced));
            }
        }
        // Parts of filler as long as a length test asks, between separators: every part of
        // the split passes `w.size() > 3`.
        for length in 0..part_length_options(template) {
            every(&|c, s| c.text[s.id] = text_parts(template, separator, length));
        }
    }
    out
}

/// For an expression with `all` or `exists`: every iterated container as many of its least
/// elements as fit (the number `0`, or the empty string), on which the predicate errors or does
/// not decide the loop cheaply, then one tail that decides it, tried with every tail option.
/// `all` and `exists` go on past an element whose predicate errors, and a decisive result
/// after it absorbs the error (`eval/loops.rs`), so the filter runs on the event to its end
/// without an error: `files.all(f, f.size() > 3 && f.endsWith('.go'))` visits thousands of
/// `0` before `""` ends it, where names that pass the test take four bytes each and more.
fn tails(first: &Choices, slots: &[&Slot], template: &Template) -> Vec<Choices> {
    let mut out = Vec::new();
    if !template.quantified {
        return out;
    }
    // The same for the parts of a split: the separator repeated (every part empty, on which a
    // conversion or a test of the content errors or does not decide the loop), then a last
    // part that decides it (`"   …  0"` for `split(' ').all(w, int(w) > 0)`).
    for separator in 0..template.separators.len() {
        for tail in 0..split_tails(template).len() {
            let mut c = first.clone();
            for slot in slots {
                c.text[slot.id] = text_separated(template, separator, tail);
            }
            out.push(c);
        }
    }
    let containers: Vec<&Slot> = slots
        .iter()
        .copied()
        .filter(|s| {
            s.element.is_some()
                && s.kinds
                    .iter()
                    .any(|k| matches!(k, Kind::List | Kind::Object))
        })
        .collect();
    if containers.is_empty() {
        return out;
    }
    for zero in [true, false] {
        let mut least = first.clone();
        for container in &containers {
            least.spread[container.id] = 0;
            // The elements at constant indices are elements the loop visits too: as small.
            for element in [&container.element, &container.value]
                .into_iter()
                .flatten()
                .map(Box::as_ref)
                .chain(container.at.iter().map(|(_, c)| c))
            {
                // An element that is itself iterated, or holds under its keys one that is,
                // stays a container (the inner list of nested loops, the object of
                // `items.all(x, x.tags.all(…))`), filled as the loops over it have it.
                if holds_container(element, &containers) {
                    keep_containers(element, &containers, &mut least);
                    continue;
                }
                let kind = if zero { Kind::Scalar } else { Kind::Str };
                let Some(i) = element.kinds.iter().position(|k| *k == kind) else {
                    continue;
                };
                least.kind[element.id] = i as u8;
                if zero {
                    least.scalar[element.id] = SCALAR_ZERO;
                } else {
                    least.text[element.id] = TEXT_EMPTY;
                }
            }
        }
        for tail in 1..tail_options(template) {
            let mut c = least.clone();
            for container in &containers {
                c.tail[container.id] = u8::try_from(tail).unwrap_or(0);
            }
            out.push(c);
        }
        // Nested loops: the tail on one container only, every other one a single element
        // taking everything. `m.all(k, v, v.all(x, x.size() > 2))` on `{"a": [0, 0, …, ""]}`
        // visits every `0` of the one inner list (each an error the inner `all` goes on past)
        // and the inner tail `""` ends both loops without the error; a tail on the outer map
        // too would give it the value `""`, which the inner loop cannot iterate.
        if containers.len() > 1 {
            for one in &containers {
                for tail in 1..tail_options(template) {
                    let mut c = least.clone();
                    for container in &containers {
                        if container.id != one.id {
                            c.spread[container.id] = SPREAD_ONE;
                        }
                    }
                    c.tail[one.id] = u8::try_from(tail).unwrap_or(0);
                    out.push(c);
                }
            }
        }
    }
    out
}

/// Whether `slot` is one of `containers` or holds one under its constant keys.
fn holds_container(slot: &Slot, containers: &[&Slot]) -> bool {
    containers.iter().any(|c| c.id == slot.id)
        || slot
            .keys
            .iter()
            .any(|(_, c)| holds_container(c, containers))
}

/// Makes `slot`, and every slot on the way from it to the containers under its keys, a list or
/// an object (an object when it has constant keys).
fn keep_containers(slot: &Slot, containers: &[&Slot], choices: &mut Choices) {
    if !holds_container(slot, containers) {
        return;
    }
    let kind = if slot.keys.is_empty() {
        slot.kinds
            .iter()
            .position(|k| matches!(k, Kind::List | Kind::Object))
    } else {
        slot.kinds.iter().position(|k| *k == Kind::Object)
    };
    if let Some(i) = kind {
        choices.kind[slot.id] = i as u8;
    }
    for (_, child) in &slot.keys {
        keep_containers(child, containers, choices);
    }
}

/// Every slot of a template, indexed by id.
fn flatten(template: &Template) -> Vec<&Slot> {
    fn walk<'s>(slot: &'s Slot, out: &mut Vec<Option<&'s Slot>>) {
        out[slot.id] = Some(slot);
        for (_, child) in &slot.keys {
            walk(child, out);
        }
        for child in [&slot.element, &slot.value, &slot.member]
            .into_iter()
            .flatten()
            .map(Box::as_ref)
            .chain(slot.at.iter().map(|(_, c)| c))
        {
            walk(child, out);
        }
    }
    let mut out = vec![None; template.slots];
    walk(&template.text, &mut out);
    for h in &template.headers {
        walk(h, &mut out);
    }
    walk(&template.attributes, &mut out);
    out.into_iter()
        .map(|s| s.expect("every slot id is used"))
        .collect()
}

fn options(knob: Knob, template: &Template, slots: &[&Slot]) -> usize {
    match knob {
        Knob::Kind(id) => slots[id].kinds.len(),
        Knob::Text(_) => text_options(template),
        Knob::Scalar(_) => scalar_options(template),
        Knob::Spread(_) => spread_options(template),
        Knob::Tail(_) => tail_options(template),
        Knob::Split => 2 + template.attributes.keys.len().min(6),
    }
}

/// `state` with one knob set to `option`, or `None` when that is `state` itself.
fn with(state: &Choices, knob: Knob, option: usize) -> Option<Choices> {
    let option = u8::try_from(option).ok()?;
    let mut next = state.clone();
    let slot = match knob {
        Knob::Kind(id) => &mut next.kind[id],
        Knob::Text(id) => &mut next.text[id],
        Knob::Scalar(id) => &mut next.scalar[id],
        Knob::Spread(id) => &mut next.spread[id],
        Knob::Tail(id) => &mut next.tail[id],
        Knob::Split => &mut next.split,
    };
    if *slot == option {
        return None;
    }
    *slot = option;
    Some(next)
}
