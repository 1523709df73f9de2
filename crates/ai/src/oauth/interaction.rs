//! What a sign-in flow shows and asks: the UI (terminal, TUI, RPC) implements it.

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::OAuthError;

/// Something the user should see while signing in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginNotice {
    /// Open this URL (the UI may open a browser); instructions say what comes next.
    AuthUrl {
        url: String,
        instructions: Option<String>,
    },
    /// Enter `user_code` at `verification_uri` (device flow).
    DeviceCode {
        verification_uri: String,
        user_code: String,
    },
    /// A step of the flow.
    Progress(String),
}

/// One choice of a [`LoginPrompt::Select`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectOption {
    pub id: String,
    pub label: String,
}

/// A question the flow needs answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginPrompt {
    /// Pick a sign-in method; the answer is the option's id.
    Select {
        message: String,
        options: Vec<SelectOption>,
    },
    /// Free text (may be empty).
    Text {
        message: String,
        placeholder: Option<String>,
    },
    /// Free text that is not shown as typed (an API key; may be empty).
    Secret { message: String },
    /// A pasted authorization code or redirect URL, racing the browser callback: the flow
    /// cancels the prompt's token when the callback wins.
    ManualCode {
        message: String,
        placeholder: Option<String>,
    },
}

/// The UI side of a sign-in.
pub trait LoginInteraction: Send + Sync {
    /// Shows a notice.
    fn notify(&self, notice: LoginNotice);

    /// Asks a question; `cancel` fires when the answer is no longer needed.
    fn prompt<'a>(
        &'a self,
        prompt: LoginPrompt,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<String, OAuthError>>;

    /// Fires when the user gives up the whole sign-in.
    fn cancel_token(&self) -> CancellationToken;

    /// This installation's device id (a UUID kept in the global settings), which Sign in
    /// with ChatGPT registers the agent under; `None` where the UI keeps no settings.
    fn device_id(&self) -> Option<String> {
        None
    }
}
