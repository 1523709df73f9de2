//! A session's JSONL lines in `PI_SESS`: written by its owner in order, each append fenced
//! by the sequence of the one before (a node that lost the lane cannot append again), and
//! read back whole by the node that takes the lane over, byte for byte the session file.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use pi_coding_agent::session::line_sink::LineSink;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::engine::{ClusterError, ENTRIES, Engine};

/// The owner's side: lines queued by the session manager, appended in order.
#[derive(Clone)]
pub struct EntryWriter {
    sender: mpsc::UnboundedSender<String>,
    queued: Arc<AtomicU64>,
    written: Arc<AtomicU64>,
    progress: Arc<Notify>,
    /// Cancelled when an append was fenced: another node owns the session now.
    pub fenced: CancellationToken,
}

impl EntryWriter {
    /// Starts appending `session`'s lines after sequence `last` (0: none yet).
    pub fn start(engine: Engine, session: &str, last: u64) -> Self {
        let (sender, mut lines) = mpsc::unbounded_channel::<String>();
        let writer = Self {
            sender,
            queued: Arc::new(AtomicU64::new(0)),
            written: Arc::new(AtomicU64::new(0)),
            progress: Arc::new(Notify::new()),
            fenced: CancellationToken::new(),
        };
        let task = writer.clone();
        let session = session.to_owned();
        // One writer's appends share this; a restarted node writes with another.
        let writer_id = uuid::Uuid::new_v4().simple().to_string();
        tokio::spawn(async move {
            let mut expected = last;
            while let Some(line) = lines.recv().await {
                if task.fenced.is_cancelled() {
                    break;
                }
                // The id names this writer and the position: its own retry after a lost ack
                // is deduplicated, another owner's append at the same position is not.
                let id = format!("{session}:{}:{writer_id}:{expected}", engine.config.node_id);
                let mut pause = Duration::from_millis(50);
                loop {
                    match engine
                        .append_entry(&session, &id, Bytes::from(line.clone()), expected)
                        .await
                    {
                        Ok(sequence) => {
                            expected = sequence;
                            break;
                        }
                        Err(ClusterError::Fenced(_)) => {
                            task.fenced.cancel();
                            break;
                        }
                        Err(_) => {
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(2));
                        }
                    }
                }
                task.written.fetch_add(1, Ordering::SeqCst);
                task.progress.notify_waiters();
                if task.fenced.is_cancelled() {
                    break;
                }
            }
            task.progress.notify_waiters();
        });
        writer
    }

    /// The sink to give the session manager.
    pub fn sink(&self) -> LineSink {
        let sender = self.sender.clone();
        let queued = Arc::clone(&self.queued);
        LineSink(Arc::new(move |line| {
            queued.fetch_add(1, Ordering::SeqCst);
            let _ = sender.send(line.to_owned());
        }))
    }

    /// Waits until every line queued so far is appended; false when fenced first.
    pub async fn flush(&self) -> bool {
        loop {
            let notified = self.progress.notified();
            if self.fenced.is_cancelled() {
                return false;
            }
            if self.written.load(Ordering::SeqCst) >= self.queued.load(Ordering::SeqCst) {
                return true;
            }
            notified.await;
        }
    }
}

impl Engine {
    /// Every line of `session` in order, and the sequence of the last one (0: none).
    pub async fn load_entries(&self, session: &str) -> Result<(Vec<Bytes>, u64), ClusterError> {
        let messages = self
            .read_subject(ENTRIES, &format!("pi.sess.{session}"))
            .await?;
        let last = messages.last().map_or(0, |(seq, _)| *seq);
        Ok((messages.into_iter().map(|(_, line)| line).collect(), last))
    }
}
