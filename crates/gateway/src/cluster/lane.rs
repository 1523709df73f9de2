//! Commands for a session reach the node that owns its lane: a request on
//! `pi.lane.<session>`, answered by the owner's subscription. "No responders" means nobody
//! owns the lane, and the sender may claim it.

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio::task::JoinHandle;

use super::engine::{ClusterError, Engine};

/// Handles one command (its payload) in two steps: accepting it (commands are accepted one
/// at a time, in arrival order: the lane's order), which gives the work that produces the
/// reply (run concurrently, so a long prompt does not hold up an interrupt behind it).
pub type Handler =
    std::sync::Arc<dyn Fn(Bytes) -> BoxFuture<'static, BoxFuture<'static, Bytes>> + Send + Sync>;

/// The owner's answering side; dropping it stops answering.
pub struct LaneServer {
    task: JoinHandle<()>,
}

impl Drop for LaneServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn subject(session: &str) -> String {
    format!("pi.lane.{session}")
}

impl Engine {
    /// Answers the commands sent to `session`'s lane with `handler`, accepting them one at
    /// a time in arrival order.
    pub async fn serve_lane(
        &self,
        session: &str,
        handler: Handler,
    ) -> Result<LaneServer, ClusterError> {
        let mut requests = self
            .client
            .subscribe(subject(session))
            .await
            .map_err(|e| ClusterError::JetStream(e.to_string()))?;
        // Subscribed before returning, so a request sent after this is answered.
        self.client
            .flush()
            .await
            .map_err(|e| ClusterError::JetStream(e.to_string()))?;
        let client = self.client.clone();
        let task = tokio::spawn(async move {
            while let Some(request) = requests.next().await {
                let work = handler(request.payload.clone()).await;
                let client = client.clone();
                tokio::spawn(async move {
                    let reply = work.await;
                    if let Some(to) = request.reply {
                        let _ = client.publish(to, reply).await;
                    }
                });
            }
        });
        Ok(LaneServer { task })
    }

    /// Sends a command to `session`'s owner and waits for its reply; `Ok(None)` when nobody
    /// answered: the lane may be unowned, or its owner's subscription has not reached this
    /// server yet. The lease tells which: claim it, and when it is taken, send again.
    pub async fn send_to_owner(
        &self,
        session: &str,
        command: Bytes,
        timeout: Duration,
    ) -> Result<Option<Bytes>, ClusterError> {
        // The client's default request timeout (10 s) would cut off a waiting prompt whose
        // run takes longer; the sender would send it again and get "duplicate" back.
        let request = self.client.send_request(
            subject(session),
            async_nats::Request::new()
                .payload(command)
                .timeout(Some(timeout)),
        );
        match tokio::time::timeout(timeout, request).await {
            Ok(Ok(reply)) => Ok(Some(reply.payload)),
            Ok(Err(e)) if e.kind() == async_nats::client::RequestErrorKind::NoResponders => {
                Ok(None)
            }
            Ok(Err(e)) => Err(ClusterError::JetStream(e.to_string())),
            Err(_) => Err(ClusterError::JetStream(format!(
                "the owner of session {session} did not answer within {} s",
                timeout.as_secs_f64()
            ))),
        }
    }
}
