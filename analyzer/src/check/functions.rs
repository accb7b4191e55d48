//! The functions the checker knows, as overload signatures, and overload resolution: the
//! standard library, and the overloads each extension library adds (tagged with their
//! [`Extension`], and only resolved where the environment enables it).
//!
//! Signatures use a tiny pattern language ([`P`]) with one element type variable `A` for lists
//! and optionals and `K`/`V` for maps, which is all these libraries need.

use crate::extensions::{Extension, Extensions};
use crate::syntax::{Ast, ExprKind, NodeId};
use crate::types::Type;

/// One parameter or result pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Timestamp,
    Duration,
    /// Any type, bound to the variable `A`.
    A,
    /// `list(A)`.
    ListA,
    /// `list(A)` where `A` has an order (int, uint, double, bool, string, bytes, timestamp,
    /// duration, or dyn): what `sort` takes.
    ListOrdA,
    /// `list(list(A))`.
    ListListA,
    /// Any list as a parameter; `list(dyn)` as a result.
    ListDyn,
    /// `list(string)`.
    ListString,
    /// `list(int)`.
    ListInt,
    /// `optional_type(A)`; as a result with `A` unbound, an optional of a not-yet-known type.
    OptA,
    /// `list(optional_type(A))`.
    ListOptA,
    /// `map(K, V)`.
    MapKv,
    /// `dyn` as a result.
    Dyn,
    /// `type(A)` as a result.
    TypeOfA,
    /// The key type variable `K` of a map.
    K,
    /// The value type variable `V` of a map.
    V,
}

impl P {
    /// The pattern as a signature shows it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            P::Bool => "bool",
            P::Int => "int",
            P::Uint => "uint",
            P::Double => "double",
            P::String => "string",
            P::Bytes => "bytes",
            P::Timestamp => "timestamp",
            P::Duration => "duration",
            P::A | P::K | P::V | P::Dyn => "dyn",
            P::TypeOfA => "type",
            P::ListA | P::ListDyn => "list",
            P::ListOrdA => "list(comparable)",
            P::ListListA => "list(list)",
            P::ListString => "list(string)",
            P::ListInt => "list(int)",
            P::MapKv => "map",
            P::OptA => "optional",
            P::ListOptA => "list(optional)",
        }
    }
}

/// One overload: receiver-style or global, parameter patterns (the receiver first for member
/// overloads), the result pattern, and the extension that provides it (`None`: the standard
/// library).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Overload {
    pub member: bool,
    pub params: &'static [P],
    pub result: P,
    pub extension: Option<Extension>,
}

const fn global(params: &'static [P], result: P) -> Overload {
    Overload {
        member: false,
        params,
        result,
        extension: None,
    }
}

const fn member(params: &'static [P], result: P) -> Overload {
    Overload {
        member: true,
        params,
        result,
        extension: None,
    }
}

impl Overload {
    /// The same overload, provided by `extension`.
    const fn of(self, extension: Extension) -> Overload {
        Overload {
            extension: Some(extension),
            ..self
        }
    }

    /// Whether the overload is part of the standard library or of an enabled extension.
    pub(crate) fn enabled(&self, extensions: Extensions) -> bool {
        self.extension.is_none_or(|e| extensions.contains(e))
    }
}

const STRINGS: Extension = Extension::Strings;
const LISTS: Extension = Extension::Lists;
const SETS: Extension = Extension::Sets;
const OPTIONAL: Extension = Extension::Optional;

