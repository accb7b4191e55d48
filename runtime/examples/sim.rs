//! The simulator's long run (`runtime/tests/sim/mod.rs`, docs/simulator.md): seeds one after
//! another on a store, each a trace on one to `EDGES` edges with crashes at store steps, until
//! `--seeds` have run; prints every failing seed with its shortest trace, and seeds per second.
//!
//! ```text
//! sim [--store memory|sqlite] [--seeds N] [--start SEED] [--edges MAX]
//! ```
//!
//! Exits with status 1 when a seed failed. `cargo test --test simulation` runs a fixed budget of
//! seeds from 0; start a long run elsewhere (`--start 1000000`) to look further.

use std::process::ExitCode;
use std::time::Instant;

#[path = "../tests/sim/mod.rs"]
mod sim;

struct Args {
    store: String,
    seeds: u64,
    start: u64,
    edges: usize,
}

fn args() -> Result<Args, String> {
    let mut args = Args {
        store: "memory".into(),
        seeds: 1000,
        start: 0,
        edges: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--store" if value == "memory" || value == "sqlite" => args.store.clone_from(&value),
            "--seeds" => args.seeds = number()?,
            "--start" => args.start = number()?,
            "--edges" => {
                args.edges = usize::try_from(number()?.clamp(1, 8)).unwrap_or(1);
            }
            _ => return Err(format!("unknown argument {flag} {value}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "sim: {e}\nusage: sim [--store memory|sqlite] [--seeds N] [--start SEED] [--edges MAX]"
            );
            return ExitCode::from(2);
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let started = Instant::now();
    let mut failed = 0u64;
    rt.block_on(async {
        for seed in args.start..args.start.saturating_add(args.seeds) {
            let outcome = if args.store == "sqlite" {
                sim::check_seed(&sim::Sqlite::new, seed, args.edges).await
            } else {
                sim::check_seed(&sim::Memory::default, seed, args.edges).await
            };
            if let Err(failure) = outcome {
                failed += 1;
                println!("{failure}\n");
            }
        }
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{} seeds on {} in {secs:.1} s ({:.0} seeds/s), {failed} failed",
        args.seeds,
        args.store,
        args.seeds as f64 / secs.max(1e-9)
    );
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
