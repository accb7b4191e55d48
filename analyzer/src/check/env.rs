//! Environments: which variables an expression may use, their types, and the size hints the
//! estimator reads.

use std::sync::Arc;

use crate::extensions::Extensions;
use crate::types::{Field, ObjectType, Type};

/// Upper bounds on the size of a declared variable and of what it contains, for the general
/// environment (the event environments take their sizes from [`crate::EventBounds`]).
///
/// `max` is in bytes for strings and bytes, elements for lists, entries for maps; `items` bounds
/// the elements of a list or the values of a map, `keys` the keys of a map. `None` means
/// unbounded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SizeHint {
    /// Largest size of the value itself.
    pub max: Option<u64>,
    /// Bounds of list elements or map values.
    pub items: Option<Box<SizeHint>>,
    /// Bounds of map keys.
    pub keys: Option<Box<SizeHint>>,
}

impl SizeHint {
    /// A hint bounding only the value itself.
    pub fn max(max: u64) -> Self {
        Self {
            max: Some(max),
            ..Self::default()
        }
    }

    /// Adds a bound on list elements or map values.
    #[must_use]
    pub fn with_items(mut self, items: SizeHint) -> Self {
        self.items = Some(Box::new(items));
        self
    }

    /// Adds a bound on map keys.
    #[must_use]
    pub fn with_keys(mut self, keys: SizeHint) -> Self {
        self.keys = Some(Box::new(keys));
        self
    }
}

/// A declared variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    /// Its name; may be dotted (`a.b.c`) for qualified-name resolution.
    pub name: Box<str>,
    /// Its type.
    pub ty: Type,
    /// Size bounds for the estimator (general environment only).
    pub size: SizeHint,
}

/// Which built-in environment, for messages and for the estimator's event model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvKind {
    /// A wait or trigger `filter`: only `event`.
    Filter,
    /// A trigger's `sender` expression: only `event`.
    Sender,
    /// A flow step's `when`: `trigger` and earlier `steps`.
    When,
    /// A `${{ }}` template: `trigger`, `steps`, `inputs`.
    Template,
    /// User-declared variables with size hints.
    General,
}

impl EnvKind {
    /// The name used on the command line (`--context`).
    pub fn name(self) -> &'static str {
        match self {
            EnvKind::Filter => "filter",
            EnvKind::Sender => "sender",
            EnvKind::When => "when",
            EnvKind::Template => "template",
            EnvKind::General => "general",
        }
    }
}

/// What an expression of an environment must evaluate to, checked on its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A `bool` (or `dyn`, whose value is then checked when it runs): filters and `when`.
    Bool,
    /// A `string` (or `dyn`): a trigger's `sender`, which names the sender.
    String,
    /// Any type: templates and general expressions.
    Any,
}

impl Expected {
    /// The type's name, as messages show it.
    pub fn name(self) -> &'static str {
        match self {
            Expected::Bool => "bool",
            Expected::String => "string",
            Expected::Any => "any type",
        }
    }
}

/// What an earlier flow step offers to `when` and templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepDecl {
    /// The step's id.
    pub id: Box<str>,
    /// What kind of step it is.
    pub kind: StepKind,
}

/// The kinds of flow step, as far as their outputs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// A `wait_for_event` step: output `{matched: bool, event: event}`.
    WaitForEvent,
    /// An `approval` step: output `{approved: bool}`.
    Approval,
    /// Any other step: output fields are not known (`dyn`).
    Other,
}

/// An environment: the variables an expression may reference, and the extension libraries
/// it may call (by default [`Extensions::KUBERNETES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Env {
    kind: EnvKind,
    vars: Vec<VarDecl>,
    expected: Expected,
    extensions: Extensions,
}

/// The object type of `event`: header strings, `text`, and `attributes` (`map(string, dyn)`).
pub fn event_type() -> Type {
    let string = |name: &str| Field {
        name: name.into(),
        ty: Type::String,
    };
    Type::Object(Arc::new(ObjectType {
        name: "event".into(),
        fields: vec![
            string("id"),
            string("source"),
            string("type"),
            string("action"),
            string("subject"),
            string("text"),
            Field {
                name: "attributes".into(),
                ty: Type::map(Type::String, Type::Dyn),
            },
        ],
    }))
}

