//! Progress of tool calls, routed in the order the server sent it. rmcp hands notifications
//! to the client handler in tasks of their own, so a progress notification could reach its
//! call after the call's result. Instead the transport is tapped: a call's progress token
//! is registered as the request goes out, and each progress notification is routed as it
//! is read, before any message after it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, GetMeta, JsonRpcMessage, ProgressToken, RequestParamsMeta, ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use super::lock;

/// Progress of one call: done, total, message.
pub type Progress = (f64, Option<f64>, Option<String>);

/// Where a call's progress goes.
enum Route {
    /// Sent before the call took its route: kept for it.
    Early(Vec<Progress>),
    /// The call's channel.
    Live(mpsc::UnboundedSender<Progress>),
}

/// The calls waiting for progress, by progress token.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes(Arc<Mutex<HashMap<ProgressToken, Route>>>);

impl ProgressRoutes {
    /// Gives the call with `token` its channel, with whatever came before.
    pub(crate) fn open(&self, token: ProgressToken, sender: mpsc::UnboundedSender<Progress>) {
        let mut routes = lock(&self.0);
        if let Some(Route::Early(early)) = routes.remove(&token) {
            for progress in early {
                let _ = sender.send(progress);
            }
        }
        routes.insert(token, Route::Live(sender));
    }

    /// Ends the call's route: its channel closes once what was routed has been read.
    pub(crate) fn close(&self, token: &ProgressToken) {
        lock(&self.0).remove(token);
    }

    /// A call is about to be sent: its progress is kept from now on.
    fn expect(&self, token: ProgressToken) {
        lock(&self.0)
            .entry(token)
            .or_insert_with(|| Route::Early(Vec::new()));
    }

    fn route(&self, token: &ProgressToken, progress: Progress) {
        match lock(&self.0).get_mut(token) {
            Some(Route::Early(early)) => early.push(progress),
            Some(Route::Live(sender)) => {
                let _ = sender.send(progress);
            }
            None => {}
        }
    }
}

/// A transport that routes progress as it reads it.
pub(crate) struct ProgressTap<T> {
    inner: T,
    routes: ProgressRoutes,
}

impl<T> ProgressTap<T> {
    pub(crate) fn new(inner: T, routes: ProgressRoutes) -> Self {
        Self { inner, routes }
    }
}

/// The progress token of an outgoing tool call.
fn call_token(message: &TxJsonRpcMessage<RoleClient>) -> Option<ProgressToken> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    request
        .request
        .get_meta()
        .get_progress_token()
        .or_else(|| call.params.progress_token())
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(token) = call_token(&item) {
            self.routes.expect(token);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
        {
            let params = &progress.params;
            self.routes.route(
                &params.progress_token,
                (params.progress, params.total, params.message.clone()),
            );
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn progress_before_the_route_opens_is_kept_in_order() {
        let routes = ProgressRoutes::default();
        let token = ProgressToken(rmcp::model::NumberOrString::Number(7));
        routes.expect(token.clone());
        routes.route(&token, (1.0, Some(3.0), None));
        let (sender, mut receiver) = mpsc::unbounded_channel();
        routes.open(token.clone(), sender);
        routes.route(&token, (2.0, Some(3.0), None));
        routes.close(&token);
        routes.route(&token, (3.0, Some(3.0), None));
        let mut seen = Vec::new();
        while let Some((done, _, _)) = receiver.recv().await {
            seen.push(done);
        }
        assert_eq!(seen, [1.0, 2.0]);
        // Progress for a token nobody expects goes nowhere.
        let other = ProgressToken(rmcp::model::NumberOrString::Number(8));
        routes.route(&other, (1.0, None, None));
        assert!(lock(&routes.0).is_empty());
    }
}
