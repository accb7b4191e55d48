//! The simulator's fixed budget of seeds (`tests/sim/mod.rs`, docs/simulator.md): every seed
//! runs its trace on one to three edges sharing an in-memory store, then on a `SQLite` file,
//! and must break no invariant. A failing seed panics with the shortest trace that breaks the
//! same invariant. The long run is `cargo run -p ozcheck-runtime --example sim -- --seeds N`.

mod sim;

/// Seeds per store in `cargo test` (a few seconds in a debug build).
const MEMORY_SEEDS: u64 = 200;
const SQLITE_SEEDS: u64 = 40;

#[tokio::test]
async fn no_seed_breaks_an_invariant_on_the_memory_store() {
    for seed in 0..MEMORY_SEEDS {
        if let Err(failure) = sim::check_seed(&sim::Memory::default, seed, 3).await {
            panic!("{failure}");
        }
    }
}

#[tokio::test]
async fn no_seed_breaks_an_invariant_on_sqlite() {
    for seed in 0..SQLITE_SEEDS {
        if let Err(failure) = sim::check_seed(&sim::Sqlite::new, seed, 3).await {
            panic!("{failure}");
        }
    }
}

/// The simulator itself is deterministic: one seed, one trace, one outcome.
#[tokio::test]
async fn a_seed_always_draws_the_same_trace() {
    assert_eq!(sim::generate(7, 3), sim::generate(7, 3));
    assert_ne!(sim::generate(7, 3).1, sim::generate(8, 3).1);
}

/// A database outage with work sent during it and an edge restarted inside it: the work is
/// refused (not acknowledged), the edge starts once the database is back, and the clients'
/// retries leave every invariant whole, on two edges of each store.
#[tokio::test]
async fn an_outage_with_a_restart_inside_it_breaks_nothing() {
    use sim::Op;
    let trace = [
        Op::Register {
            edge: 1,
            job: 0,
            wait: 2,
        },
        Op::DatabaseDown,
        Op::Deliver { edge: 0, event: 0 },
        Op::Register {
            edge: 1,
            job: 1,
            wait: 2,
        },
        Op::Restart { edge: 1 },
        Op::Tick { edge: 0 },
        Op::Deliver { edge: 1, event: 3 },
        Op::DatabaseUp,
        Op::Deliver { edge: 1, event: 6 },
    ];
    sim::run(&sim::Memory::default(), 2, &trace)
        .await
        .expect("memory");
    sim::run(&sim::Sqlite::new(), 2, &trace)
        .await
        .expect("sqlite");
}
