//! Work that arrives while a batch of its kind is running waits and goes in the next batch
//! together (group commit at the edge): a store whose statements cost a round trip each takes
//! many deliveries in one transaction of set-wise statements instead of one transaction each.
//!
//! No task is spawned. The first caller leads: it takes what is waiting (up to the batch size)
//! with its own item, runs the batch, answers the others and hands the lead to the oldest
//! caller still waiting, who runs the next batch. So every caller leads at most one batch, and
//! its wait is bounded by the batch before it and its own. A leader whose future is dropped
//! mid-batch (a sender that hung up) hands the lead on as well, and the callers of its batch
//! hear that nobody will answer them and run their items alone.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Callers waiting to be batched, with the lead.
pub(crate) struct Group<T, R> {
    state: Mutex<State<T, R>>,
}

struct State<T, R> {
    leading: bool,
    waiting: VecDeque<(T, oneshot::Sender<Turn<R>>)>,
}

/// What a waiting caller hears.
enum Turn<R> {
    /// Its item ran in another caller's batch.
    Done(R),
    /// It leads the next batch.
    Lead,
}

impl<T, R> Default for Group<T, R> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                leading: false,
                waiting: VecDeque::new(),
            }),
        }
    }
}

impl<T: Clone, R> Group<T, R> {
    fn lock(&self) -> MutexGuard<'_, State<T, R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `item` in a batch of at most `max` items: `work` gets the batch (this caller's item
    /// first) and returns one answer per item, in order. Returns this item's answer, or `None`
    /// if the batch it was taken into ended without answering it (its leader was dropped, or
    /// `work` answered too few): the caller then runs it alone.
    pub(crate) async fn run<F, Fut>(&self, item: T, max: usize, work: F) -> Option<R>
    where
        F: FnOnce(Vec<T>) -> Fut,
        Fut: Future<Output = Vec<R>>,
    {
        let waiting = {
            let mut state = self.lock();
            if state.leading {
                let (tx, rx) = oneshot::channel();
                state.waiting.push_back((item.clone(), tx));
                Some(rx)
            } else {
                state.leading = true;
                None
            }
        };
        if let Some(rx) = waiting {
            match rx.await {
                Ok(Turn::Done(answer)) => return Some(answer),
                Ok(Turn::Lead) => {}
                Err(_) => return None,
            }
        }
        let lead = Lead(self);
        let (items, answer_to): (Vec<T>, Vec<oneshot::Sender<Turn<R>>>) = {
            let mut state = self.lock();
            let n = state.waiting.len().min(max.saturating_sub(1));
            state.waiting.drain(..n).unzip()
        };
        let mut batch = Vec::with_capacity(items.len() + 1);
        batch.push(item);
        batch.extend(items);
        let mut answers = work(batch).await.into_iter();
        let mine = answers.next();
        for (tx, answer) in answer_to.into_iter().zip(answers) {
            // A caller that stopped waiting has nobody to tell.
            let _ = tx.send(Turn::Done(answer));
        }
        drop(lead);
        mine
    }
}

/// The lead, held while a batch runs; dropping it hands the lead to the oldest caller still
/// waiting, or gives it up when none is.
struct Lead<'a, T, R>(&'a Group<T, R>);

impl<T, R> Drop for Lead<'_, T, R> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((_, tx)) = state.waiting.pop_front() {
            if tx.send(Turn::Lead).is_ok() {
                return;
            }
        }
        state.leading = false;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Items that arrive while a batch runs go together in the next one, each caller gets its
    /// own answer, and no batch is larger than asked.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn callers_that_arrive_during_a_batch_share_the_next_one() {
        let group = Arc::new(Group::<usize, usize>::default());
        let batches = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..40 {
            let (group, batches) = (group.clone(), batches.clone());
            tasks.push(tokio::spawn(async move {
                group
                    .run(i, 8, |items| async move {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        batches.lock().unwrap().push(items.len());
                        items.iter().map(|i| i * 10).collect()
                    })
                    .await
            }));
        }
        for (i, task) in tasks.into_iter().enumerate() {
            assert_eq!(task.await.unwrap(), Some(i * 10));
        }
        let batches = batches.lock().unwrap();
        assert_eq!(batches.iter().sum::<usize>(), 40);
        assert!(batches.iter().all(|&n| n <= 8), "{batches:?}");
        assert!(batches.len() < 40, "nothing was batched: {batches:?}");
        assert!(!group.lock().leading);
    }

    /// A leader dropped in the middle of its batch hands the lead on, and the callers of its
    /// batch are told to run alone instead of waiting forever.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_leader_strands_nobody() {
        let group = Arc::new(Group::<usize, usize>::default());
        let started = Arc::new(tokio::sync::Notify::new());
        let leader = {
            let (group, started) = (group.clone(), started.clone());
            tokio::spawn(async move {
                group
                    .run(0, 2, |items| async move {
                        started.notify_one();
                        std::future::pending::<()>().await;
                        items
                    })
                    .await
            })
        };
        started.notified().await;
        let ran = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 1..4 {
            let (group, ran) = (group.clone(), ran.clone());
            tasks.push(tokio::spawn(async move {
                group
                    .run(i, 2, |items| async move {
                        ran.fetch_add(items.len(), Ordering::SeqCst);
                        items
                    })
                    .await
            }));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // All three wait behind the stuck leader.
        assert_eq!(group.lock().waiting.len(), 3);
        leader.abort();
        let answers: Vec<Option<usize>> = {
            let mut out = Vec::new();
            for task in tasks {
                out.push(
                    tokio::time::timeout(Duration::from_secs(5), task)
                        .await
                        .expect("a caller was stranded")
                        .unwrap(),
                );
            }
            out
        };
        assert_eq!(answers, vec![Some(1), Some(2), Some(3)]);
        assert_eq!(ran.load(Ordering::SeqCst), 3);
        assert!(!group.lock().leading);
    }

    /// A caller whose batch was taken by a leader that then went away hears `None`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_dropped_with_its_leader_answers_none() {
        let group = Arc::new(Group::<usize, usize>::default());
        {
            let mut state = group.lock();
            state.leading = true;
        }
        let follower = {
            let group = group.clone();
            tokio::spawn(async move { group.run(7, 4, |items| async move { items }).await })
        };
        while group.lock().waiting.is_empty() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // A leader takes the follower into its batch, then drops it unanswered.
        let (_, tx) = group.lock().waiting.pop_front().unwrap();
        drop(tx);
        assert_eq!(follower.await.unwrap(), None);
    }
}
