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
    /// `optional_type(T)`: a value of type `T`, or none (the `optional` extension).
    Optional(Arc<Type>),
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

    /// `optional_type(inner)`.
    pub fn optional(inner: Type) -> Type {
        Type::Optional(Arc::new(inner))
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
            Type::Optional(t) => write!(f, "optional_type({t})"),
            Type::Type(None) => f.write_str("type"),
            Type::Type(Some(t)) => write!(f, "type({t})"),
            Type::Object(o) => f.write_str(&o.name),
            Type::Param(_) => f.write_str("dyn"),
            Type::Error => f.write_str("<error>"),
        }
    }
}

/// A type string that [`Type::from_str`] could not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot read type `{0}`")]
pub struct TypeParseError(pub String);

impl std::str::FromStr for Type {
    type Err = TypeParseError;

    /// Reads a type as CEL prints it: `int`, `list(string)`, `map(string, dyn)`, `type(int)`,
    /// `google.protobuf.Timestamp`, …
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || TypeParseError(text.to_owned());
        let text = text.trim();
        let inner = |prefix: &str| {
            text.strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(')'))
        };
        if let Some(elem) = inner("list(") {
            return Ok(Type::list(elem.parse().map_err(|_| error())?));
        }
        if let Some(args) = inner("map(") {
            let split = top_level_comma(args).ok_or_else(error)?;
            let key = args[..split].parse().map_err(|_| error())?;
            let value = args[split + 1..].parse().map_err(|_| error())?;
            return Ok(Type::map(key, value));
        }
        if let Some(of) = inner("optional_type(") {
            return Ok(Type::optional(of.parse().map_err(|_| error())?));
        }
        if let Some(of) = inner("type(") {
            return Ok(Type::Type(Some(Arc::new(of.parse().map_err(|_| error())?))));
        }
        Ok(match text {
            "dyn" => Type::Dyn,
            "null_type" => Type::Null,
            "bool" => Type::Bool,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "string" => Type::String,
            "bytes" => Type::Bytes,
            "type" => Type::Type(None),
            "google.protobuf.Timestamp" => Type::Timestamp,
            "google.protobuf.Duration" => Type::Duration,
            _ => return Err(error()),
        })
    }
}

/// The byte offset of the first comma not nested in parentheses.
fn top_level_comma(text: &str) -> Option<usize> {
    let mut depth = 0u32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::Type;

    #[test]
    fn type_strings_round_trip() {
        for text in [
            "int",
            "list(string)",
            "map(string, list(map(int, bool)))",
            "optional_type(list(int))",
            "type(int)",
            "type",
            "google.protobuf.Timestamp",
            "dyn",
        ] {
            let ty: Type = text.parse().unwrap();
            assert_eq!(ty.to_string(), text);
        }
        assert!("list(int".parse::<Type>().is_err());
        assert!("wrapper(int)".parse::<Type>().is_err());
    }
}