const SIZE: &[Overload] = &[
    global(&[P::String], P::Int),
    global(&[P::Bytes], P::Int),
    global(&[P::ListA], P::Int),
    global(&[P::MapKv], P::Int),
    member(&[P::String], P::Int),
    member(&[P::Bytes], P::Int),
    member(&[P::ListA], P::Int),
    member(&[P::MapKv], P::Int),
];
const STRING_PREDICATE: &[Overload] = &[member(&[P::String, P::String], P::Bool)];
const MATCHES: &[Overload] = &[
    member(&[P::String, P::String], P::Bool),
    global(&[P::String, P::String], P::Bool),
];
const TO_INT: &[Overload] = &[
    global(&[P::Int], P::Int),
    global(&[P::Uint], P::Int),
    global(&[P::Double], P::Int),
    global(&[P::String], P::Int),
    global(&[P::Timestamp], P::Int),
];
const TO_UINT: &[Overload] = &[
    global(&[P::Int], P::Uint),
    global(&[P::Uint], P::Uint),
    global(&[P::Double], P::Uint),
    global(&[P::String], P::Uint),
];
const TO_DOUBLE: &[Overload] = &[
    global(&[P::Int], P::Double),
    global(&[P::Uint], P::Double),
    global(&[P::Double], P::Double),
    global(&[P::String], P::Double),
];
const TO_STRING: &[Overload] = &[
    global(&[P::Int], P::String),
    global(&[P::Uint], P::String),
    global(&[P::Double], P::String),
    global(&[P::String], P::String),
    global(&[P::Bytes], P::String),
    global(&[P::Bool], P::String),
    global(&[P::Timestamp], P::String),
    global(&[P::Duration], P::String),
];
const TO_BYTES: &[Overload] = &[
    global(&[P::Bytes], P::Bytes),
    global(&[P::String], P::Bytes),
];
const TO_BOOL: &[Overload] = &[global(&[P::Bool], P::Bool), global(&[P::String], P::Bool)];
const TO_DYN: &[Overload] = &[global(&[P::A], P::Dyn)];
const TYPE_OF: &[Overload] = &[global(&[P::A], P::TypeOfA)];
const TO_TIMESTAMP: &[Overload] = &[
    global(&[P::String], P::Timestamp),
    global(&[P::Int], P::Timestamp),
    global(&[P::Timestamp], P::Timestamp),
];
const TO_DURATION: &[Overload] = &[
    global(&[P::String], P::Duration),
    global(&[P::Duration], P::Duration),
];
const DATE_PART: &[Overload] = &[
    member(&[P::Timestamp], P::Int),
    member(&[P::Timestamp, P::String], P::Int),
];
const TIME_PART: &[Overload] = &[
    member(&[P::Timestamp], P::Int),
    member(&[P::Timestamp, P::String], P::Int),
    member(&[P::Duration], P::Int),
];

const ADD: &[Overload] = &[
    global(&[P::Int, P::Int], P::Int),
    global(&[P::Uint, P::Uint], P::Uint),
    global(&[P::Double, P::Double], P::Double),
    global(&[P::String, P::String], P::String),
    global(&[P::Bytes, P::Bytes], P::Bytes),
    global(&[P::ListA, P::ListA], P::ListA),
    global(&[P::Timestamp, P::Duration], P::Timestamp),
    global(&[P::Duration, P::Timestamp], P::Timestamp),
    global(&[P::Duration, P::Duration], P::Duration),
];
const SUB: &[Overload] = &[
    global(&[P::Int, P::Int], P::Int),
    global(&[P::Uint, P::Uint], P::Uint),
    global(&[P::Double, P::Double], P::Double),
    global(&[P::Timestamp, P::Timestamp], P::Duration),
    global(&[P::Timestamp, P::Duration], P::Timestamp),
    global(&[P::Duration, P::Duration], P::Duration),
];
const MUL_DIV: &[Overload] = &[
    global(&[P::Int, P::Int], P::Int),
    global(&[P::Uint, P::Uint], P::Uint),
    global(&[P::Double, P::Double], P::Double),
];
const REM: &[Overload] = &[
    global(&[P::Int, P::Int], P::Int),
    global(&[P::Uint, P::Uint], P::Uint),
];
const ORDER: &[Overload] = &[
    global(&[P::Int, P::Int], P::Bool),
    global(&[P::Uint, P::Uint], P::Bool),
    global(&[P::Double, P::Double], P::Bool),
    global(&[P::Int, P::Uint], P::Bool),
    global(&[P::Int, P::Double], P::Bool),
    global(&[P::Uint, P::Int], P::Bool),
    global(&[P::Uint, P::Double], P::Bool),
    global(&[P::Double, P::Int], P::Bool),
    global(&[P::Double, P::Uint], P::Bool),
    global(&[P::String, P::String], P::Bool),
    global(&[P::Bytes, P::Bytes], P::Bool),
    global(&[P::Bool, P::Bool], P::Bool),
    global(&[P::Timestamp, P::Timestamp], P::Bool),
    global(&[P::Duration, P::Duration], P::Bool),
];
const EQUALITY: &[Overload] = &[global(&[P::A, P::A], P::Bool)];
const IN: &[Overload] = &[
    global(&[P::A, P::ListA], P::Bool),
    global(&[P::K, P::MapKv], P::Bool),
];
const INDEX: &[Overload] = &[
    global(&[P::ListA, P::Int], P::A),
    global(&[P::MapKv, P::K], P::V),
];
const NOT: &[Overload] = &[global(&[P::Bool], P::Bool)];
const NEG: &[Overload] = &[global(&[P::Int], P::Int), global(&[P::Double], P::Double)];
const LOGIC: &[Overload] = &[global(&[P::Bool, P::Bool], P::Bool)];

