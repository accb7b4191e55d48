//! Walking and compacting the node arena: the children of a node, and dropping the nodes a
//! macro discarded while keeping children before parents.

use crate::syntax::{ExprKind, Node, NodeId};

/// Rewrites every child id of `kind` through `map`.
fn remap(kind: &mut ExprKind, map: &[NodeId]) {
    let m = |id: &mut NodeId| *id = map[*id as usize];
    match kind {
        ExprKind::Literal(_) | ExprKind::Ident { .. } => {}
        ExprKind::Select { operand, .. }
        | ExprKind::OptSelect { operand, .. }
        | ExprKind::Has { operand, .. }
        | ExprKind::Unary { operand, .. } => m(operand),
        ExprKind::Call { target, args, .. } => {
            target.iter_mut().for_each(m);
            args.iter_mut().for_each(m);
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            m(lhs);
            m(rhs);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            m(cond);
            m(then);
            m(otherwise);
        }
        ExprKind::Index { operand, index } | ExprKind::OptIndex { operand, index } => {
            m(operand);
            m(index);
        }
        ExprKind::List { items, .. } => items.iter_mut().for_each(m),
        ExprKind::Map(entries) => entries.iter_mut().for_each(|e| {
            m(&mut e.key);
            m(&mut e.value);
        }),
        ExprKind::Struct { fields, .. } => fields.iter_mut().for_each(|f| m(&mut f.value)),
        ExprKind::Comprehension(c) => {
            m(&mut c.range);
            c.predicate.iter_mut().for_each(m);
            c.transform.iter_mut().for_each(m);
        }
    }
}

/// Drops the nodes a macro discarded, keeping children before parents and the root last.
pub(super) fn compact(nodes: Vec<Node>, root: NodeId) -> Vec<Node> {
    let mut reachable = vec![false; nodes.len()];
    reachable[root as usize] = true;
    for id in (0..nodes.len()).rev() {
        if reachable[id] {
            for child in nodes[id].kind.children() {
                reachable[child as usize] = true;
            }
        }
    }
    let mut map = vec![0; nodes.len()];
    let mut kept = Vec::with_capacity(nodes.len());
    for (id, mut node) in nodes.into_iter().enumerate() {
        if reachable[id] {
            remap(&mut node.kind, &map);
            map[id] = kept.len() as NodeId;
            kept.push(node);
        }
    }
    kept
}
