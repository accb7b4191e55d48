//! Where an edge finds the open waits an event may go to, and the deadlines it fires.
//!
//! An edge alone on its store ([`Routing::Local`]) keeps every open wait in its own
//! [`WaitIndex`], re-armed from the store at start. Edges sharing one database
//! ([`Routing::Shared`]) read the candidates of each event from the store's index of open waits
//! (`(source, subject)` and `(source, any subject)`), after the event is committed: a wait
//! registered through any edge is committed before its look-back reads the events, so either the
//! look-back sees the event or the event's lookup sees the wait. Compiled filters are cached per
//! wait. Deadlines, retention and re-routing are done by the one edge that holds the sweeper
//! lease, which another edge takes over when the holder stops renewing it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::clock::Timestamp;
use crate::filter::Filter;
use crate::index::{ArmedWait, WaitIndex};
use crate::model::{StoredEvent, Wait, WaitSpec};
use crate::store::{Store, StoreError};

/// How an edge finds open waits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Routing {
    /// The only edge on its store: open waits in the edge's own index.
    #[default]
    Local,
    /// One of several edges on one database: open waits in the store's index.
    Shared {
        /// This edge's name, unique among the live edges: it holds the sweeper lease under it,
        /// so an edge restarted under its name takes its lease back at once. (Two live edges
        /// with one name both sweep: still correct, since every close is conditional.)
        edge: String,
    },
}

/// The lease on the work one edge does for all: firing deadlines, retention, re-routing.
pub const SWEEPER_LEASE: &str = "sweeper";
/// How long a lease lasts without renewal: the longest a dead holder delays that work.
pub const LEASE_TERM: Duration = Duration::from_secs(10);
/// Most due waits read at once.
const DUE_BATCH: u32 = 256;
/// Most compiled filters cached by a shared edge before the cache starts over.
const FILTER_CACHE: usize = 200_000;

/// Checks a wait's filter as the edge configures its source.
pub(crate) type Compile<'a> = &'a (dyn Fn(&WaitSpec) -> Result<Option<Filter>, String> + Sync);

/// The candidates of one event.
pub(crate) struct Candidates {
    /// Armed waits, by registration sequence.
    pub armed: Vec<Arc<ArmedWait>>,
    /// Waits whose filter this edge refuses (their edge had another configuration).
    pub broken: Vec<(Wait, String)>,
}

/// The open waits of an edge, by [`Routing`].
pub(crate) enum Routes {
    Local(Mutex<WaitIndex>),
    Shared(Shared),
}

/// A shared edge's state: its lease holder name, its filter cache and its lease.
pub(crate) struct Shared {
    holder: String,
    armed: Mutex<HashMap<i64, Arc<ArmedWait>>>,
    lease_until: Mutex<Option<Timestamp>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value is left consistent before any call that could panic.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Routes {
    pub(crate) fn new(routing: &Routing) -> Self {
        match routing {
            Routing::Local => Routes::Local(Mutex::new(WaitIndex::new())),
            Routing::Shared { edge } => Routes::Shared(Shared {
                holder: edge.clone(),
                armed: Mutex::new(HashMap::new()),
                lease_until: Mutex::new(None),
            }),
        }
    }

    /// Whether the edge routes through the store's index.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self, Routes::Shared(_))
    }

    /// Arms a wait this edge registered (or re-armed).
    pub(crate) fn arm(&self, armed: ArmedWait) {
        match self {
            Routes::Local(index) => lock(index).insert(armed),
            Routes::Shared(shared) => {
                let mut cache = lock(&shared.armed);
                if cache.len() >= FILTER_CACHE {
                    cache.clear();
                }
                cache.insert(armed.wait.seq, Arc::new(armed));
            }
        }
    }

    /// Disarms a wait that left `open`.
    pub(crate) fn disarm(&self, seq: i64) {
        match self {
            Routes::Local(index) => {
                lock(index).remove(seq);
            }
            Routes::Shared(shared) => {
                lock(&shared.armed).remove(&seq);
            }
        }
    }

