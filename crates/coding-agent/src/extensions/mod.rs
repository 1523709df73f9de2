//! The extension runtime: the events of the TypeScript pi's extension API, what
//! extensions register, how their answers combine, and the Rust trait for in-process
//! extensions. It knows no mode: AgentSession calls it, and each mode binds a UI.
//! TypeScript extensions run in the node host (`crate::extension_host`).

pub mod actions;
pub mod backend;
pub mod boundary;
pub mod discovery;
pub mod event;
pub mod outcome;
mod project_trust;
pub mod provider_stream;
pub mod registry;
pub mod request_hooks;
pub mod runtime;
pub mod rust;
pub mod tool;
mod tool_calls;
pub mod ui;

pub use actions::{
    ExtensionAction, ExtensionActions, ExtensionMessage, SendMessageOptions, StateSnapshot,
};
pub use backend::{BackendError, ExtensionBackend, ExtensionBinding};
pub use event::{EVENT_TYPES, ExtensionEvent, RunTrigger};
pub use outcome::{
    BeforeAgentStartOutcome, InputOutcome, ToolCallOutcome, ToolResultPatch, UserBashAnswer,
};
pub use project_trust::TrustAnswer;
pub use registry::{ExtensionErrorInfo, FlagDef, LoadError, LoadedExtension};
pub use runtime::ExtensionRuntime;
pub use rust::{Extension, ExtensionContext, Registrations, RustBackend};
pub use ui::{ExtensionUi, NoUi, UiDialog, UiNotice};
