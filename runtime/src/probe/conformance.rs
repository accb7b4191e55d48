//! Conformance scenarios for probe waits (placeholder until the scenario runner lands).
