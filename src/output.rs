//! Standard output that never panics. `println!` panics when the reader has gone
//! (`ozcheck eval … | head -c 1`: the write fails with a broken pipe, since Rust ignores
//! `SIGPIPE`); every command prints through [`out!`](crate::out) and [`outln!`](crate::outln)
//! instead, which end the process quietly with status 141 (128 + `SIGPIPE`, what a shell reports
//! for a program the signal ended) when the pipe is closed, and with status 2 and one line on
//! standard error for any other write error.

use std::fmt;
use std::io::{self, Write};

/// Exit status when standard output is a closed pipe: 128 + `SIGPIPE` (13).
pub const CLOSED_PIPE_STATUS: i32 = 141;

/// Writes `args` to standard output and flushes; a failed write ends the process (see the
/// module documentation).
pub fn write(args: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        failed(&e);
    }
}

fn failed(error: &io::Error) -> ! {
    if error.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(CLOSED_PIPE_STATUS);
    }
    let _ = writeln!(
        io::stderr(),
        "error: cannot write to standard output: {error}"
    );
    std::process::exit(2);
}

/// `print!` that ends the process quietly when standard output is a closed pipe.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        $crate::output::write(format_args!($($arg)*));
    }};
}

/// `println!` that ends the process quietly when standard output is a closed pipe.
#[macro_export]
macro_rules! outln {
    () => {{
        $crate::output::write(format_args!("\n"));
    }};
    ($($arg:tt)*) => {{
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)));
    }};
}
