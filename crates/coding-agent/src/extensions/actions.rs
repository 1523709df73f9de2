//! What extensions ask of pi (`pi.sendMessage`, `ctx.newSession`, …), and the read-only
//! state their synchronous getters read.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

/// Options of `pi.sendMessage`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageOptions {
    /// `true` runs a turn; `false` while the agent runs only records the message at the
    /// end of the turn; unset steers it into a running agent (pi 1.6.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_turn: Option<bool>,
    /// `sendUserMessage`: run extension commands and expand skills and prompt templates
    /// (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expand_prompt_templates: bool,
    /// `steer`, `followUp` or `nextTurn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_as: Option<String>,
}

/// Tells the caller of a long action that its visible start has happened, so the frames
/// the extension sends next are handled after it: `ctx.compact()` emits `compaction_start`
/// before the command that called it returns, as in pi, yet runs on its own.
#[derive(Clone, Default)]
pub struct StartSignal(Arc<Mutex<Option<oneshot::Sender<()>>>>);

impl StartSignal {
    /// A signal and what resolves when it fires (or is dropped unfired).
    pub fn new() -> (Self, oneshot::Receiver<()>) {
        let (sender, receiver) = oneshot::channel();
        (Self(Arc::new(Mutex::new(Some(sender)))), receiver)
    }

    /// Fires the signal; later calls do nothing.
    pub fn fire(&self) {
        let sender = self.0.lock().ok().and_then(|mut slot| slot.take());
        if let Some(sender) = sender {
            let _ = sender.send(());
        }
    }
}

impl std::fmt::Debug for StartSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartSignal")
    }
}

/// Not part of the action's value: any two are equal.
impl PartialEq for StartSignal {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A run an extension asked for (`sendUserMessage`, a turn-triggering `sendMessage`), counted
/// by the session from the moment the request arrives until the run has begun (or the
/// request is done): the prompt of the command that asked knows a run will end it.
#[derive(Clone, Default)]
pub struct RunRequest(Arc<Mutex<Option<Box<dyn std::any::Any + Send>>>>);

impl RunRequest {
    /// Holds `token` (the session's count) until [`Self::release`] or the last clone drops.
    pub fn new(token: Box<dyn std::any::Any + Send>) -> Self {
        Self(Arc::new(Mutex::new(Some(token))))
    }

    /// Whether a token is held.
    pub fn is_held(&self) -> bool {
        self.0.lock().map(|slot| slot.is_some()).unwrap_or(false)
    }

    /// Ends the count: the run has begun, was queued, or will not happen.
    pub fn release(&self) {
        let token = self.0.lock().ok().and_then(|mut slot| slot.take());
        drop(token);
    }
}

impl std::fmt::Debug for RunRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunRequest")
    }
}

