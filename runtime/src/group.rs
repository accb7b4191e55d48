//! Work that arrives while a batch of its kind is running waits and goes in the next batch
//! together (group commit at the edge): a store whose statements cost a round trip each takes
//! many deliveries in one transaction of set-wise statements instead of one transaction each.
//!
//! The batches run on a task of their own, started by the caller that finds none running; it
//! takes what is waiting (up to the batch size), runs it, answers each caller, and goes on while
//! anything waits. A caller's wait is bounded by the batch running when it came and its own. The
//! task belongs to no caller: a caller that stops waiting (its sender hung up) stops nothing,
//! and its item is still done, as a delivery that reached the edge is. Only a panic in the work
//! ends a batch unanswered; its callers then hear `None` and run their items alone.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Callers waiting to be batched.
pub(crate) struct Group<T, R> {
    state: Mutex<State<T, R>>,
}

struct State<T, R> {
    /// Whether a task is running batches.
    running: bool,
    waiting: VecDeque<(T, oneshot::Sender<R>)>,
}

impl<T, R> Default for Group<T, R> {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                running: false,
                waiting: VecDeque::new(),
            }),
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Group<T, R> {
    fn lock(&self) -> MutexGuard<'_, State<T, R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `item` in a batch of at most `max` items: `work` gets a batch and returns one
    /// answer per item, in order. Returns this item's answer, or `None` if its batch ended
    /// without one (the work panicked or answered too few): the caller then runs it alone.
    /// Must be called inside a tokio runtime.
    pub(crate) async fn run<W, Fut>(self: &Arc<Self>, item: T, max: usize, work: W) -> Option<R>
    where
        W: Fn(Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<R>> + Send + 'static,
    {
        let answer = self.submit(vec![item], max, work).pop()?;
        answer.await.ok()
    }

    /// Queues `items`, in order and at once, for batches of at most `max` (see [`Group::run`]),
    /// and returns where each item's answer will come; a receiver that hears nothing (its
    /// batch ended without answering) means the item was not done in a batch. Nobody needs to
    /// wait for the answers: the items are done anyway. Must be called inside a tokio runtime.
    pub(crate) fn submit<W, Fut>(
        self: &Arc<Self>,
        items: Vec<T>,
        max: usize,
        work: W,
    ) -> Vec<oneshot::Receiver<R>>
    where
        W: Fn(Vec<T>) -> Fut + Send + 'static,
        Fut: Future<Output = Vec<R>> + Send + 'static,
    {
        if items.is_empty() {
            return Vec::new();
        }
        let mut answers = Vec::with_capacity(items.len());
        let start = {
            let mut state = self.lock();
            for item in items {
                let (tx, rx) = oneshot::channel();
                state.waiting.push_back((item, tx));
                answers.push(rx);
            }
            !std::mem::replace(&mut state.running, true)
        };
        if start {
            let group = Arc::clone(self);
            tokio::spawn(async move {
                let running = Running(&group);
                loop {
                    let (items, answer_to): (Vec<T>, Vec<oneshot::Sender<R>>) = {
                        let mut state = group.lock();
                        if state.waiting.is_empty() {
                            state.running = false;
                            std::mem::forget(running);
                            return;
                        }
                        let n = state.waiting.len().min(max.max(1));
                        state.waiting.drain(..n).unzip()
                    };
                    let answers = work(items).await;
                    for (tx, answer) in answer_to.into_iter().zip(answers) {
                        // A caller that stopped waiting has nobody to tell.
                        let _ = tx.send(answer);
                    }
                }
            });
        }
        answers
    }
}

/// Held by the batch task and forgotten when it returns; dropped only when the task ends
/// otherwise (the work panicked, or the runtime dropped the task). Everyone still waiting then
/// hears `None` and runs alone, and the next caller starts a new task.
struct Running<'a, T, R>(&'a Group<T, R>);

