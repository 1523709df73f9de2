//! Runs by id (the idempotency key): what `chat.send` answers a repeated key with, and what
//! `agent` and `agent.wait` wait for.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use super::translate::{Ending, Finished};

/// Finished runs remembered for repeated keys and `agent.wait`.
const REMEMBERED: usize = 4096;

/// One run.
#[derive(Debug)]
pub struct RunRecord {
    pub session_key: String,
    pub session_id: String,
    pub started_at: i64,
    ended: watch::Sender<Option<Finished>>,
}

impl RunRecord {
    /// The end, once it came.
    pub fn finished(&self) -> Option<Finished> {
        self.ended.borrow().clone()
    }

    /// Waits for the end, at most `limit`.
    pub async fn wait(&self, limit: Duration) -> Option<Finished> {
        let mut ended = self.ended.subscribe();
        tokio::time::timeout(limit, async {
            loop {
                if let Some(done) = ended.borrow_and_update().clone() {
                    return Some(done);
                }
                if ended.changed().await.is_err() {
                    return None;
                }
            }
        })
        .await
        .ok()
        .flatten()
    }
}

/// Every run the OpenClaw listener knows.
#[derive(Default)]
pub struct Runs {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    by_id: HashMap<String, Arc<RunRecord>>,
    order: VecDeque<String>,
}

impl Runs {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, run_id: &str) -> Option<Arc<RunRecord>> {
        self.lock().by_id.get(run_id).cloned()
    }

    /// Records a run about to start; an existing record of the id is returned instead.
    pub fn begin(
        &self,
        run_id: &str,
        session_key: &str,
        session_id: &str,
    ) -> (Arc<RunRecord>, bool) {
        let mut inner = self.lock();
        if let Some(found) = inner.by_id.get(run_id) {
            return (Arc::clone(found), false);
        }
        let (ended, _) = watch::channel(None);
        let record = Arc::new(RunRecord {
            session_key: session_key.to_owned(),
            session_id: session_id.to_owned(),
            started_at: super::frames::now_ms(),
            ended,
        });
        inner.by_id.insert(run_id.to_owned(), Arc::clone(&record));
        inner.order.push_back(run_id.to_owned());
        while inner.order.len() > REMEMBERED {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            let done = inner
                .by_id
                .get(&oldest)
                .is_some_and(|r| r.finished().is_some());
            if done {
                inner.by_id.remove(&oldest);
            } else {
                inner.order.push_back(oldest);
                break;
            }
        }
        (record, true)
    }

    /// Records a run's end (a run started elsewhere gets a record now).
    pub fn finish(&self, finished: Finished, session_key: &str, session_id: &str) {
        let (record, _) = self.begin(&finished.run_id, session_key, session_id);
        record.ended.send_replace(Some(finished));
    }

    /// Ends a run that never started (its prompt could not run).
    pub fn fail(&self, run_id: &str, error: &str) {
        if let Some(record) = self.get(run_id)
            && record.finished().is_none()
        {
            let now = super::frames::now_ms();
            record.ended.send_replace(Some(Finished {
                run_id: run_id.to_owned(),
                ending: Ending::Error,
                text: String::new(),
                started_at: record.started_at,
                ended_at: now,
                error: Some(error.to_owned()),
            }));
        }
    }
}