/// Not part of the action's value: any two are equal.
impl PartialEq for RunRequest {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A custom message from an extension (`customType`, `content`, `display`, `details`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionMessage {
    pub custom_type: String,
    #[serde(default)]
    pub content: Value,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// A request from an extension to pi; serialized as the host protocol's `method`/`params`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "camelCase")]
pub enum ExtensionAction {
    SendMessage {
        message: ExtensionMessage,
        #[serde(default)]
        options: SendMessageOptions,
        /// Counts the run it may trigger (see [`RunRequest`]).
        #[serde(skip)]
        request: RunRequest,
    },
    #[serde(rename_all = "camelCase")]
    SendUserMessage {
        content: Value,
        #[serde(default)]
        options: SendMessageOptions,
        /// Counts the run it asks for (see [`RunRequest`]).
        #[serde(skip)]
        request: RunRequest,
    },
    #[serde(rename_all = "camelCase")]
    AppendEntry {
        custom_type: String,
        #[serde(default)]
        data: Option<Value>,
    },
    SetSessionName {
        name: String,
    },
    #[serde(rename_all = "camelCase")]
    SetLabel {
        entry_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    SetActiveTools {
        tool_names: Vec<String>,
    },
    RefreshTools {},
    /// → `true` when the model was set (it has a key).
    SetModel {
        provider: String,
        id: String,
    },
    SetThinkingLevel {
        level: String,
    },
    Abort {},
    Shutdown {},
    /// → when the compaction finished.
    #[serde(rename_all = "camelCase")]
    Compact {
        #[serde(default)]
        custom_instructions: Option<String>,
        /// Fired once `compaction_start` is out (or pi has to wait for a run to stop).
        #[serde(skip)]
        started: StartSignal,
    },
    RegisterProvider {
        name: String,
        #[serde(default)]
        config: Value,
    },
    UnregisterProvider {
        name: String,
    },
    /// `pi.registerVirtualModel` after loading (its `route` stays in the host).
    RegisterVirtualModel {
        model: crate::virtual_models::VirtualModelDef,
    },
    UnregisterVirtualModel {
        provider: String,
        id: String,
    },
    /// → `{apiKey, headers}` for a model; only for extensions that ask.
    GetApiKeyAndHeaders {
        provider: String,
        #[serde(default)]
        id: Option<String>,
    },
    WaitForIdle {},
    /// → `{cancelled}`. `setup_entries` are what the extension's `setup` appended.
    #[serde(rename_all = "camelCase")]
    NewSession {
        #[serde(default)]
        parent_session: Option<String>,
        #[serde(default)]
        setup_entries: Option<Vec<Value>>,
    },
    /// → the provider's key, or null; only for extensions that ask.
    GetApiKeyForProvider {
        provider: String,
    },
    /// → `{cancelled}`.
    #[serde(rename_all = "camelCase")]
    Fork {
        entry_id: String,
        #[serde(default)]
        position: Option<String>,
    },
    /// → `{cancelled}`.
    #[serde(rename_all = "camelCase")]
    NavigateTree {
        target_id: String,
        #[serde(default)]
        summarize: Option<bool>,
        #[serde(default)]
        custom_instructions: Option<String>,
        #[serde(default)]
        replace_instructions: Option<bool>,
        #[serde(default)]
        label: Option<String>,
    },
    /// → `{cancelled}`.
    #[serde(rename_all = "camelCase")]
    SwitchSession {
        session_path: String,
    },
    Reload {},
}

impl ExtensionAction {
    /// Whether only a command handler may ask for it (the TypeScript pi's command context).
    pub fn needs_command_context(&self) -> bool {
        matches!(
            self,
            Self::WaitForIdle {}
                | Self::NewSession { .. }
                | Self::Fork { .. }
                | Self::NavigateTree { .. }
                | Self::SwitchSession { .. }
                | Self::Reload {}
        )
    }
}

/// Why a prompt without a delivery mode is refused while the session is busy (pi's text).
pub const BUSY_PROMPT: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// Carries out extension requests against the session; the mode's session binding
/// implements it. Errors are texts the extension sees as a thrown `Error`.
pub trait ExtensionActions: Send + Sync {
    fn perform(&self, action: ExtensionAction) -> BoxFuture<'_, Result<Value, String>>;

    /// The state the host mirrors for the synchronous getters, as the `state` frame's
    /// fields (see `extension-host/PROTOCOL.md`). `entries_from` is how many session
    /// entries the mirror already holds (`None`: send the whole session); tools, commands
    /// and models are left out when `known_generation` is current.
    fn snapshot(
        &self,
        entries_from: Option<(String, usize)>,
        known_generation: Option<u64>,
    ) -> StateSnapshot;

    /// Whether a steered or follow-up `sendUserMessage` would be queued now without waiting
    /// (the session streams and no command runs), so it can be done before the host's next
    /// frame, in the order the extension made it (the TypeScript pi queues it at once).
    fn queues_at_once(&self) -> bool {
        false
    }

    /// Counts a run the extension asks for from the moment its request arrives until the
    /// request is done, so that the prompt of the command that asked knows a run will end
    /// it (dropping the value ends the count).
    fn expect_run(&self) -> Option<RunRequest> {
        None
    }

    /// A cheap fingerprint of the mirrored state: equal fingerprints mean nothing to send
    /// (so a hooked tool call does not rebuild the snapshot).
    fn fingerprint(&self) -> u64 {
        0
    }

    /// `ctx.abort()` as it arrives, before the host's next frame is handled: the running
    /// agent's cancel fires at once, as pi 1.6.0's abort signal does, so the answer of the
    /// hook that called it already finds the run aborted. The request itself still runs.
    fn abort_now(&self) {}

    /// Whether a `sendUserMessage` without `deliverAs` arriving now is refused at once: a
    /// run is starting, so the session is busy (pi 1.2.0) and the message needs a
    /// delivery mode, decided as the extension sends it rather than when it is handled.
    fn refuses_unqueued_prompt(&self) -> bool {
        false
    }
}

/// The mirrored state.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateSnapshot {
    pub model: Value,
    pub thinking_level: String,
    pub is_idle: bool,
    pub has_pending_messages: bool,
    pub active_tools: Vec<String>,
    /// `allTools`, `commands` and `models`, present when the generation changed.
    #[serde(skip)]
    pub statics: Option<std::sync::Arc<MirrorStatics>>,
    pub system_prompt: String,
    /// `ctx.getSystemPromptOptions()`: the base prompt inputs (absent without a session).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub system_prompt_options: Value,
    /// `ctx.scopedModels`: `[{model, thinkingLevel?}]` (absent without a session).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub scoped_models: Value,
    pub context_usage: Value,
    pub session: SessionMirror,
    pub cwd: String,
    /// Changes whenever `allTools`, `commands` or `models` may have changed.
    #[serde(skip)]
    pub generation: u64,
    /// Mode-owned fields (interactive: `terminal`, `editorText`, `toolsExpanded`,
    /// `themeName`, `footer`).
    #[serde(flatten)]
    pub ui: serde_json::Map<String, Value>,
}

/// The mirror's fields that change only with the generation, as JSON text built once per
/// generation: the model list alone is ~350 KB, so a sync splices the text into its frame
/// instead of cloning and comparing value trees.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MirrorStatics {
    pub all_tools: String,
    pub commands: String,
    pub models: String,
}

impl MirrorStatics {
    /// `frame` (a JSON object's text) with the fields that differ from `sent` added (all
    /// three without `sent`).
    pub fn splice_into(&self, frame: &str, sent: Option<&MirrorStatics>) -> String {
        let mut text = frame
            .trim_end()
            .strip_suffix('}')
            .unwrap_or(frame)
            .to_owned();
        let fields = [
            ("allTools", &self.all_tools, sent.map(|s| &s.all_tools)),
            ("commands", &self.commands, sent.map(|s| &s.commands)),
            ("models", &self.models, sent.map(|s| &s.models)),
        ];
        for (name, value, before) in fields {
            if before == Some(value) {
                continue;
            }
            if !text.trim_end().ends_with('{') {
                text.push(',');
            }
            text.push('"');
            text.push_str(name);
            text.push_str("\":");
            text.push_str(value);
        }
        text.push('}');
        text
    }
}

/// The session part of the mirror.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMirror {
    /// The entries replace the mirror's (a new or switched session).
    pub reset: bool,
    pub header: Value,
    /// New entries (all of them on a reset).
    pub entries: Vec<Value>,
    /// How many entries the session has in total (the mirror's count after this frame).
    #[serde(skip)]
    pub total_entries: usize,
    pub session_file: Option<String>,
    pub session_dir: String,
    pub session_id: String,
    pub leaf_id: Option<String>,
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statics_splice_into_a_frame() {
        let statics = MirrorStatics {
            all_tools: "[1]".into(),
            commands: "[]".into(),
            models: "{\"all\":[]}".into(),
        };
        let parse = |text: String| serde_json::from_str::<Value>(&text).unwrap_or_default();
        assert_eq!(
            parse(statics.splice_into("{\"type\":\"state\"}", None)),
            serde_json::json!({"type": "state", "allTools": [1], "commands": [], "models": {"all": []}})
        );
        assert_eq!(
            parse(statics.splice_into("{}", None))["allTools"],
            serde_json::json!([1])
        );
        // Only what changed since the last frame crosses again.
        let before = MirrorStatics {
            commands: "[\"x\"]".into(),
            ..statics.clone()
        };
        assert_eq!(
            parse(statics.splice_into("{\"type\":\"state\"}", Some(&before))),
            serde_json::json!({"type": "state", "commands": []})
        );
    }

    #[test]
    fn actions_parse_from_host_requests() {
        let action: ExtensionAction = serde_json::from_value(serde_json::json!({
            "method": "sendMessage",
            "params": {"message": {"customType": "note", "content": "hi", "display": true},
                       "options": {"triggerTurn": true, "deliverAs": "steer"}}
        }))
        .unwrap();
        let ExtensionAction::SendMessage {
            message, options, ..
        } = action
        else {
            panic!("wrong variant");
        };
        assert_eq!(message.custom_type, "note");
        assert_eq!(options.trigger_turn, Some(true));
        assert_eq!(options.deliver_as.as_deref(), Some("steer"));
        let abort: ExtensionAction =
            serde_json::from_value(serde_json::json!({"method": "abort", "params": {}})).unwrap();
        assert_eq!(abort, ExtensionAction::Abort {});
        let fork: ExtensionAction = serde_json::from_value(
            serde_json::json!({"method": "fork", "params": {"entryId": "e1"}}),
        )
        .unwrap();
        assert!(fork.needs_command_context());
    }
}
