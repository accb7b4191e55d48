//! The witness template: one slot per group of event parts the estimate reasons about, built
//! from the estimate's derivation (its part tree, the uses of each part, the monomial of its
//! largest term) and the literals of the expression.
//!
//! A slot stands for one JSON value of the event: `event.text`, a header, `event.attributes`,
//! a member under a constant key, the elements of a list (every comprehension over the same list
//! contributes its element part to one slot), the value of the entries of an object, or a member
//! reached by a key computed at run time. Its candidate kinds come from how the expression uses
//! its parts, best guess first; the search (`search.rs`) picks among them.
//!
//! Extending: a new kind of part (`PartKind`) gets a branch in [`Builder::group`]; a new use
//! (`Uses`) a line in [`kinds`].

use std::collections::BTreeMap;

use crate::cost::Derivation;
use crate::cost::parts::{Part, PartKind, Uses};
use crate::cost::poly::Var;
use crate::syntax::{Ast, BinaryOp, ExprKind, Literal, MacroKind, NodeId};

/// What kind of JSON value a slot renders as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string.
    Str,
    /// A list of elements.
    List,
    /// An object: its constant-key members, a member for computed keys, and entries.
    Object,
    /// A number, bool or null.
    Scalar,
}

/// One JSON value of the witness event.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    /// Index of the slot's knobs in a choice vector.
    pub(crate) id: usize,
    /// Whether any part of the estimate stands for this slot (an unused header or text is
    /// left empty).
    pub(crate) used: bool,
    /// Candidate kinds, best guess first.
    pub(crate) kinds: Vec<Kind>,
    /// Members under constant keys.
    pub(crate) keys: Vec<(String, Slot)>,
    /// The elements of a list, or the keys of the entries of an object.
    pub(crate) element: Option<Box<Slot>>,
    /// The values of the entries of an object.
    pub(crate) value: Option<Box<Slot>>,
    /// A member reached by a key or index computed at run time.
    pub(crate) member: Option<Box<Slot>>,
    /// The elements of a list at constant indices (`l[0]`, `l[1]`), by index: each a slot of
    /// its own, sharing the list's bytes.
    pub(crate) at: Vec<(i64, Slot)>,
    /// How much of the worst-case monomial's degree lies inside this slot: the share of a
    /// shared budget the worst case gives it (AM-GM).
    pub(crate) weight: f64,
}

/// The template of a whole event.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    /// `event.text`.
    pub(crate) text: Slot,
    /// The five header fields, in [`crate::eval::HEADER_FIELDS`] order.
    pub(crate) headers: Vec<Slot>,
    /// `event.attributes`.
    pub(crate) attributes: Slot,
    /// Number of slots (choice vectors are this long per knob family).
    pub(crate) slots: usize,
    /// String literals of the expression, decoded.
    pub(crate) strings: Vec<String>,
    /// Which of `strings` the expression splits at (the argument of a `split`): the texts made
    /// of another literal and a separator repeated are the ones whose every part passes a test
    /// against that literal.
    pub(crate) separators: Vec<usize>,
    /// Integer literals of the expression.
    pub(crate) ints: Vec<i64>,
    /// Field names the expression compares or tests with a literal (`x.name == 'a'`,
    /// `x.kind.startsWith('b')`, `x['id'] in ['c']`, `x.n > 3`), each with what its first
    /// such comparison holds on: the element that ends `items.exists(x, x.name == 'a' &&
    /// x.kind == 'b')` holds a different literal under each key.
    pub(crate) compared: Vec<(String, Compared)>,
    /// The key under which objects hold their member for computed keys.
    pub(crate) member_key: String,
    /// Whether the expression has an `all` or `exists`: loops that go on past an element whose
    /// predicate errors and end without the error at an element that decides them (`false` for
    /// `all`, `true` for `exists`), so a container may end with a terminating element after
    /// many that make the predicate error cheaply (the tail knob of `render.rs`).
    pub(crate) quantified: bool,
}