// ---- the strings extension -------------------------------------------------------------------

const CHAR_AT: &[Overload] = &[member(&[P::String, P::Int], P::String).of(STRINGS)];
const INDEX_OF: &[Overload] = &[
    member(&[P::String, P::String], P::Int).of(STRINGS),
    member(&[P::String, P::String, P::Int], P::Int).of(STRINGS),
];
const STRING_TRANSFORM: &[Overload] = &[member(&[P::String], P::String).of(STRINGS)];
const REVERSE: &[Overload] = &[
    member(&[P::String], P::String).of(STRINGS),
    member(&[P::ListA], P::ListA).of(LISTS),
];
const REPLACE: &[Overload] = &[
    member(&[P::String, P::String, P::String], P::String).of(STRINGS),
    member(&[P::String, P::String, P::String, P::Int], P::String).of(STRINGS),
];
const SPLIT: &[Overload] = &[
    member(&[P::String, P::String], P::ListString).of(STRINGS),
    member(&[P::String, P::String, P::Int], P::ListString).of(STRINGS),
];
const SUBSTRING: &[Overload] = &[
    member(&[P::String, P::Int], P::String).of(STRINGS),
    member(&[P::String, P::Int, P::Int], P::String).of(STRINGS),
];
const JOIN: &[Overload] = &[
    member(&[P::ListString], P::String).of(STRINGS),
    member(&[P::ListString, P::String], P::String).of(STRINGS),
];
const QUOTE: &[Overload] = &[global(&[P::String], P::String).of(STRINGS)];
const FORMAT: &[Overload] = &[member(&[P::String, P::ListDyn], P::String).of(STRINGS)];

// ---- the lists extension ---------------------------------------------------------------------

const SLICE: &[Overload] = &[member(&[P::ListA, P::Int, P::Int], P::ListA).of(LISTS)];
const FLATTEN: &[Overload] = &[
    member(&[P::ListListA], P::ListA).of(LISTS),
    member(&[P::ListDyn, P::Int], P::ListDyn).of(LISTS),
];
const DISTINCT: &[Overload] = &[member(&[P::ListA], P::ListA).of(LISTS)];
const SORT: &[Overload] = &[member(&[P::ListOrdA], P::ListA).of(LISTS)];
const RANGE: &[Overload] = &[global(&[P::Int], P::ListInt).of(LISTS)];

// ---- the sets extension ----------------------------------------------------------------------

const SET_RELATION: &[Overload] = &[global(&[P::ListA, P::ListA], P::Bool).of(SETS)];

// ---- optional types --------------------------------------------------------------------------

const OPTIONAL_OF: &[Overload] = &[global(&[P::A], P::OptA).of(OPTIONAL)];
const OPTIONAL_NONE: &[Overload] = &[global(&[], P::OptA).of(OPTIONAL)];
const HAS_VALUE: &[Overload] = &[member(&[P::OptA], P::Bool).of(OPTIONAL)];
const VALUE: &[Overload] = &[member(&[P::OptA], P::A).of(OPTIONAL)];
const OR_VALUE: &[Overload] = &[member(&[P::OptA, P::A], P::A).of(OPTIONAL)];
const OR: &[Overload] = &[member(&[P::OptA, P::OptA], P::OptA).of(OPTIONAL)];
const FIRST_LAST: &[Overload] = &[member(&[P::ListA], P::OptA).of(OPTIONAL)];
const UNWRAP: &[Overload] = &[global(&[P::ListOptA], P::ListA).of(OPTIONAL)];
const UNWRAP_OPT: &[Overload] = &[member(&[P::ListOptA], P::ListA).of(OPTIONAL)];

