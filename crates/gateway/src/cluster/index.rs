//! The session index every node shares: one record per session (its tree node: owner,
//! parent, cwd, model, key…) in the `pi_sessions` KV bucket, and on each node a copy kept
//! current by watching the bucket, so any node can list a principal's sessions and check
//! who may open one without asking the owner.

use bytes::Bytes;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::engine::{ClusterError, Engine, SESSIONS, while_stream_unknown};
use super::ordered::KvWatch;

fn js<E: std::fmt::Display>(e: E) -> ClusterError {
    ClusterError::JetStream(e.to_string())
}

/// Called with a session id and its new record (`None`: removed).
pub type OnChange = Arc<dyn Fn(&str, Option<&Value>) + Send + Sync>;

/// A node's copy of the index: session id → record.
#[derive(Clone, Default)]
pub struct IndexView {
    records: Arc<RwLock<HashMap<String, Value>>>,
}

impl IndexView {
    pub fn get(&self, session: &str) -> Option<Value> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    /// Every record, in no particular order.
    pub fn all(&self) -> Vec<Value> {
        self.records
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

impl Engine {
    /// Writes a session's record.
    pub async fn put_record(&self, session: &str, record: &Value) -> Result<(), ClusterError> {
        let bytes = Bytes::from(record.to_string());
        while_stream_unknown(|| self.sessions.put(session, bytes.clone()))
            .await
            .map(|_| ())
            .map_err(js)
    }

    /// Removes a session's record.
    pub async fn delete_record(&self, session: &str) -> Result<(), ClusterError> {
        self.sessions.delete(session).await.map_err(js)
    }

    /// A copy of the index that follows every change, from the records there now on.
    pub async fn watch_index(&self) -> Result<IndexView, ClusterError> {
        self.watch_index_with(Arc::new(|_, _| {})).await
    }

    /// [`Self::watch_index`], calling `on_change` with each record written (or `None` for
    /// one removed) after the copy has it.
    pub async fn watch_index_with(&self, on_change: OnChange) -> Result<IndexView, ClusterError> {
        let mut watch = KvWatch::open(self.jetstream.clone(), SESSIONS, true)
            .await
            .map_err(ClusterError::JetStream)?;
        let view = IndexView::default();
        let records = Arc::clone(&view.records);
        tokio::spawn(async move {
            loop {
                let change = watch.next().await;
                let mut records = records.write().unwrap_or_else(|p| p.into_inner());
                match change.value {
                    Some(value) => {
                        if let Ok(value) = serde_json::from_slice::<Value>(&value) {
                            records.insert(change.key.clone(), value.clone());
                            drop(records);
                            on_change(&change.key, Some(&value));
                        }
                    }
                    None => {
                        records.remove(&change.key);
                        drop(records);
                        on_change(&change.key, None);
                    }
                }
            }
        });
        Ok(view)
    }
}
