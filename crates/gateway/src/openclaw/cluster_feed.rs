//! OpenClaw on a node of a cluster: a session's events reach this node's OpenClaw clients
//! from the cluster's event stream (the feed our protocol's subscribers read), wherever the
//! session runs, and become `agent` and `chat` events as a local session's do.

use std::sync::{Arc, Mutex};

use axum::extract::ws::{Message, Utf8Bytes};
use futures_util::SinkExt;
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::PollSender;

use super::OpenClaw;
use super::translate::Track;
use crate::events::LifecycleEvent;
use crate::server::cluster_hooks::ClusterHooks;
use crate::server::feed::Subscriber;
use crate::server::outbox::Outbox;

/// Frames that may wait between the feed and the translation.
const BACKLOG: usize = 65_536;

/// Follows `session`'s events from the cluster for the OpenClaw clients of `owner`, for as
/// long as the gateway runs. The receiver turns true once the subscription stands: a run
/// started before would have its first events missed.
pub(super) fn follow(
    oc: &Arc<OpenClaw>,
    cluster: &Arc<dyn ClusterHooks>,
    session: &str,
    owner: &str,
    track: Arc<Mutex<Track>>,
) -> watch::Receiver<bool> {
    let (ready, following) = watch::channel(false);
    let (sender, mut frames) = tokio::sync::mpsc::channel::<Message>(1024);
    let sink = PollSender::new(sender).sink_map_err(axum::Error::new);
    let outbox = Outbox::new(Box::pin(sink), BACKLOG);
    tokio::spawn(Arc::clone(&outbox).run_writer(oc.gateway.closing()));
    let subscriber = Subscriber {
        conn: oc.gateway.next_conn_id(),
        outbox,
    };
    // The response to the subscription is for a client; nobody reads it here.
    let subscribed = cluster.subscribe(
        session,
        subscriber,
        None,
        Box::new(|_| Utf8Bytes::from_static("{}")),
    );
    let weak = Arc::downgrade(oc);
    let owner = owner.to_owned();
    tokio::spawn(async move {
        subscribed.await;
        let _ = ready.send(true);
        while let Some(message) = frames.recv().await {
            let Message::Text(text) = message else {
                continue;
            };
            let Some(event) = lifecycle_event(&text) else {
                continue;
            };
            let Some(oc) = weak.upgrade() else {
                return;
            };
            oc.deliver(&owner, &track, &event);
        }
    });
    following
}

/// The lifecycle event an event frame carries.
fn lifecycle_event(frame: &str) -> Option<LifecycleEvent> {
    let mut frame: Value = serde_json::from_str(frame).ok()?;
    if frame["type"] != "event" {
        return None;
    }
    let name = frame["event"].as_str()?.to_owned();
    LifecycleEvent::from_named(&name, frame["payload"].take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_frames_give_their_lifecycle_event_and_other_frames_none() {
        let frame = r#"{"type":"event","event":"text_delta","payload":{"messageId":"m1","delta":"hi","index":0},"seq":7,"stateVersion":2,"sessionId":"s","ts":1}"#;
        match lifecycle_event(frame) {
            Some(LifecycleEvent::TextDelta(delta)) => assert_eq!(delta.delta, "hi"),
            other => panic!("{other:?}"),
        }
        assert!(lifecycle_event(r#"{"type":"response","id":1,"ok":true}"#).is_none());
        assert!(lifecycle_event(r#"{"type":"event","event":"nonsense","payload":{}}"#).is_none());
        assert!(lifecycle_event("not json").is_none());
    }
}