fn object(name: &str, fields: Vec<(&str, Type)>) -> Type {
    Type::Object(Arc::new(ObjectType {
        name: name.into(),
        fields: fields
            .into_iter()
            .map(|(name, ty)| Field {
                name: name.into(),
                ty,
            })
            .collect(),
    }))
}

fn steps_type(steps: &[StepDecl]) -> Type {
    let fields = steps
        .iter()
        .map(|step| {
            let ty = match step.kind {
                StepKind::WaitForEvent => object(
                    "wait_for_event step",
                    vec![("matched", Type::Bool), ("event", event_type())],
                ),
                StepKind::Approval => object("approval step", vec![("approved", Type::Bool)]),
                StepKind::Other => Type::map(Type::String, Type::Dyn),
            };
            Field {
                name: step.id.clone(),
                ty,
            }
        })
        .collect();
    Type::Object(Arc::new(ObjectType {
        name: "steps".into(),
        fields,
    }))
}

fn trigger_type(event_trigger: bool) -> Type {
    if event_trigger {
        object("trigger", vec![("event", event_type())])
    } else {
        Type::map(Type::String, Type::Dyn)
    }
}

impl Env {
    /// A wait or trigger filter: only `event`.
    pub fn filter() -> Self {
        Self::with_event(EnvKind::Filter)
    }

    /// A trigger's `sender` expression: only `event`.
    pub fn sender() -> Self {
        Self::with_event(EnvKind::Sender)
    }

    fn with_event(kind: EnvKind) -> Self {
        Self {
            kind,
            vars: vec![VarDecl {
                name: "event".into(),
                ty: event_type(),
                size: SizeHint::default(),
            }],
            expected: if kind == EnvKind::Sender {
                Expected::String
            } else {
                Expected::Bool
            },
            extensions: Extensions::default(),
        }
    }

    /// A flow step's `when`: `trigger` (with `trigger.event` when the flow has an event trigger)
    /// and the steps before this one.
    pub fn when(event_trigger: bool, earlier_steps: &[StepDecl]) -> Self {
        Self {
            kind: EnvKind::When,
            vars: vec![
                VarDecl {
                    name: "trigger".into(),
                    ty: trigger_type(event_trigger),
                    size: SizeHint::default(),
                },
                VarDecl {
                    name: "steps".into(),
                    ty: steps_type(earlier_steps),
                    size: SizeHint::default(),
                },
            ],
            expected: Expected::Bool,
            extensions: Extensions::default(),
        }
    }

    /// A `${{ }}` template: `trigger`, the steps before this one, and `inputs`.
    pub fn template(event_trigger: bool, earlier_steps: &[StepDecl]) -> Self {
        let mut env = Self::when(event_trigger, earlier_steps);
        env.kind = EnvKind::Template;
        env.expected = Expected::Any;
        env.vars.push(VarDecl {
            name: "inputs".into(),
            ty: Type::map(Type::String, Type::Dyn),
            size: SizeHint::default(),
        });
        env
    }

    /// An empty general environment; add variables with [`Env::declare`].
    pub fn general() -> Self {
        Self {
            kind: EnvKind::General,
            vars: Vec::new(),
            expected: Expected::Any,
            extensions: Extensions::default(),
        }
    }

    /// Sets what the expression must evaluate to.
    #[must_use]
    pub fn expecting(mut self, expected: Expected) -> Self {
        self.expected = expected;
        self
    }

    /// What the expression must evaluate to: `bool` for filters and `when`, `string` for a
    /// `sender`, any type for templates and general expressions.
    pub fn expected(&self) -> Expected {
        self.expected
    }

    /// The same environment with exactly these extensions enabled.
    #[must_use]
    pub fn with_extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// The extensions expressions in this environment may use.
    pub fn extensions(&self) -> Extensions {
        self.extensions
    }

    /// Declares (or redeclares) a variable.
    #[must_use]
    pub fn declare(mut self, name: &str, ty: Type, size: SizeHint) -> Self {
        self.vars.retain(|v| &*v.name != name);
        self.vars.push(VarDecl {
            name: name.into(),
            ty,
            size,
        });
        self
    }

    /// Which environment this is.
    pub fn kind(&self) -> EnvKind {
        self.kind
    }

    /// The declared variables.
    pub fn vars(&self) -> &[VarDecl] {
        &self.vars
    }

    /// The variable with this (possibly dotted) name.
    pub fn var(&self, name: &str) -> Option<&VarDecl> {
        self.vars.iter().find(|v| &*v.name == name)
    }
}