/// The overloads of an operator, by its source symbol (`[]` for indexing, `!` and `-_` for the
/// unary operators).
pub(crate) fn operator_overloads(symbol: &str) -> &'static [Overload] {
    match symbol {
        "+" => ADD,
        "-" => SUB,
        "*" | "/" => MUL_DIV,
        "%" => REM,
        "<" | "<=" | ">" | ">=" => ORDER,
        "==" | "!=" => EQUALITY,
        "in" => IN,
        "[]" => INDEX,
        "!" => NOT,
        "-_" => NEG,
        _ => LOGIC,
    }
}

/// The overloads of a function, by name (namespaced functions by their qualified name,
/// `optional.of`); `None` for a name no library has.
pub(crate) fn overloads(name: &str) -> Option<&'static [Overload]> {
    Some(match name {
        "size" => SIZE,
        "contains" | "startsWith" | "endsWith" => STRING_PREDICATE,
        "matches" => MATCHES,
        "int" => TO_INT,
        "uint" => TO_UINT,
        "double" => TO_DOUBLE,
        "string" => TO_STRING,
        "bytes" => TO_BYTES,
        "bool" => TO_BOOL,
        "dyn" => TO_DYN,
        "type" => TYPE_OF,
        "timestamp" => TO_TIMESTAMP,
        "duration" => TO_DURATION,
        "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" => DATE_PART,
        "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => TIME_PART,
        "charAt" => CHAR_AT,
        "indexOf" | "lastIndexOf" => INDEX_OF,
        "lowerAscii" | "upperAscii" | "trim" => STRING_TRANSFORM,
        "reverse" => REVERSE,
        "replace" => REPLACE,
        "split" => SPLIT,
        "substring" => SUBSTRING,
        "join" => JOIN,
        "strings.quote" => QUOTE,
        "format" => FORMAT,
        "slice" => SLICE,
        "flatten" => FLATTEN,
        "distinct" => DISTINCT,
        "sort" => SORT,
        "lists.range" => RANGE,
        "sets.contains" | "sets.equivalent" | "sets.intersects" => SET_RELATION,
        "optional.of" | "optional.ofNonZeroValue" => OPTIONAL_OF,
        "optional.none" => OPTIONAL_NONE,
        "hasValue" => HAS_VALUE,
        "value" => VALUE,
        "orValue" => OR_VALUE,
        "or" => OR,
        "first" | "last" => FIRST_LAST,
        "optional.unwrap" => UNWRAP,
        "unwrapOpt" => UNWRAP_OPT,
        _ => return None,
    })
}

/// The namespaces of namespaced functions (`strings.quote`, `optional.of`, `lists.range`,
/// `sets.contains`).
const NAMESPACES: &[&str] = &["strings", "optional", "lists", "sets"];

/// The timestamp and duration accessors (`getFullYear` … `getMilliseconds`): the evaluator
/// dispatches them and the estimator knows their results are numbers.
pub(crate) fn is_time_accessor(name: &str) -> bool {
    matches!(
        name,
        "getFullYear"
            | "getMonth"
            | "getDate"
            | "getDayOfMonth"
            | "getDayOfWeek"
            | "getDayOfYear"
            | "getHours"
            | "getMinutes"
            | "getSeconds"
            | "getMilliseconds"
    )
}

/// The qualified name of a namespaced function call: `optional.of(x)` parses as the member
/// call `of` on the identifier `optional`; when the identifier is one of the namespaces and
/// the qualified name is a function, it is that global function (whatever a variable of the
/// same name might hold, as in cel-go). The checker, the estimator and the evaluator all
/// resolve calls through this.
pub(crate) fn namespaced(ast: &Ast, target: Option<NodeId>, function: &str) -> Option<String> {
    let ExprKind::Ident {
        name,
        rooted: false,
    } = ast.kind(target?)
    else {
        return None;
    };
    if !NAMESPACES.contains(&&**name) {
        return None;
    }
    let qualified = format!("{name}.{function}");
    overloads(&qualified).map(|_| qualified)
}

/// Whether some overload of a function is enabled in `extensions`.
pub(crate) fn available(overloads: &[Overload], extensions: Extensions) -> bool {
    overloads.iter().any(|o| o.enabled(extensions))
}