/// Builds the template of the event a filter's worst case needs.
pub(crate) fn template(derivation: &Derivation, ast: &Ast) -> Template {
    let (strings, ints) = literals(ast);
    let separators = separators(ast, &strings);
    let compared = compared(ast, &strings, &ints);
    let (parts, anchor) = entry_sides_merged(&derivation.parts);
    let mut builder = Builder {
        parts: &parts,
        children: children(&parts),
        worst: derivation
            .worst
            .iter()
            .map(|&(v, e)| (anchor(v), f64::from(e)))
            .collect(),
        next: 0,
        pairs: ast
            .nodes()
            .iter()
            .any(|n| matches!(&n.kind, ExprKind::Comprehension(c) if c.var2.is_some())),
    };
    let root = |name: &str| {
        derivation
            .parts
            .iter()
            .position(|p| p.parent.is_none() && p.name == format!("event.{name}"))
            .map(|v| vec![v as Var])
            .unwrap_or_default()
    };
    let text = builder.group(&root("text"), Some(Kind::Str));
    let headers = crate::eval::HEADER_FIELDS
        .iter()
        .map(|h| builder.group(&root(h), Some(Kind::Str)))
        .collect();
    let attributes = builder.group(&root("attributes"), Some(Kind::Object));
    // The computed-key member is written beside the members under constant keys, so its key
    // must be none of them (an event with one key twice is refused), nor a literal of the filter
    // (which a computed key may equal).
    let mut constant_keys = Vec::new();
    collect_keys(&attributes, &mut constant_keys);
    // One more candidate than there are names to avoid: one of them is free.
    let taken = strings.len() + constant_keys.len();
    let member_key = (0..=taken + 2)
        .map(|n| match n {
            0 => "m".to_owned(),
            1 => "mm".to_owned(),
            n => format!("m{}", n - 2),
        })
        .find(|k| !strings.iter().any(|s| s == k) && !constant_keys.contains(&k.as_str()))
        .unwrap_or_default();
    let quantified = ast.nodes().iter().any(|n| {
        matches!(&n.kind, ExprKind::Comprehension(c)
            if matches!(c.kind, MacroKind::All | MacroKind::Exists))
    });
    Template {
        text,
        headers,
        attributes,
        slots: builder.next,
        strings,
        separators,
        ints,
        compared,
        member_key,
        quantified,
    }
}

/// What a field compared with a literal holds on ([`Template::compared`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compared {
    /// The string literal `strings[i]` itself.
    Text(usize),
    /// The integer literal `ints[i]` (0), one more (1) or one less (2): what `==`; `>`, `>=`
    /// and `!=`; and `<` and `<=` hold on.
    Int(usize, u8),
}

