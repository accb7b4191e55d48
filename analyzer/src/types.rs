//! CEL types as the checker assigns them.

use std::fmt;
use std::sync::Arc;

/// A CEL type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// Any type; checked at evaluation time (`dyn`, values under `event.attributes`).
    Dyn,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int` (64-bit signed).
    Int,
    /// `uint` (64-bit unsigned).
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// `list(T)`.
    List(Arc<Type>),
    /// `map(K, V)`.
    Map(Arc<Type>, Arc<Type>),
    /// `type(T)`: the type of a type value; `None` when the inner type is unknown.
    Type(Option<Arc<Type>>),
    /// An object with declared fields (the `event`, `steps.<id>` and similar host objects).
    Object(Arc<ObjectType>),
    /// The not-yet-known element type of an empty list or map literal (`[]`, `{}`); it joins
    /// with any other type and is shown as `dyn`.
    Param(u8),
    /// The type of an expression that failed to check (suppresses follow-on errors).
    Error,
}

/// A host object type: a name and its fields. Field order is declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectType {
    /// The type's name as shown in messages (`event`, `step`).
    pub name: Box<str>,
    /// Declared fields.
    pub fields: Vec<Field>,
}

/// One declared field of an [`ObjectType`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    /// Field name.
    pub name: Box<str>,
    /// Field type.
    pub ty: Type,
}

impl ObjectType {
    /// The field with this name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| &*f.name == name)
    }
}

impl Type {
    /// `list(elem)`.
    pub fn list(elem: Type) -> Type {
        Type::List(Arc::new(elem))
    }

    /// `map(key, value)`.
    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Arc::new(key), Arc::new(value))
    }

    /// Whether values of this type are checked only at evaluation time.
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::List(e) => write!(f, "list({e})"),
            Type::Map(k, v) => write!(f, "map({k}, {v})"),
            Type::Type(None) => f.write_str("type"),
            Type::Type(Some(t)) => write!(f, "type({t})"),
            Type::Object(o) => f.write_str(&o.name),
            Type::Param(_) => f.write_str("dyn"),
            Type::Error => f.write_str("<error>"),
        }
    }
}