/// The extensions that provide overloads of `overloads` (none for a standard function).
pub(crate) fn providers(overloads: &[Overload]) -> Extensions {
    overloads
        .iter()
        .filter_map(|o| o.extension)
        .fold(Extensions::NONE, Extensions::with)
}

/// Every function name the checker knows (for "did you mean").
pub(crate) const FUNCTION_NAMES: &[&str] = &[
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "dyn",
    "type",
    "timestamp",
    "duration",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "trim",
    "reverse",
    "replace",
    "split",
    "substring",
    "join",
    "strings.quote",
    "format",
    "slice",
    "flatten",
    "distinct",
    "sort",
    "lists.range",
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    "optional.of",
    "optional.ofNonZeroValue",
    "optional.none",
    "hasValue",
    "value",
    "orValue",
    "or",
    "first",
    "last",
    "optional.unwrap",
    "unwrapOpt",
];

/// Bindings of the pattern variables while matching one overload.
#[derive(Default)]
struct Bindings {
    a: Option<Type>,
    k: Option<Type>,
    v: Option<Type>,
}

fn bind(slot: &mut Option<Type>, ty: &Type) -> bool {
    match slot {
        None => {
            *slot = Some(ty.clone());
            true
        }
        Some(bound) => compatible(bound, ty),
    }
}

/// Whether a value of type `b` may be used where `a` is expected (either side may be dynamic).
pub(crate) fn compatible(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Dyn | Type::Error | Type::Param(_), _)
        | (_, Type::Dyn | Type::Error | Type::Param(_)) => true,
        (Type::List(x), Type::List(y)) | (Type::Optional(x), Type::Optional(y)) => compatible(x, y),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => compatible(k1, k2) && compatible(v1, v2),
        (Type::Type(_), Type::Type(_)) => true,
        // Host objects and maps with string keys are both field-selectable records.
        (Type::Object(_), Type::Map(k, _)) | (Type::Map(k, _), Type::Object(_)) => {
            matches!(**k, Type::String | Type::Dyn)
        }
        _ => a == b,
    }
}

fn matches_param(pattern: P, ty: &Type, bindings: &mut Bindings) -> bool {
    let concrete = |want: Type| compatible(&want, ty);
    match pattern {
        P::Bool => concrete(Type::Bool),
        P::Int => concrete(Type::Int),
        P::Uint => concrete(Type::Uint),
        P::Double => concrete(Type::Double),
        P::String => concrete(Type::String),
        P::Bytes => concrete(Type::Bytes),
        P::Timestamp => concrete(Type::Timestamp),
        P::Duration => concrete(Type::Duration),
        P::A | P::Dyn | P::TypeOfA => bind(&mut bindings.a, ty),
        P::ListA => match ty {
            Type::List(elem) => bind(&mut bindings.a, elem),
            Type::Dyn | Type::Error => true,
            _ => false,
        },
        P::ListOrdA => match ty {
            Type::List(elem) if orderable(elem) => bind(&mut bindings.a, elem),
            Type::Dyn | Type::Error => true,
            _ => false,
        },
        P::ListListA => match ty {
            Type::List(elem) => match &**elem {
                Type::List(inner) => bind(&mut bindings.a, inner),
                Type::Dyn | Type::Error | Type::Param(_) => true,
                _ => false,
            },
            Type::Dyn | Type::Error => true,
            _ => false,
        },
        P::ListDyn => matches!(ty, Type::List(_) | Type::Dyn | Type::Error),
        P::ListString => concrete(Type::list(Type::String)),
        P::ListInt => concrete(Type::list(Type::Int)),
        P::OptA => match ty {
            Type::Optional(inner) => bind(&mut bindings.a, inner),
            Type::Dyn | Type::Error => true,
            _ => false,
        },
        P::ListOptA => match ty {
            Type::List(elem) => match &**elem {
                Type::Optional(inner) => bind(&mut bindings.a, inner),
                Type::Dyn | Type::Error | Type::Param(_) => true,
                _ => false,
            },
            Type::Dyn | Type::Error => true,
            _ => false,
        },
        P::K => bind(&mut bindings.k, ty),
        P::V => bind(&mut bindings.v, ty),
        P::MapKv => match ty {
            Type::Map(k, v) => bind(&mut bindings.k, k) && bind(&mut bindings.v, v),
            Type::Object(_) => bind(&mut bindings.k, &Type::String),
            Type::Dyn | Type::Error => true,
            _ => false,
        },
    }
}

