//! Frames of the extension host protocol (`extension-host/PROTOCOL.md`), parsed at the
//! edge: everything the host sends becomes a [`HostFrame`].

use serde::Deserialize;
use serde_json::Value;

use crate::extensions::registry::{ExtensionErrorInfo, LoadError, LoadedExtension, ProviderDef};

/// A frame from the host.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostFrame {
    /// The answer to one of our requests.
    Response {
        id: u64,
        #[serde(default)]
        result: Value,
        #[serde(default)]
        error: Option<String>,
    },
    /// The host asks pi for something.
    Request {
        id: u64,
        method: String,
        #[serde(default)]
        params: Value,
    },
    /// A fire-and-forget UI call (`params` carries its fields).
    Ui {
        method: String,
        #[serde(default)]
        params: Value,
    },
    /// A dialog's signal fired: drop the dialog the request `id` opened.
    UiCancel { id: u64 },
    /// A partial result of a running tool (the `tool_execute` request `id`).
    ToolUpdate {
        id: u64,
        #[serde(default, rename = "partialResult")]
        partial_result: Value,
    },
    /// One event of a provider's stream (the `provider_stream` request `id`).
    ProviderEvent {
        id: u64,
        #[serde(default)]
        event: Value,
    },
    /// Output of a running `bash_exec` request `id` (UTF-8 text).
    BashData {
        id: u64,
        #[serde(default)]
        data: String,
    },
    /// A handler threw.
    ExtensionError(ExtensionErrorInfo),
    /// Extensions registered something after loading: the whole current list.
    Registrations {
        #[serde(default)]
        extensions: Vec<LoadedExtension>,
    },
    /// A diagnostic of the host itself.
    Log {
        #[serde(default)]
        level: String,
        #[serde(default)]
        message: String,
    },
}

/// The `init` answer: what loaded and what failed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct InitResult {
    #[serde(default)]
    pub extensions: Vec<LoadedExtension>,
    #[serde(default)]
    pub errors: Vec<LoadError>,
    #[serde(default)]
    pub providers: Vec<ProviderDef>,
    /// Virtual models registered while loading.
    #[serde(default, rename = "virtualModels")]
    pub virtual_models: Vec<crate::virtual_models::VirtualModelDef>,
}

/// Parses one line from the host.
pub fn parse_frame(line: &str) -> Result<HostFrame, String> {
    serde_json::from_str(line).map_err(|e| format!("malformed frame from the extension host: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse() {
        let frame = parse_frame(r#"{"type":"response","id":3,"result":{"block":true}}"#).unwrap();
        assert_eq!(
            frame,
            HostFrame::Response {
                id: 3,
                result: serde_json::json!({"block": true}),
                error: None
            }
        );
        let frame = parse_frame(
            r#"{"type":"extension_error","extensionPath":"/a.ts","event":"input","error":"boom"}"#,
        )
        .unwrap();
        assert!(matches!(frame, HostFrame::ExtensionError(e) if e.error == "boom"));
        let frame =
            parse_frame(r#"{"type":"ui","method":"notify","params":{"message":"hi"}}"#).unwrap();
        assert!(matches!(frame, HostFrame::Ui { method, .. } if method == "notify"));
        assert!(parse_frame("{nope").is_err());
        let init: InitResult = serde_json::from_str(
            r#"{"extensions":[{"path":"/a.ts","handlers":["tool_call"],"tools":[{"name":"t"}]}],"errors":[{"path":"/b.ts","error":"x"}]}"#,
        )
        .unwrap();
        assert_eq!(init.extensions[0].tools[0].name, "t");
        assert_eq!(init.errors[0].path, "/b.ts");
    }
}