/// The field names (`x.name`, `x['name']`) a literal is compared with (`==`, `in` a list
/// literal, and for an integer `!=`, `<`…) or tests them (`startsWith`, `endsWith`, `contains`, `matches` with the field
/// the receiver), each with what its first comparison holds on, in the order of the expression.
fn compared(ast: &Ast, strings: &[String], ints: &[i64]) -> Vec<(String, Compared)> {
    let field = |id| match ast.kind(id) {
        ExprKind::Select { field, .. } => Some(field.to_string()),
        ExprKind::Index { index, .. } => match ast.kind(*index) {
            ExprKind::Literal(Literal::String(s)) => Some(s.to_string()),
            _ => None,
        },
        _ => None,
    };
    let text = |id| match ast.kind(id) {
        ExprKind::Literal(Literal::String(s)) => strings.iter().position(|t| t == &**s),
        _ => None,
    };
    let int = |id| match ast.kind(id) {
        ExprKind::Literal(Literal::Int(i)) => ints.iter().position(|j| j == i),
        ExprKind::Literal(Literal::Uint(u)) => {
            let i = i64::try_from(*u).ok()?;
            ints.iter().position(|j| *j == i)
        }
        _ => None,
    };
    // What the field must be for the comparison to hold, the literal on the right (`x.n > 3`:
    // one more), or on the left (`3 > x.n`: one less).
    let holds = |op: BinaryOp, literal: NodeId, right: bool| -> Option<Compared> {
        // A string `!=` holds on the empty string every other leaf is.
        if let Some(i) = text(literal) {
            return (op == BinaryOp::Eq).then_some(Compared::Text(i));
        }
        let i = int(literal)?;
        let more = match (op, right) {
            (BinaryOp::Eq, _) => 0,
            (BinaryOp::Ne | BinaryOp::Gt | BinaryOp::Ge, true)
            | (BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le, false) => 1,
            (BinaryOp::Lt | BinaryOp::Le, true) | (BinaryOp::Gt | BinaryOp::Ge, false) => 2,
            _ => return None,
        };
        Some(Compared::Int(i, more))
    };
    let mut out: Vec<(String, Compared)> = Vec::new();
    for node in ast.nodes() {
        let pair = match &node.kind {
            ExprKind::Binary {
                op: BinaryOp::In,
                lhs,
                rhs,
            } => match (field(*lhs), ast.kind(*rhs)) {
                (Some(f), ExprKind::List { items, .. }) => {
                    let Some(first) = items.first() else {
                        continue;
                    };
                    match (text(*first), int(*first)) {
                        (Some(i), _) => (f, Compared::Text(i)),
                        (_, Some(i)) => (f, Compared::Int(i, 0)),
                        _ => continue,
                    }
                }
                _ => continue,
            },
            ExprKind::Binary { op, lhs, rhs } => match (field(*lhs), field(*rhs)) {
                (Some(f), _) => match holds(*op, *rhs, true) {
                    Some(c) => (f, c),
                    None => continue,
                },
                (_, Some(f)) => match holds(*op, *lhs, false) {
                    Some(c) => (f, c),
                    None => continue,
                },
                _ => continue,
            },
            ExprKind::Call {
                target: Some(target),
                function,
                args,
                ..
            } if matches!(
                &**function,
                "startsWith" | "endsWith" | "contains" | "matches"
            ) && args.len() == 1 =>
            {
                match (field(*target), text(args[0])) {
                    (Some(f), Some(i)) => (f, Compared::Text(i)),
                    _ => continue,
                }
            }
            _ => continue,
        };
        if !out.iter().any(|(f, _)| *f == pair.0) {
            out.push(pair);
        }
    }
    out
}

/// Every constant key of the objects below `slot`.
fn collect_keys<'s>(slot: &'s Slot, out: &mut Vec<&'s str>) {
    for (key, child) in &slot.keys {
        out.push(key);
        collect_keys(child, out);
    }
    for child in [&slot.element, &slot.value, &slot.member]
        .into_iter()
        .flatten()
        .map(Box::as_ref)
        .chain(slot.at.iter().map(|(_, c)| c))
    {
        collect_keys(child, out);
    }
}

struct Builder<'a> {
    parts: &'a [Part],
    children: Vec<Vec<Var>>,
    worst: Vec<(Var, f64)>,
    next: usize,
    /// Whether the expression has a two-variable comprehension (`m.exists(k, v, …)`).
    pairs: bool,
}

/// The most slots a template makes before it stops giving a two-variable loop's value a slot
/// of its own ([`Builder::group`]).
pub(crate) const MAX_SLOTS: usize = 256;