fn result_type(pattern: P, bindings: &Bindings) -> Type {
    match pattern {
        P::Bool => Type::Bool,
        P::Int => Type::Int,
        P::Uint => Type::Uint,
        P::Double => Type::Double,
        P::String => Type::String,
        P::Bytes => Type::Bytes,
        P::Timestamp => Type::Timestamp,
        P::Duration => Type::Duration,
        P::Dyn => Type::Dyn,
        P::A => bindings.a.clone().unwrap_or(Type::Dyn),
        P::K => bindings.k.clone().unwrap_or(Type::Dyn),
        P::V => bindings.v.clone().unwrap_or(Type::Dyn),
        P::TypeOfA => Type::Type(bindings.a.clone().map(std::sync::Arc::new)),
        P::ListA | P::ListOrdA | P::ListListA | P::ListOptA => {
            Type::list(bindings.a.clone().unwrap_or(Type::Dyn))
        }
        P::ListDyn => Type::list(Type::Dyn),
        P::ListString => Type::list(Type::String),
        P::ListInt => Type::list(Type::Int),
        // `optional.none()` binds nothing: its type joins with whatever optional meets it.
        P::OptA => Type::optional(bindings.a.clone().unwrap_or(Type::Param(0))),
        P::MapKv => Type::map(
            bindings.k.clone().unwrap_or(Type::Dyn),
            bindings.v.clone().unwrap_or(Type::Dyn),
        ),
    }
}

/// Whether values of this type have an order `sort` can use.
pub(crate) fn orderable(ty: &Type) -> bool {
    matches!(
        ty,
        Type::Int
            | Type::Uint
            | Type::Double
            | Type::Bool
            | Type::String
            | Type::Bytes
            | Type::Timestamp
            | Type::Duration
            | Type::Dyn
            | Type::Error
            | Type::Param(_)
    )
}

/// Resolves a call: the result type when at least one overload enabled in `extensions`
/// accepts the argument types (the receiver first for member calls), joined over every
/// overload that does.
pub(crate) fn resolve(
    overloads: &[Overload],
    member_call: bool,
    args: &[Type],
    extensions: Extensions,
) -> Option<Type> {
    let mut result: Option<Type> = None;
    for overload in overloads {
        if overload.member != member_call
            || overload.params.len() != args.len()
            || !overload.enabled(extensions)
        {
            continue;
        }
        let mut bindings = Bindings::default();
        if overload
            .params
            .iter()
            .zip(args)
            .all(|(p, ty)| matches_param(*p, ty, &mut bindings))
        {
            let ty = result_type(overload.result, &bindings);
            result = Some(match result {
                None => ty,
                Some(prev) => join(&prev, &ty),
            });
        }
    }
    result
}

/// The extension of a disabled overload that would accept the argument types, when no enabled
/// one does: what the environment would have to enable.
pub(crate) fn missing_extension(
    overloads: &[Overload],
    member_call: bool,
    args: &[Type],
) -> Option<Extension> {
    overloads.iter().find_map(|overload| {
        let extension = overload.extension?;
        let fits = resolve(
            std::slice::from_ref(overload),
            member_call,
            args,
            Extensions::ALL,
        );
        fits.map(|_| extension)
    })
}

/// The least common type of two types: equal types stay, lists, maps and optionals join
/// element-wise, an unconstrained element (of an empty literal or `optional.none()`) takes the
/// other side, `null` joins an optional as that optional (CEL's legacy nullable abstract types),
/// anything else is `dyn`.
pub(crate) fn join(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Param(_), other) | (other, Type::Param(_)) => other.clone(),
        (Type::Error, other) | (other, Type::Error) => other.clone(),
        (Type::List(x), Type::List(y)) => Type::list(join(x, y)),
        (Type::Optional(x), Type::Optional(y)) => Type::optional(join(x, y)),
        (Type::Optional(_), Type::Null) => a.clone(),
        (Type::Null, Type::Optional(_)) => b.clone(),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => Type::map(join(k1, k2), join(v1, v2)),
        _ if a == b => a.clone(),
        _ => Type::Dyn,
    }
}

