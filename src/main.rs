//! The `ozcheck` binary: a thin wrapper around [`ozcheck::cli::run`], which holds the arguments
//! and the dispatch so that the Python package's `ozcheck` command is the same program.

use std::process::ExitCode;

/// With the runtime built in, mimalloc: the runtime's threads hand memory to each other
/// (a store's thread frees what the runtime's thread allocated), which glibc's allocator
/// serializes on its arena locks (docs/decisions/0009). The light build keeps the system's.
#[cfg(feature = "runtime")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ozcheck::cli::run(std::env::args_os())
}