impl<T, R> Drop for Running<'_, T, R> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.waiting.clear();
        state.running = false;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Waits for the batch task to stop, which it does just after its last answer (or, when
    /// its work panicked, while unwinding).
    async fn stopped<T: Send + 'static, R: Send + 'static>(group: &Group<T, R>) {
        for _ in 0..200 {
            if !group.lock().running {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the batch task did not stop");
    }

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
                    .run(i, 8, move |items: Vec<usize>| {
                        let batches = batches.clone();
                        async move {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            batches.lock().unwrap().push(items.len());
                            items.iter().map(|i| i * 10).collect()
                        }
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
    }

    /// Callers that stop waiting, at any point, stop nothing: the batches go on, every item is
    /// done once, and the callers still waiting get their answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn callers_that_stop_waiting_strand_nobody() {
        let group = Arc::new(Group::<usize, usize>::default());
        let done = Arc::new(AtomicUsize::new(0));
        let work = |done: Arc<AtomicUsize>| {
            move |items: Vec<usize>| {
                let done = done.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    done.fetch_add(items.len(), Ordering::SeqCst);
                    items
                }
            }
        };
        let mut kept = Vec::new();
        for i in 0..60 {
            let (group, work) = (group.clone(), work(done.clone()));
            let task = tokio::spawn(async move { group.run(i, 4, work).await });
            if i % 3 == 0 {
                // Given up at once, in the middle of a batch, or while waiting.
                tokio::time::sleep(Duration::from_millis(i as u64 % 7)).await;
                task.abort();
            } else {
                kept.push((i, task));
            }
        }
        for (i, task) in kept {
            let answer = tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .expect("a caller was stranded")
                .unwrap();
            assert_eq!(answer, Some(i));
        }
        // A caller after all that is answered too.
        let last = tokio::time::timeout(
            Duration::from_secs(5),
            group.run(100, 4, work(done.clone())),
        )
        .await
        .expect("the group stopped answering");
        assert_eq!(last, Some(100));
        // The 41 kept, and those given up after their item was queued.
        let done = done.load(Ordering::SeqCst);
        assert!((41..=61).contains(&done), "{done}");
        stopped(&group).await;
    }

    /// Items submitted together are queued at once and in order, are done whether or not
    /// anybody waits for their answers, and each answer goes to its own item.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn submitted_items_are_done_in_order_without_waiting_callers() {
        let group = Arc::new(Group::<usize, usize>::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let work = |seen: Arc<Mutex<Vec<usize>>>| {
            move |items: Vec<usize>| {
                let seen = seen.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    seen.lock().unwrap().extend(&items);
                    items.iter().map(|i| i + 1000).collect()
                }
            }
        };
        // Nobody waits for the first twenty: their receivers are dropped at once.
        drop(group.submit((0..20).collect(), 6, work(seen.clone())));
        let answers = group.submit((20..40).collect(), 6, work(seen.clone()));
        for (i, answer) in (20..40).zip(answers) {
            let answer = tokio::time::timeout(Duration::from_secs(5), answer)
                .await
                .expect("an answer")
                .expect("answered");
            assert_eq!(answer, i + 1000);
        }
        stopped(&group).await;
        assert_eq!(*seen.lock().unwrap(), (0..40).collect::<Vec<_>>());
        assert!(group.submit(Vec::new(), 6, work(seen.clone())).is_empty());
    }

    /// Work that panics ends its batch unanswered: its callers hear `None` (and run alone),
    /// and the next caller starts batches again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_batch_answers_none_and_the_next_one_runs() {
        let group = Arc::new(Group::<usize, usize>::default());
        let answer = group
            .run(1, 4, |_items: Vec<usize>| async move {
                panic!("the work failed");
                #[allow(unreachable_code)]
                Vec::new()
            })
            .await;
        assert_eq!(answer, None);
        stopped(&group).await;
        let answer = group
            .run(2, 4, |items: Vec<usize>| async move { items })
            .await;
        assert_eq!(answer, Some(2));
    }
}
