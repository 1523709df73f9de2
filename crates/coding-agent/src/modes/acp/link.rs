//! The connection to the editor, once it exists, and the session it is working in: what
//! the event forwarder and the extension UI need to reach the client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use agent_client_protocol::Client;

use super::edits::EditorEdits;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthMethod, CreateElicitationRequest, ElicitationAction, ElicitationContentValue,
    ElicitationFormMode, ElicitationSchema, ElicitationSessionScope, PermissionOption,
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, StringPropertySchema, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The one field of the forms [`Link::ask_text`] sends.
pub const TEXT_FIELD: &str = "text";

/// Shared by the handlers, the event forwarder and the UI.
#[derive(Default)]
pub struct Link {
    connection: OnceLock<ConnectionTo<Client>>,
    session_id: Mutex<Option<String>>,
    /// The login methods `initialize` offered, for `auth_required` errors.
    auth_methods: Mutex<Vec<AuthMethod>>,
    /// The client fills in forms (`elicitation/create`, form mode).
    forms: AtomicBool,
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

    pub fn set_auth_methods(&self, methods: Vec<AuthMethod>) {
        *self
            .auth_methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = methods;
    }

    pub fn auth_methods(&self) -> Vec<AuthMethod> {
        self.auth_methods
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn set_forms(&self, offered: bool) {
        self.forms.store(offered, Ordering::SeqCst);
    }

    /// Asks the editor for one line or block of text through a form (`elicitation/create`):
    /// `None` when it takes no forms (or there is no session), else the text, or `Some(None)`
    /// when the user declined or dismissed it.
    pub async fn ask_text(
        &self,
        message: &str,
        field: StringPropertySchema,
        cancel: CancellationToken,
    ) -> Option<Option<String>> {
        if !self.forms.load(Ordering::SeqCst) {
            return None;
        }
        let connection = self.connection()?.clone();
        let session_id = self.session_id()?;
        let schema = ElicitationSchema::new().property(TEXT_FIELD, field, true);
        let mode = ElicitationFormMode::new(ElicitationSessionScope::new(session_id), schema);
        let request = CreateElicitationRequest::new(mode, message.to_owned());
        let answer = tokio::select! {
            answer = connection.send_request(request).block_task() => answer.ok(),
            () = cancel.cancelled() => None,
        };
        let Some(answer) = answer else {
            return Some(None);
        };
        Some(match answer.action {
            ElicitationAction::Accept(accepted) => {
                match accepted.content.and_then(|mut c| c.remove(TEXT_FIELD)) {
                    Some(ElicitationContentValue::String(text)) => Some(text),
                    _ => None,
                }
            }
            _ => None,
        })
    }

    /// Sends an update of the current session; dropped when there is none yet.
    pub fn update(&self, update: SessionUpdate) {
        if let (Some(connection), Some(id)) = (self.connection(), self.session_id()) {
            let _ = connection.send_notification(SessionNotification::new(id, update));
        }
    }

    /// Asks the editor to pick one of `options` (id, name, kind) through
    /// `session/request_permission`, the question shown as a pending call `call_id`;
    /// `None` when it cannot be asked or was dismissed.
    pub async fn ask(
        &self,
        call_id: &str,
        title: &str,
        raw_input: Value,
        options: Vec<(String, String, PermissionOptionKind)>,
        cancel: CancellationToken,
    ) -> Option<String> {
        let connection = self.connection()?.clone();
        let session_id = self.session_id()?;
        let call = ToolCallUpdate::new(
            call_id.to_owned(),
            ToolCallUpdateFields::new()
                .title(title.to_owned())
                .kind(ToolKind::Other)
                .status(ToolCallStatus::Pending)
                .raw_input(raw_input),
        );
        let options = options
            .into_iter()
            .map(|(id, name, kind)| PermissionOption::new(id, name, kind))
            .collect();
        let request = RequestPermissionRequest::new(session_id, call, options);
        let answer = tokio::select! {
            answer = connection.send_request(request).block_task() => answer.ok()?,
            () = cancel.cancelled() => return None,
        };
        match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.0.to_string()),
            _ => None,
        }
    }
}
