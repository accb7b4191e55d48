//! Optional types: `optional.of`, `optional.ofNonZeroValue`, `optional.none`, `hasValue`,
//! `value`, and `or` / `orValue`, which evaluate their argument only when the receiver is
//! empty (as cel-go does), so the argument's cost is not paid when it is not needed.

use std::sync::Arc;

use super::interp::{Eval, Interp, error, no_overload};
use super::value::Value;
use crate::cost::table;
use crate::syntax::NodeId;

/// Whether `value` is its type's zero value (what `optional.ofNonZeroValue` leaves out): null,
/// false, 0, an empty string, bytes, list or map, a zero duration, cel-go's zero timestamp
/// (0001-01-01T00:00:00Z), or an empty optional.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Duration(d) => d.nanos() == 0,
        Value::Timestamp(t) => *t == super::time::Timestamp::MIN,
        Value::Type(_) => false,
        Value::Optional(o) => o.is_none(),
    }
}

impl Interp<'_> {
    /// The global optional constructors.
    pub(crate) fn optional_global(&mut self, function: &str, args: &[Value]) -> Option<Eval> {
        let made = match (function, args) {
            ("optional.of", [x]) => Value::optional_of(x.clone()),
            ("optional.ofNonZeroValue", [x]) if is_zero(x) => Value::Optional(None),
            ("optional.ofNonZeroValue", [x]) => Value::optional_of(x.clone()),
            ("optional.none", []) => Value::Optional(None),
            _ => return None,
        };
        Some(
            self.charge(table::CALL)
                .and_then(|()| self.count_optional(&made))
                .map(|()| made),
        )
    }

    /// `hasValue()` and `value()` on an optional.
    pub(crate) fn optional_member(
        &mut self,
        function: &str,
        optional: Option<&Arc<Value>>,
        args: &[Value],
    ) -> Option<Eval> {
        let result = match (function, args) {
            ("hasValue", []) => Ok(Value::Bool(optional.is_some())),
            ("value", []) => optional
                .map(|v| (**v).clone())
                .ok_or_else(|| error("optional.none() dereference")),
            _ => return None,
        };
        Some(self.charge(table::CALL).and(result))
    }

    /// `opt.or(other)` and `opt.orValue(other)`: the receiver's value when it has one (the
    /// argument is then not evaluated), else the argument.
    pub(crate) fn optional_or(
        &mut self,
        function: &str,
        optional: Option<Arc<Value>>,
        arg: NodeId,
    ) -> Eval {
        self.charge(table::CALL)?;
        match (function, optional) {
            ("or", Some(value)) => Ok(Value::Optional(Some(value))),
            ("orValue", Some(value)) => Ok((*value).clone()),
            ("or", None) => match self.eval(arg)? {
                other @ Value::Optional(_) => Ok(other),
                other => Err(no_overload("or", &[&Value::Optional(None), &other])),
            },
            _ => self.eval(arg),
        }
    }
}