/// Every operator symbol of the tables (`[]` for indexing, `!` and `-_` for the unary
/// operators, `&&` and `||` for the logical ones).
#[cfg(feature = "testgen")]
pub(crate) const OPERATOR_SYMBOLS: &[&str] = &[
    "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "in", "[]", "!", "-_", "&&", "||",
];

/// One entry of the tables: a function name or operator symbol with one of its overloads. The
/// generators of `testgen` draw from these and count which ones they produced, so an overload
/// added to a table is generated (and its absence from a coverage report noticed) without
/// anyone having to remember it.
#[cfg(feature = "testgen")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    /// The function name or operator symbol.
    pub name: &'static str,
    /// Whether `name` is an operator.
    pub operator: bool,
    /// The overload.
    pub overload: Overload,
}

#[cfg(feature = "testgen")]
impl Entry {
    /// A readable signature: `string.contains(string) -> bool`, `int + int -> int`.
    pub(crate) fn label(&self) -> String {
        let p = |p: &P| {
            format!("{p:?}")
                .to_lowercase()
                .replace("lista", "list(A)")
                .replace("mapkv", "map(K, V)")
                .replace("typeofa", "type(A)")
        };
        let params: Vec<String> = self.overload.params.iter().map(p).collect();
        let result = p(&self.overload.result);
        let call = match (self.operator, params.as_slice()) {
            (true, [x]) => format!("{}{x}", self.name.trim_end_matches('_')),
            (true, [x, i]) if self.name == "[]" => format!("{x}[{i}]"),
            (true, [x, y]) => format!("{x} {} {y}", self.name),
            _ if self.overload.member => {
                format!("{}.{}({})", params[0], self.name, params[1..].join(", "))
            }
            _ => format!("{}({})", self.name, params.join(", ")),
        };
        format!("{call} -> {result}")
    }

    /// Whether a call with these static argument types (the receiver first) selects this
    /// overload without help from `dyn`: every concrete parameter gets exactly its type.
    pub(crate) fn matches_exactly(&self, member: bool, args: &[Type]) -> bool {
        self.overload.member == member
            && self.overload.params.len() == args.len()
            && self
                .overload
                .params
                .iter()
                .zip(args)
                .all(|(p, ty)| match p {
                    P::Bool => *ty == Type::Bool,
                    P::Int => *ty == Type::Int,
                    P::Uint => *ty == Type::Uint,
                    P::Double => *ty == Type::Double,
                    P::String => *ty == Type::String,
                    P::Bytes => *ty == Type::Bytes,
                    P::Timestamp => *ty == Type::Timestamp,
                    P::Duration => *ty == Type::Duration,
                    P::ListA | P::ListOrdA | P::ListDyn => matches!(ty, Type::List(_)),
                    P::ListListA => matches!(ty, Type::List(e) if matches!(**e, Type::List(_))),
                    P::ListString => *ty == Type::list(Type::String),
                    P::ListInt => *ty == Type::list(Type::Int),
                    P::OptA => matches!(ty, Type::Optional(_)),
                    P::ListOptA => {
                        matches!(ty, Type::List(e) if matches!(**e, Type::Optional(_)))
                    }
                    P::MapKv => matches!(ty, Type::Map(..) | Type::Object(_)),
                    P::A | P::K | P::V | P::Dyn | P::TypeOfA => *ty != Type::Error,
                })
    }
}

/// Every entry of the standard library's tables: each function with each of its overloads,
/// then each operator. The extension libraries' overloads are left out until the estimator
/// prices them (today their calls are unbounded, which no generated case can contradict).
#[cfg(feature = "testgen")]
pub(crate) fn catalogue() -> Vec<Entry> {
    let functions = FUNCTION_NAMES.iter().flat_map(|&name| {
        overloads(name)
            .unwrap_or(&[])
            .iter()
            .filter(|overload| overload.extension.is_none())
            .map(move |&overload| Entry {
                name,
                operator: false,
                overload,
            })
    });
    let operators = OPERATOR_SYMBOLS.iter().flat_map(|&name| {
        operator_overloads(name)
            .iter()
            .filter(|overload| overload.extension.is_none())
            .map(move |&overload| Entry {
                name,
                operator: true,
                overload,
            })
    });
    functions.chain(operators).collect()
}
