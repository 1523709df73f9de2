//! The extension UI of interactive mode: what `ctx.ui` does in the terminal.
//!
//! Extensions call `ctx.ui` from the extension host (or a Rust extension); the calls
//! arrive through [`bridge::InteractiveUi`] as [`ExtEvent`]s on the UI task's channel, so
//! all UI state stays with the UI task ([`state::ExtensionUiState`]). Components built
//! in the host (custom dialogs, widgets, footers, tool and message renderers) are drawn
//! from lines the host renders on request ([`remote::RemoteView`]), keys reach them as
//! terminal bytes ([`key_bytes`]).
//!
//! - [`dialogs`]: select / confirm / input / editor with countdowns.
//! - [`widgets`]: widgets above / below the editor and the footer's status line.
//! - [`overlay_layout`]: where overlays go and how they are drawn over the frame.
//! - [`tool_renderer`], [`custom_message`]: extension renderers in the chat.
//! - [`line_input`]: the one-line input of the input dialog.
//! - [`autocomplete`]: extension commands and their argument completions.

pub(crate) mod autocomplete;
pub(crate) mod bridge;
pub(crate) mod custom_entry;
pub(crate) mod custom_message;
pub(crate) mod dialogs;
pub(crate) mod key_bytes;
pub(crate) mod line_input;
pub(crate) mod overlay_layout;
pub(crate) mod remote;
pub(crate) mod state;
pub(crate) mod tool_renderer;
pub(crate) mod widgets;

use pi_tui::Input;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::extensions::{ExtensionErrorInfo, UiDialog, UiNotice};

pub(crate) use state::{ExtensionUiState, KeyTarget};

/// Something extensions (or the host worker) want from the UI task.
#[derive(Debug)]
pub(crate) enum ExtEvent {
    /// A fire-and-forget `ctx.ui` call.
    Notice(UiNotice),
    /// A dialog (or `ui.custom`) waiting for its answer on `reply`.
    Dialog {
        dialog: UiDialog,
        reply: oneshot::Sender<Value>,
        cancel: CancellationToken,
    },
    /// A dialog was cancelled (timeout or signal in the host): drop it.
    DialogCancelled,
    /// A handler failed (`extension_error`).
    Error(ExtensionErrorInfo),
    /// `ctx.shutdown()`.
    Shutdown,
    /// The extensions are bound and got `session_start`.
    Bound,
    /// Component lines or renderer answers arrived: draw again.
    Redraw,
    /// The host's input listeners saw a key: drop it (`consume`) or handle `data`.
    TerminalInput {
        input: Input,
        consume: bool,
        data: String,
    },
    /// A shortcut handler failed.
    ShortcutFailed(String),
}