impl Builder<'_> {
    /// The slot of a group of parts that stand for the same JSON value.
    fn group(&mut self, vars: &[Var], fixed: Option<Kind>) -> Slot {
        let id = self.next;
        self.next += 1;
        let mut uses = Uses::NONE;
        let mut keys: BTreeMap<String, Vec<Var>> = BTreeMap::new();
        let mut ats: BTreeMap<i64, Vec<Var>> = BTreeMap::new();
        let (mut elements, mut members, mut values) = (Vec::new(), Vec::new(), Vec::new());
        let mut object = false;
        for &v in vars {
            let part = &self.parts[v as usize];
            uses = uses.with(part.uses);
            object |= part.object;
            for &c in &self.children[v as usize] {
                match &self.parts[c as usize].kind {
                    PartKind::Key(k) => keys.entry(k.to_string()).or_default().push(c),
                    PartKind::Element => {
                        elements.push(c);
                        // The values of an object's entries are children of its elements.
                        values.extend(
                            self.children[c as usize]
                                .iter()
                                .copied()
                                .filter(|&g| self.parts[g as usize].kind == PartKind::Value),
                        );
                    }
                    PartKind::Member => members.push(c),
                    // An element at a constant index is a slot of its own, as a member under a
                    // constant key is.
                    PartKind::At(i) => ats.entry(*i).or_default().push(c),
                    PartKind::Value | PartKind::Root | PartKind::Index | PartKind::Item => {}
                }
            }
        }
        let weight = self.weight(vars);
        let keys: Vec<(String, Slot)> = keys
            .into_iter()
            .map(|(k, vs)| (k, self.group(&vs, None)))
            .collect();
        let at: Vec<(i64, Slot)> = ats
            .into_iter()
            .map(|(i, vs)| (i, self.group(&vs, None)))
            .collect();
        let element = (!elements.is_empty()).then(|| Box::new(self.group(&elements, None)));
        let value = if values.is_empty() {
            // A two-variable loop over an object binds the value of each entry to its second
            // variable, and the estimate gives both variables the entry's part (the key and the
            // value lie within its bytes), so the value's uses are among the element's: the
            // value gets a slot of its own grouped from the same parts, so that it may be a
            // string (or an object) while the key is one, and may differ from the key or repeat
            // it. Its weight is the element's already.
            // Past `MAX_SLOTS` slots it is not made: it repeats the element's whole subtree, so
            // nested two-variable loops (`m.exists(k0, v0, v0.exists(k1, v1, …))`) doubled the
            // template at every level (ten levels: 3 s and 282 MB a witness; twelve: 4.3 GB).
            (self.pairs && !elements.is_empty() && self.next < MAX_SLOTS).then(|| {
                let mut value = self.group(&elements, None);
                value.weight = 0.0;
                Box::new(value)
            })
        } else {
            Some(Box::new(self.group(&values, None)))
        };
        let member = (!members.is_empty()).then(|| Box::new(self.group(&members, None)));
        let kinds = match fixed {
            Some(kind) => vec![kind],
            None => kinds(
                uses,
                // A value part says the range is an object; the slot made for a two-variable
                // loop's value does not (the loop may range over a list).
                !keys.is_empty() || !values.is_empty() || object,
                element.is_some() || !at.is_empty(),
                member.is_some(),
            ),
        };
        Slot {
            id,
            used: !vars.is_empty(),
            kinds,
            keys,
            element,
            value,
            member,
            at,
            weight,
        }
    }

    /// The degree of the worst monomial inside these parts (their subtrees included).
    fn weight(&self, vars: &[Var]) -> f64 {
        self.worst
            .iter()
            .filter(|(w, _)| vars.iter().any(|&v| self.encloses(v, *w)))
            .map(|(_, e)| e)
            .sum()
    }

    fn encloses(&self, a: Var, mut b: Var) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.parts[b as usize].parent {
                Some(p) => b = p,
                None => return false,
            }
        }
    }
}

/// Candidate kinds from the uses, best guess first. An object when members are selected from
/// it; a list when it is iterated, searched by `in` or indexed at run time; a string when a
/// string operation reads it; a scalar last (the smallest value, and the one that makes string
/// operations fail without stopping a loop).
fn kinds(uses: Uses, keyed: bool, elements: bool, member: bool) -> Vec<Kind> {
    let mut out = Vec::new();
    let mut add = |k: Kind| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    if keyed {
        add(Kind::Object);
    }
    // A string that is split has the parts of the split as its elements, though nothing
    // iterates it or reads it as a list: a string first (`files.map(f, f.split('/')[0])`,
    // whose elements were tried only as lists, on which the split fails).
    if uses.contains(Uses::STRING)
        && !uses.contains(Uses::ITERATED)
        && !uses.contains(Uses::LIST)
        && !member
    {
        add(Kind::Str);
    }
    if uses.contains(Uses::ITERATED) || uses.contains(Uses::LIST) || elements || member {
        add(Kind::List);
    }
    if uses.contains(Uses::STRING) {
        add(Kind::Str);
    }
    // The container of `in` may be a map as well: a look-up of a long key in many short keys.
    if uses.contains(Uses::ITERATED) || uses.contains(Uses::LIST) || member {
        add(Kind::Object);
    }
    if uses.contains(Uses::COMPARED) || uses.contains(Uses::CONCATENATED) {
        add(Kind::Str);
        add(Kind::List);
    }
    add(Kind::Scalar);
    add(Kind::Str);
    // Last, a list read only as a whole: `format` and `string` of a list of long-printing
    // doubles write the most text for its bytes.
    add(Kind::List);
    out
}

