//! The search for the heaviest event of a template: coordinate ascent over the knobs (a
//! slot's kind, string content, scalar, spread, and the split of the attributes' budget), each
//! candidate rendered, bound as an event and evaluated with the meter. A candidate replaces the
//! best one when it costs strictly more; the search ends when a whole pass improves nothing, the
//! evaluation budget is spent, or a candidate reaches the cap.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use super::plan::{Kind, Slot, Template};
use super::render::{
    Choices, Renderer, SPREAD_ONE, SPREAD_POINTER, TEXT_MEMBER_KEY, scalar_options, spread_options,
    text_options,
};
use crate::EventBounds;
use crate::cost::CostModel;
use crate::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};

/// The best event found and what it cost.
pub(crate) struct Found {
    pub(crate) event: String,
    pub(crate) cost: u64,
    pub(crate) stopped: bool,
    pub(crate) evaluations: usize,
}

/// Which knob a candidate changes.
#[derive(Clone, Copy, Debug)]
enum Knob {
    Kind(usize),
    Text(usize),
    Scalar(usize),
    Spread(usize),
    Split,
}

pub(crate) struct Search<'a> {
    pub(crate) template: &'a Template,
    pub(crate) program: &'a Program,
    pub(crate) bounds: EventBounds,
    pub(crate) model: CostModel,
    pub(crate) cap: u64,
    pub(crate) budget: usize,
    /// Cost units all evaluations may meter together.
    work: u64,
    /// Cost units metered so far.
    spent: u64,
    seen: HashMap<u64, u64>,
    evaluations: usize,
}

impl<'a> Search<'a> {
    pub(crate) fn new(
        template: &'a Template,
        program: &'a Program,
        bounds: EventBounds,
        model: CostModel,
        cap: u64,
        budget: usize,
        work: u64,
    ) -> Self {
        Search {
            template,
            program,
            bounds,
            model,
            cap,
            budget,
            work,
            spent: 0,
            seen: HashMap::new(),
            evaluations: 0,
        }
    }

    /// Runs the coordinate ascent from the best of a few whole-template strategies.
    pub(crate) fn run(mut self) -> Found {
        let slots = flatten(self.template);
        let mut state = Choices::first(self.template);
        let (mut best_event, mut best) = self.measure(&state);
        for candidate in strategies(&state, &slots) {
            if self.spent >= self.work {
                break;
            }
            let (event, cost) = self.measure(&candidate);
            if cost.0 > best.0 {
                (best_event, best, state) = (event, cost, candidate);
            }
        }
        'passes: for _ in 0..4 {
            let mut improved = false;
            for knob in self.knobs(&state, &slots) {
                for option in 0..options(knob, self.template, &slots) {
                    if best.0 > self.cap
                        || self.evaluations >= self.budget
                        || self.spent >= self.work
                    {
                        break 'passes;
                    }
                    let Some(candidate) = with(&state, knob, option) else {
                        continue;
                    };
                    let (event, cost) = self.measure(&candidate);
                    if cost.0 > best.0 {
                        best = cost;
                        best_event = event;
                        state = candidate;
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
        Found {
            event: best_event,
            cost: best.0,
            stopped: best.1,
            evaluations: self.evaluations,
        }
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
                Kind::List | Kind::Object => knobs.push(Knob::Spread(id)),
            }
        }
        knobs
    }

    /// Renders, binds and evaluates one candidate: its text and (cost, stopped at the cap).
    fn measure(&mut self, choices: &Choices) -> (String, (u64, bool)) {
        let text = Renderer::new(self.template, choices).event(&self.bounds);
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = hasher.finish();
        if let Some(&cost) = self.seen.get(&key) {
            return (text, (cost, cost > self.cap));
        }
        self.evaluations += 1;
        let cost = match Event::from_json(&text, &self.bounds) {
            Ok(event) => self.metered(&event),
            // A template that renders out of bounds is a defect of the renderer; the candidate
            // is worthless rather than fatal.
            Err(_) => (0, false),
        };
        self.spent = self.spent.saturating_add(cost.0);
        self.seen.insert(key, cost.0);
        (text, cost)
    }

    fn metered(&self, event: &Event) -> (u64, bool) {
        let limits = Limits {
            cost: Some(self.cap),
            deadline: Duration::from_secs(24 * 3600),
            clock: Arc::new(ManualClock::new()),
            model: self.model,
            ..Limits::with_clock_of(Arc::new(ManualClock::new()))
        };
        match self.program.eval_event(event, &limits) {
            Ok(done) => (done.cost, false),
            Err(EvalError::Stopped(Stop::CostLimit { cost })) => (cost, true),
            Err(e) => (e.cost(), false),
        }
    }
}

/// Whole-template alternatives to the best guesses, tried before the knobs one by one: every
/// computed-key member reached (strings name it, lists hold it first), every container one
/// large element, every slot a string where it may be one.
fn strategies(first: &Choices, slots: &[&Slot]) -> Vec<Choices> {
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
    out
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
        Knob::Spread(id) => spread_options(slots[id]),
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
        Knob::Split => &mut next.split,
    };
    if *slot == option {
        return None;
    }
    *slot = option;
    Some(next)
}
