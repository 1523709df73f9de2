//! The session as it comes: requests that need it wait until pi has built it, or learn
//! that pi could not start.

use std::sync::Arc;

use agent_client_protocol::{Error, ErrorCode};
use tokio::sync::{oneshot, watch};

use super::link::Link;
use super::server::Server;
use crate::agent_session::AgentSession;

/// The connection's side of a session still being built.
pub struct Pending {
    pub link: Arc<Link>,
    ready: watch::Receiver<Option<Arc<Server>>>,
}

impl Pending {
    /// Waits for the session in the background and binds it to the editor once it comes.
    pub fn new(arrives: oneshot::Receiver<AgentSession>) -> Self {
        let link = Arc::new(Link::default());
        let (set, ready) = watch::channel(None);
        let bind = link.clone();
        tokio::spawn(async move {
            // A dropped sender (pi stopped while starting) closes the channel.
            if let Ok(session) = arrives.await {
                let server = Server::start(session, bind).await;
                let _ = set.send(Some(Arc::new(server)));
            }
        });
        Self { link, ready }
    }

    /// The session, once built.
    pub async fn server(&self) -> Result<Arc<Server>, Error> {
        let mut ready = self.ready.clone();
        let server = ready.wait_for(Option::is_some).await.map_err(|_| {
            Error::new(
                ErrorCode::INTERNAL_ERROR,
                "pi could not start its session; its standard error says why",
            )
        })?;
        server
            .clone()
            .ok_or_else(|| Error::new(ErrorCode::INTERNAL_ERROR, "pi has no session"))
    }

    /// The session if it is built already (requests naming a session come after one).
    pub fn ready(&self) -> Result<Arc<Server>, Error> {
        self.ready.borrow().clone().ok_or_else(|| {
            Error::new(
                ErrorCode::INVALID_PARAMS,
                "No session yet: start one with session/new or session/load",
            )
        })
    }
}