/// The indices in `strings` of the literals the expression splits at: the literal argument of
/// every `split` call (at most four).
fn separators(ast: &Ast, strings: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for node in ast.nodes() {
        let ExprKind::Call { function, args, .. } = &node.kind else {
            continue;
        };
        if &**function != "split" {
            continue;
        }
        let Some(ExprKind::Literal(Literal::String(sep))) =
            args.first().map(|&a| &ast.node(a).kind)
        else {
            continue;
        };
        if let Some(i) = strings.iter().position(|s| s == &**sep) {
            if !out.contains(&i) && out.len() < 4 {
                out.push(i);
            }
        }
    }
    out
}

/// The children of every part, in creation order.
/// The parts with the key (or index) and value parts a two-variable loop binds (cost-model
/// version 6, [`PartKind::Index`], [`PartKind::Item`]) merged into their element: the template
/// gives an element's key and value their slots from the element's uses, as it did when both
/// variables were the element's part. Their own parts are cut off the tree; everything inside
/// them moves to the element. Also returns the map from a part to the part it now stands as.
///
/// The value part of an entry of an object known to be one (`event.attributes`) is the value of
/// that entry, as `m[k]` inside `m.exists(k, …)` was: it becomes a [`PartKind::Value`], whose
/// slot is the object's values.
fn entry_sides_merged(parts: &[Part]) -> (Vec<Part>, impl Fn(Var) -> Var + use<>) {
    let of_object = |p: &Part| {
        p.parent
            .and_then(|x| parts[x as usize].parent)
            .is_some_and(|o| parts[o as usize].object)
    };
    let is_side = |p: &Part| match p.kind {
        PartKind::Index => true,
        PartKind::Item => !of_object(p),
        _ => false,
    };
    let anchors: Vec<Var> = parts
        .iter()
        .enumerate()
        .map(|(v, p)| match p.parent {
            Some(x) if is_side(p) => x,
            _ => v as Var,
        })
        .collect();
    let mut out = parts.to_vec();
    for part in &mut out {
        if part.kind == PartKind::Item && of_object(part) {
            part.kind = PartKind::Value;
        }
    }
    for (v, part) in parts.iter().enumerate() {
        if is_side(part) {
            let x = anchors[v] as usize;
            out[x].uses = out[x].uses.with(part.uses);
            out[v].parent = None;
        } else if let Some(p) = part.parent {
            out[v].parent = Some(anchors[p as usize]);
        }
    }
    (out, move |v: Var| anchors[v as usize])
}

fn children(parts: &[Part]) -> Vec<Vec<Var>> {
    let mut out = vec![Vec::new(); parts.len()];
    for (v, part) in parts.iter().enumerate() {
        if let Some(p) = part.parent {
            out[p as usize].push(v as Var);
        }
    }
    out
}

/// The distinct string and integer literals of an expression (at most eight of each, the
/// shortest strings first), the contents the search tries for strings and numbers.
fn literals(ast: &Ast) -> (Vec<String>, Vec<i64>) {
    let mut strings: Vec<String> = Vec::new();
    let mut ints: Vec<i64> = Vec::new();
    for node in ast.nodes() {
        match &node.kind {
            ExprKind::Literal(Literal::String(s)) if !strings.iter().any(|t| t == &**s) => {
                strings.push(s.to_string());
            }
            ExprKind::Literal(Literal::Int(i)) if !ints.contains(i) => ints.push(*i),
            ExprKind::Literal(Literal::Uint(u)) => {
                if let Ok(i) = i64::try_from(*u) {
                    if !ints.contains(&i) {
                        ints.push(i);
                    }
                }
            }
            _ => {}
        }
    }
    strings.sort_by_key(String::len);
    strings.truncate(8);
    ints.truncate(8);
    (strings, ints)
}