    /// How many waits this edge has armed (for a shared edge: cached).
    pub(crate) fn armed(&self) -> usize {
        match self {
            Routes::Local(index) => lock(index).len(),
            Routes::Shared(shared) => lock(&shared.armed).len(),
        }
    }

    /// The waits each of `events` may go to, oldest registration first, in their order: those
    /// on its subject and on any subject of its source that take its type. A shared edge reads
    /// them from the store at once; a local edge looks them up in its index and checks the type
    /// there, so that the waits of the event's other types are not handed out (the caller checks
    /// [`crate::model::WaitSpec::admits`] either way).
    pub(crate) async fn candidates_many<S: Store>(
        &self,
        store: &S,
        events: &[StoredEvent],
        compile: Compile<'_>,
    ) -> Result<Vec<Candidates>, StoreError> {
        let shared = match self {
            Routes::Local(index) => {
                let index = lock(index);
                return Ok(events
                    .iter()
                    .map(|stored| {
                        let e = &stored.event;
                        Candidates {
                            armed: index.candidates_of_type(&e.source, &e.subject, &e.kind),
                            broken: Vec::new(),
                        }
                    })
                    .collect());
            }
            Routes::Shared(shared) => shared,
        };
        // The store's statement takes owned keys.
        let keys: Vec<(String, String, String)> = events
            .iter()
            .map(|s| {
                let e = &s.event;
                (e.source.clone(), e.subject.clone(), e.kind.clone())
            })
            .collect();
        let found = store.open_waits_on_many(&keys).await?;
        let mut out = Vec::with_capacity(found.len());
        for waits in found {
            let mut candidates = Candidates {
                armed: Vec::with_capacity(waits.len()),
                broken: Vec::new(),
            };
            for wait in waits {
                let cached = lock(&shared.armed).get(&wait.seq).cloned();
                if let Some(armed) = cached {
                    candidates.armed.push(armed);
                    continue;
                }
                match compile(&wait.spec) {
                    Ok(filter) => {
                        let armed = ArmedWait { wait, filter };
                        let seq = armed.wait.seq;
                        self.arm(armed);
                        if let Some(armed) = lock(&shared.armed).get(&seq).cloned() {
                            candidates.armed.push(armed);
                        }
                    }
                    Err(reason) => candidates.broken.push((wait, reason)),
                }
            }
            out.push(candidates);
        }
        Ok(out)
    }

    /// The open waits due at `now`, earliest first: all of them for a local edge; for a shared
    /// edge, a batch of them while it holds the sweeper lease, none otherwise.
    pub(crate) async fn due<S: Store>(
        &self,
        store: &S,
        now: Timestamp,
    ) -> Result<Vec<Wait>, StoreError> {
        match self {
            Routes::Local(index) => Ok(lock(index)
                .due(now)
                .iter()
                .map(|a| a.wait.clone())
                .collect()),
            Routes::Shared(_) => {
                if !self.holds_sweeper(store, now).await? {
                    return Ok(Vec::new());
                }
                store.due_waits(now, DUE_BATCH).await
            }
        }
    }

    /// The earliest deadline of an open wait.
    pub(crate) async fn next_deadline<S: Store>(
        &self,
        store: &S,
    ) -> Result<Option<Timestamp>, StoreError> {
        match self {
            Routes::Local(index) => Ok(lock(index).next_deadline()),
            Routes::Shared(_) => store.next_deadline().await,
        }
    }

    /// Whether this edge does the work of all edges now: always when alone; when shared, while
    /// it holds the sweeper lease (taken when free or expired, renewed at half its term).
    pub(crate) async fn holds_sweeper<S: Store>(
        &self,
        store: &S,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let Routes::Shared(shared) = self else {
            return Ok(true);
        };
        let held = *lock(&shared.lease_until);
        let half = LEASE_TERM / 2;
        if held.is_some_and(|until| now.plus(half) < until) {
            return Ok(true);
        }
        let until = now.plus(LEASE_TERM);
        let taken = store
            .take_lease(SWEEPER_LEASE, &shared.holder, now, until)
            .await?;
        *lock(&shared.lease_until) = taken.then_some(until);
        Ok(taken)
    }
}
