//! The reference wait runtime of ozcheck: it executes waits exactly as the product documents
//! say, so that conformance scenarios have an implementation to run against.

#![deny(missing_docs)]

pub mod probe;
