//! Why a call into the runtime was refused: one error type with a protocol kind
//! (`invalid_args`, `refused`, `not_found`, `runtime`) and a stable kebab-case code, so the
//! conformance adapter, the HTTP routes and the library all report the same thing the same way.

use crate::store::StoreError;

/// Why a call was refused. `code` is stable (the lint's rule id where the lint refuses the same
/// input, the analyzer's diagnostic code for a refused filter).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RuntimeError {
    /// The arguments break the documented grammar.
    #[error("{message}")]
    InvalidArgs {
        /// The stable code, e.g. `compound-timeout`, `unknown-key`.
        code: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Well-formed, but a rule refuses it.
    #[error("{message}")]
    Refused {
        /// The stable code, e.g. `cost-over-limit`, `wait-tool-unsupported-runtime`.
        code: &'static str,
        /// Why.
        message: String,
    },
    /// An unknown job, wait or source.
    #[error("{message}")]
    NotFound {
        /// `unknown-job`, `unknown-wait` or `unknown-source`.
        code: &'static str,
        /// What was not found.
        message: String,
    },
    /// A job, wait or fire exists already under that name.
    #[error("{message}")]
    Conflict {
        /// `job-exists`, `wait-exists`.
        code: &'static str,
        /// What exists.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RuntimeError {
    /// Arguments that break the grammar.
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        RuntimeError::InvalidArgs {
            code,
            message: message.into(),
        }
    }

    /// Refused by a rule.
    pub fn refused(code: &'static str, message: impl Into<String>) -> Self {
        RuntimeError::Refused {
            code,
            message: message.into(),
        }
    }

    /// Not found.
    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        RuntimeError::NotFound {
            code,
            message: message.into(),
        }
    }

    /// Exists already.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        RuntimeError::Conflict {
            code,
            message: message.into(),
        }
    }

    /// The kind of the conformance protocol. A conflict is `invalid_args` there (protocol
    /// version 1 has no kind of its own for it).
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeError::InvalidArgs { .. } | RuntimeError::Conflict { .. } => "invalid_args",
            RuntimeError::Refused { .. } => "refused",
            RuntimeError::NotFound { .. } => "not_found",
            RuntimeError::Store(_) => "runtime",
        }
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::InvalidArgs { code, .. }
            | RuntimeError::Refused { code, .. }
            | RuntimeError::NotFound { code, .. }
            | RuntimeError::Conflict { code, .. } => code,
            RuntimeError::Store(_) => "store",
        }
    }
}
