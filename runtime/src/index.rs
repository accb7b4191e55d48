//! The edge's index of open waits: by `(source, subject)` and by `(source, any subject)`, plus
//! the deadlines in one ordered set. Looking up an event costs the number of waits on its
//! subject and on any subject of its source, never a scan of every wait.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::clock::Timestamp;
use crate::filter::Filter;
use crate::model::Wait;

/// An open wait as the edge holds it: its row and its checked filter.
#[derive(Debug)]
pub struct ArmedWait {
    /// The wait as stored.
    pub wait: Wait,
    /// The filter, checked when the wait was registered (or re-armed).
    pub filter: Option<Filter>,
}

#[derive(Debug, Default)]
struct SourceWaits {
    any_subject: BTreeMap<i64, Arc<ArmedWait>>,
    by_subject: HashMap<String, BTreeMap<i64, Arc<ArmedWait>>>,
}

/// Open waits by route and by deadline.
#[derive(Debug, Default)]
pub struct WaitIndex {
    sources: HashMap<String, SourceWaits>,
    deadlines: BTreeSet<(Timestamp, i64)>,
    armed: HashMap<i64, Arc<ArmedWait>>,
}

impl WaitIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many waits are armed.
    pub fn len(&self) -> usize {
        self.armed.len()
    }

    /// Whether no wait is armed.
    pub fn is_empty(&self) -> bool {
        self.armed.is_empty()
    }

    /// Arms a wait (again, after a restart).
    pub fn insert(&mut self, armed: ArmedWait) {
        let armed = Arc::new(armed);
        let seq = armed.wait.seq;
        let source = self
            .sources
            .entry(armed.wait.spec.source.clone())
            .or_default();
        match &armed.wait.spec.subject {
            None => source.any_subject.insert(seq, armed.clone()),
            Some(subject) => source
                .by_subject
                .entry(subject.clone())
                .or_default()
                .insert(seq, armed.clone()),
        };
        self.deadlines.insert((armed.wait.deadline, seq));
        self.armed.insert(seq, armed);
    }

    /// Disarms a wait; `None` if it was not armed.
    pub fn remove(&mut self, seq: i64) -> Option<Arc<ArmedWait>> {
        let armed = self.armed.remove(&seq)?;
        self.deadlines.remove(&(armed.wait.deadline, seq));
        if let Some(source) = self.sources.get_mut(&armed.wait.spec.source) {
            match &armed.wait.spec.subject {
                None => {
                    source.any_subject.remove(&seq);
                }
                Some(subject) => {
                    if let Some(waits) = source.by_subject.get_mut(subject) {
                        waits.remove(&seq);
                        if waits.is_empty() {
                            source.by_subject.remove(subject);
                        }
                    }
                }
            }
            if source.any_subject.is_empty() && source.by_subject.is_empty() {
                self.sources.remove(&armed.wait.spec.source);
            }
        }
        Some(armed)
    }

    /// The waits an event of `source` about `subject` may go to, oldest registration first.
    pub fn candidates(&self, source: &str, subject: &str) -> Vec<Arc<ArmedWait>> {
        let Some(waits) = self.sources.get(source) else {
            return Vec::new();
        };
        let on_subject = waits.by_subject.get(subject);
        let mut out: Vec<Arc<ArmedWait>> =
            Vec::with_capacity(waits.any_subject.len() + on_subject.map_or(0, BTreeMap::len));
        out.extend(waits.any_subject.values().cloned());
        if let Some(on_subject) = on_subject {
            out.extend(on_subject.values().cloned());
        }
        out.sort_unstable_by_key(|a| a.wait.seq);
        out
    }

    /// [`WaitIndex::candidates`] that take events of type `kind`
    /// ([`crate::model::WaitSpec::takes_type`]): the others are passed over under the lock,
    /// not handed out to be passed over by the router.
    pub fn candidates_of_type(
        &self,
        source: &str,
        subject: &str,
        kind: &str,
    ) -> Vec<Arc<ArmedWait>> {
        let Some(waits) = self.sources.get(source) else {
            return Vec::new();
        };
        let takes = |a: &&Arc<ArmedWait>| a.wait.spec.takes_type(kind);
        let mut out: Vec<Arc<ArmedWait>> =
            waits.any_subject.values().filter(takes).cloned().collect();
        let any = out.len();
        if let Some(on_subject) = waits.by_subject.get(subject) {
            out.extend(on_subject.values().filter(takes).cloned());
        }
        // Each map is in sequence order already; only a mix of the two needs sorting.
        if any > 0 && out.len() > any {
            out.sort_unstable_by_key(|a| a.wait.seq);
        }
        out
    }

    /// The earliest deadline of an armed wait.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.deadlines.first().map(|(t, _)| *t)
    }

    /// The waits whose deadline is at or before `now`, earliest first (they stay armed until
    /// removed).
    pub fn due(&self, now: Timestamp) -> Vec<Arc<ArmedWait>> {
        self.deadlines
            .iter()
            .take_while(|(t, _)| *t <= now)
            .filter_map(|(_, seq)| self.armed.get(seq).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::{Since, WaitSpec, WaitState};

    fn wait(seq: i64, source: &str, subject: Option<&str>, deadline: i64) -> ArmedWait {
        typed(seq, source, subject, deadline, None)
    }

    fn typed(
        seq: i64,
        source: &str,
        subject: Option<&str>,
        deadline: i64,
        types: Option<&[&str]>,
    ) -> ArmedWait {
        ArmedWait {
            wait: Wait {
                seq,
                name: format!("w{seq}"),
                job: "j".into(),
                spec: WaitSpec {
                    source: source.into(),
                    types: types.map(|ts| ts.iter().map(|&t| t.to_owned()).collect()),
                    subject: subject.map(str::to_owned),
                    filter: None,
                    timeout: Duration::from_secs(1),
                    since: Since::Job,
                },
                after_seq: 0,
                created_at: Timestamp(0),
                deadline: Timestamp(deadline),
                state: WaitState::Open,
                event: None,
                matched: None,
                reason: None,
            },
            filter: None,
        }
    }

    #[test]
    fn lookups_see_their_subject_and_any_subject_only() {
        let mut index = WaitIndex::new();
        index.insert(wait(3, "gh", Some("a"), 10));
        index.insert(wait(1, "gh", None, 20));
        index.insert(wait(2, "gh", Some("b"), 5));
        index.insert(wait(4, "ci", Some("a"), 5));
        let seqs = |v: Vec<Arc<ArmedWait>>| v.iter().map(|a| a.wait.seq).collect::<Vec<_>>();
        assert_eq!(seqs(index.candidates("gh", "a")), vec![1, 3]);
        assert_eq!(seqs(index.candidates("gh", "c")), vec![1]);
        assert_eq!(seqs(index.candidates("zz", "a")), Vec::<i64>::new());
        assert_eq!(index.next_deadline(), Some(Timestamp(5)));
        assert_eq!(seqs(index.due(Timestamp(10))), vec![2, 4, 3]);
        index.remove(2);
        index.remove(1);
        assert_eq!(seqs(index.candidates("gh", "c")), Vec::<i64>::new());
        assert_eq!(seqs(index.due(Timestamp(10))), vec![4, 3]);
        assert_eq!(index.len(), 2);
        assert!(index.remove(2).is_none());
    }

    #[test]
    fn typed_lookups_pass_over_waits_of_other_types_in_sequence_order() {
        let mut index = WaitIndex::new();
        index.insert(typed(5, "gh", Some("a"), 10, Some(&["push"])));
        index.insert(typed(2, "gh", Some("a"), 10, Some(&["pr", "push"])));
        index.insert(typed(4, "gh", None, 10, None));
        index.insert(typed(1, "gh", None, 10, Some(&["pr"])));
        index.insert(typed(3, "gh", Some("a"), 10, Some(&["tag"])));
        let seqs = |v: Vec<Arc<ArmedWait>>| v.iter().map(|a| a.wait.seq).collect::<Vec<_>>();
        assert_eq!(
            seqs(index.candidates_of_type("gh", "a", "push")),
            vec![2, 4, 5]
        );
        assert_eq!(
            seqs(index.candidates_of_type("gh", "a", "pr")),
            vec![1, 2, 4]
        );
        assert_eq!(seqs(index.candidates_of_type("gh", "b", "tag")), vec![4]);
        assert_eq!(seqs(index.candidates_of_type("gh", "a", "tag")), vec![3, 4]);
        assert_eq!(
            seqs(index.candidates_of_type("zz", "a", "push")),
            Vec::<i64>::new()
        );
    }
}
