//! The UI extensions talk to (`ctx.ui`): each mode implements [`ExtensionUi`]. Dialogs wait
//! for an answer; everything else is fire-and-forget.

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A dialog an extension opened; the answer is a JSON value (`null` when dismissed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "camelCase")]
pub enum UiDialog {
    /// → the chosen option, or `null`.
    Select {
        title: String,
        options: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// → `true` / `false`.
    Confirm {
        title: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// → the text, or `null`.
    Input {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    /// → the edited text, or `null`.
    Editor {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill: Option<String>,
    },
    /// A component drawn by the extension host (`ctx.ui.custom`); answered when it is
    /// no longer shown.
    #[serde(rename_all = "camelCase")]
    Custom {
        component_id: u64,
        #[serde(default)]
        overlay: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        overlay_options: Option<Value>,
        #[serde(default)]
        wants_key_release: bool,
    },
}

impl UiDialog {
    /// The answer a dialog gets when it is dismissed, times out or cannot be shown.
    pub fn empty_answer(&self) -> Value {
        match self {
            Self::Confirm { .. } => Value::Bool(false),
            _ => Value::Null,
        }
    }

    /// The dialog's timeout in milliseconds, if it has one.
    pub fn timeout_ms(&self) -> Option<u64> {
        match self {
            Self::Select { timeout, .. }
            | Self::Confirm { timeout, .. }
            | Self::Input { timeout, .. } => *timeout,
            _ => None,
        }
    }
}

/// A fire-and-forget UI call; the field names are those of the RPC `extension_ui_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method")]
pub enum UiNotice {
    #[serde(rename = "notify")]
    Notify {
        message: String,
        #[serde(
            rename = "notifyType",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        notify_type: Option<String>,
    },
    #[serde(rename = "setStatus", rename_all = "camelCase")]
    SetStatus {
        status_key: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_text: Option<String>,
    },
    #[serde(rename = "setWidget", rename_all = "camelCase")]
    SetWidget {
        widget_key: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_lines: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        component_id: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_placement: Option<String>,
    },
    #[serde(rename = "setTitle")]
    SetTitle { title: String },
    #[serde(rename = "set_editor_text")]
    SetEditorText {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    #[serde(rename = "pasteToEditor")]
    PasteToEditor { text: String },
    #[serde(rename = "setWorkingMessage")]
    SetWorkingMessage {
        #[serde(default)]
        message: Option<String>,
    },
    #[serde(rename = "setWorkingVisible")]
    SetWorkingVisible { visible: bool },
    #[serde(rename = "setWorkingIndicator")]
    SetWorkingIndicator {
        #[serde(default)]
        options: Option<Value>,
    },
    #[serde(rename = "setHiddenThinkingLabel")]
    SetHiddenThinkingLabel {
        #[serde(default)]
        label: Option<String>,
    },
    #[serde(rename = "setFooter", rename_all = "camelCase")]
    SetFooter {
        #[serde(default)]
        component_id: Option<u64>,
    },
    #[serde(rename = "setHeader", rename_all = "camelCase")]
    SetHeader {
        #[serde(default)]
        component_id: Option<u64>,
    },
    #[serde(rename = "setEditorComponent", rename_all = "camelCase")]
    SetEditorComponent {
        #[serde(default)]
        component_id: Option<u64>,
    },
    #[serde(rename = "setToolsExpanded")]
    SetToolsExpanded { expanded: bool },
    #[serde(rename = "setTheme")]
    SetTheme { name: String },
    #[serde(rename = "requestRender", rename_all = "camelCase")]
    RequestRender { component_id: u64 },
    #[serde(rename = "done", rename_all = "camelCase")]
    Done {
        component_id: u64,
        #[serde(default)]
        value: Value,
    },
    /// A custom editor (`setEditorComponent`) submitted its text.
    #[serde(rename = "editorSubmit", rename_all = "camelCase")]
    EditorSubmit { component_id: u64, text: String },
    /// A custom editor's text changed.
    #[serde(rename = "editorChange", rename_all = "camelCase")]
    EditorChange { component_id: u64, text: String },
    /// A custom editor asks for an app action (`app.interrupt`, `app.exit`, …).
    #[serde(rename = "editorAction", rename_all = "camelCase")]
    EditorAction { component_id: u64, action: String },
    /// `tui.showOverlay(component, options)` of a host component.
    #[serde(rename = "showOverlay", rename_all = "camelCase")]
    ShowOverlay {
        component_id: u64,
        #[serde(default)]
        parent_component_id: Option<u64>,
        #[serde(default)]
        overlay_options: Option<Value>,
    },
    /// `tui.hideOverlay()`: hides the topmost overlay.
    #[serde(rename = "hideOverlay", rename_all = "camelCase")]
    HideOverlay {
        #[serde(default)]
        parent_component_id: Option<u64>,
    },
    /// An OverlayHandle call: `hide`, `setHidden`, `setVisible`, `focus`, `unfocus`.
    #[serde(rename = "overlay", rename_all = "camelCase")]
    Overlay { component_id: u64, action: String },
    /// `tui.setFocus(component | null)`.
    #[serde(rename = "setFocus", rename_all = "camelCase")]
    SetFocus {
        #[serde(default)]
        component_id: Option<u64>,
    },
    /// `tui.stop()`: hand the terminal to a child process.
    #[serde(rename = "tuiStop")]
    TuiStop {},
    /// `tui.start()`: take the terminal back.
    #[serde(rename = "tuiStart")]
    TuiStart {},
    /// Whether keys go to the host first (`terminal_input`).
    #[serde(rename = "setTerminalInputListening")]
    SetTerminalInputListening { active: bool },
    /// Extensions stacked autocomplete providers: completion asks the host first, and
    /// the characters they declared (`triggerCharacters`) open it at a token's start.
    #[serde(rename = "setAutocomplete")]
    SetAutocomplete {
        active: bool,
        #[serde(default, rename = "triggerCharacters")]
        trigger_characters: Vec<String>,
    },
}

/// The UI of a mode, as extensions see it.
pub trait ExtensionUi: Send + Sync {
    /// `ctx.hasUI`: false in print and JSON modes.
    fn has_ui(&self) -> bool;
    /// Shows a dialog and waits for its answer; `cancel` dismisses it.
    fn dialog(&self, dialog: UiDialog, cancel: CancellationToken) -> BoxFuture<'_, Value>;
    /// A fire-and-forget call.
    fn notice(&self, notice: UiNotice);
}

/// Print and JSON modes: no UI; dialogs answer at once with their empty answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoUi;

impl ExtensionUi for NoUi {
    fn has_ui(&self) -> bool {
        false
    }

    fn dialog(&self, dialog: UiDialog, _cancel: CancellationToken) -> BoxFuture<'_, Value> {
        let answer = dialog.empty_answer();
        Box::pin(async move { answer })
    }

    fn notice(&self, _notice: UiNotice) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_serialize_with_the_rpc_field_names() {
        let notice = UiNotice::SetStatus {
            status_key: "k".into(),
            status_text: Some("t".into()),
        };
        assert_eq!(
            serde_json::to_string(&notice).unwrap(),
            r#"{"method":"setStatus","statusKey":"k","statusText":"t"}"#
        );
        let notify = UiNotice::Notify {
            message: "m".into(),
            notify_type: Some("info".into()),
        };
        assert_eq!(
            serde_json::to_string(&notify).unwrap(),
            r#"{"method":"notify","message":"m","notifyType":"info"}"#
        );
        let parsed: UiNotice =
            serde_json::from_str(r#"{"method":"set_editor_text","text":"x"}"#).unwrap();
        assert_eq!(
            parsed,
            UiNotice::SetEditorText {
                text: Some("x".into())
            }
        );
    }

    #[test]
    fn interactive_notices_parse() {
        let parse = |json: &str| serde_json::from_str::<UiNotice>(json).unwrap();
        assert_eq!(
            parse(r#"{"method":"editorSubmit","componentId":3,"text":"hi"}"#),
            UiNotice::EditorSubmit {
                component_id: 3,
                text: "hi".into()
            }
        );
        assert_eq!(
            parse(r#"{"method":"showOverlay","componentId":4,"parentComponentId":2}"#),
            UiNotice::ShowOverlay {
                component_id: 4,
                parent_component_id: Some(2),
                overlay_options: None
            }
        );
        assert_eq!(parse(r#"{"method":"tuiStop"}"#), UiNotice::TuiStop {});
        assert_eq!(
            parse(r#"{"method":"setFocus","componentId":null}"#),
            UiNotice::SetFocus { component_id: None }
        );
        assert_eq!(
            parse(r#"{"method":"setTerminalInputListening","active":true}"#),
            UiNotice::SetTerminalInputListening { active: true }
        );
    }

    #[test]
    fn dialogs_parse_and_have_empty_answers() {
        let dialog: UiDialog =
            serde_json::from_str(r#"{"method":"confirm","title":"t","message":"m"}"#).unwrap();
        assert_eq!(dialog.empty_answer(), Value::Bool(false));
        let select: UiDialog =
            serde_json::from_str(r#"{"method":"select","title":"t","options":["a"],"timeout":5}"#)
                .unwrap();
        assert_eq!(select.timeout_ms(), Some(5));
        assert_eq!(select.empty_answer(), Value::Null);
    }
}
