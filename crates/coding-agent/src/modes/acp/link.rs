//! The connection to the editor, once it exists, and the session it is working in: what
//! the event forwarder and the extension UI need to reach the client.

use std::sync::{Mutex, OnceLock, PoisonError};

use agent_client_protocol::Client;

use super::edits::EditorEdits;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionNotification, SessionUpdate};

/// Shared by the handlers, the event forwarder and the UI.
#[derive(Default)]
pub struct Link {
    connection: OnceLock<ConnectionTo<Client>>,
    session_id: Mutex<Option<String>>,
    /// What went through the editor's files, for the diffs.
    pub edits: EditorEdits,
}

impl Link {
    /// Keeps the connection the first handler got.
    pub fn connect(&self, connection: &ConnectionTo<Client>) {
        let _ = self.connection.set(connection.clone());
    }

    pub fn connection(&self) -> Option<&ConnectionTo<Client>> {
        self.connection.get()
    }

    /// The session the client works in now (`None` before `session/new`).
    pub fn session_id(&self) -> Option<String> {
        self.session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn set_session_id(&self, id: Option<String>) {
        *self
            .session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = id;
    }

    /// Sends an update of the current session; dropped when there is none yet.
    pub fn update(&self, update: SessionUpdate) {
        if let (Some(connection), Some(id)) = (self.connection(), self.session_id()) {
            let _ = connection.send_notification(SessionNotification::new(id, update));
        }
    }
}
