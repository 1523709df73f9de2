//! What an editor may set on a session: the model, the thinking level and the mode
//! (`default`, `read-only` with only the tools that look, or `sandbox` with every tool
//! confined as `pi --sandbox` does, where the kernel can), as ACP session config options
//! and session modes.

use std::sync::Mutex;

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};
use pi_ai::ThinkingLevel;

use crate::agent_session::AgentSession;

pub const MODEL: &str = "model";
pub const THINKING: &str = "thinking";
pub const MODE: &str = "mode";
const DEFAULT_MODE: &str = "default";
const READ_ONLY: &str = "read-only";
const SANDBOX: &str = "sandbox";
/// The tools of read-only mode (those of them that are active).
const LOOKING_TOOLS: [&str; 4] = ["read", "grep", "find", "ls"];

/// The session's mode and, in read-only mode, the tools to restore.
#[derive(Default)]
pub struct Modes {
    saved_tools: Mutex<Option<Vec<String>>>,
    /// The session's tools run confined (fixed for a session: switching builds another).
    sandboxed: bool,
    /// The kernel can confine them (the mode is offered).
    sandbox_offered: bool,
}

fn model_ref(provider: &str, id: &str) -> String {
    format!("{provider}/{id}")
}

impl Modes {
    pub fn new(sandboxed: bool, sandbox_offered: bool) -> Self {
        Self {
            saved_tools: Mutex::new(None),
            sandboxed,
            sandbox_offered: sandbox_offered || sandboxed,
        }
    }

    pub fn current(&self) -> &'static str {
        if self.saved().is_some() {
            READ_ONLY
        } else if self.sandboxed {
            SANDBOX
        } else {
            DEFAULT_MODE
        }
    }

    pub fn sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// Whether switching to `mode` turns the sandbox on (`Some(true)`) or off.
    pub fn sandbox_switch(&self, mode: &str) -> Option<bool> {
        match (mode, self.sandboxed) {
            (SANDBOX, false) if self.sandbox_offered => Some(true),
            (DEFAULT_MODE | READ_ONLY, true) => Some(false),
            _ => None,
        }
    }

    /// The modes offered, as (id, name, description).
    fn offered(&self) -> Vec<(&'static str, &'static str, &'static str)> {
        let mut modes = vec![
            (DEFAULT_MODE, "Default", "Every active tool"),
            (
                READ_ONLY,
                "Read-only",
                "Only the tools that read and search",
            ),
        ];
        if self.sandbox_offered {
            modes.push((
                SANDBOX,
                "Sandbox",
                "Every tool confined: writes only in the folder, the temp dir and sandbox.writePaths",
            ));
        }
        modes
    }

    fn saved(&self) -> Option<Vec<String>> {
        self.saved_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set_saved(&self, tools: Option<Vec<String>>) {
        *self
            .saved_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
    }

    /// The modes for `session/new` and `session/load`.
    pub fn state(&self) -> SessionModeState {
        SessionModeState::new(
            self.current(),
            self.offered()
                .into_iter()
                .map(|(id, name, about)| SessionMode::new(id, name).description(about.to_owned()))
                .collect(),
        )
    }

    /// Switches the mode; an unknown one is an error message.
    pub fn set(&self, session: &AgentSession, mode: &str) -> Result<(), String> {
        match (mode, self.saved()) {
            (DEFAULT_MODE, Some(tools)) => {
                session.set_active_tools(&tools);
                self.set_saved(None);
            }
            (READ_ONLY, None) => {
                let active = session.active_tool_names();
                let looking: Vec<String> = active
                    .iter()
                    .filter(|t| LOOKING_TOOLS.contains(&t.as_str()))
                    .cloned()
                    .collect();
                session.set_active_tools(&looking);
                self.set_saved(Some(active));
            }
            (DEFAULT_MODE | READ_ONLY, _) => {}
            (SANDBOX, saved) if self.sandboxed => {
                if let Some(tools) = saved {
                    session.set_active_tools(&tools);
                    self.set_saved(None);
                }
            }
            (other, _) => return Err(format!("Unknown mode \"{other}\"")),
        }
        Ok(())
    }

    /// The config options: model, thinking level, mode.
    pub fn options(&self, session: &AgentSession) -> Vec<SessionConfigOption> {
        let model = session.model();
        let models: Vec<SessionConfigSelectOption> = session
            .registry()
            .available()
            .iter()
            .map(|m| SessionConfigSelectOption::new(model_ref(&m.provider, &m.id), m.name.clone()))
            .collect();
        let levels: Vec<SessionConfigSelectOption> = pi_ai::supported_thinking_levels(&model)
            .into_iter()
            .map(|l| SessionConfigSelectOption::new(l.as_str(), l.as_str()))
            .collect();
        let modes: Vec<SessionConfigSelectOption> = self
            .offered()
            .into_iter()
            .map(|(id, name, _)| SessionConfigSelectOption::new(id, name))
            .collect();
        vec![
            SessionConfigOption::select(
                MODEL,
                "Model",
                model_ref(&model.provider, &model.id),
                models,
            )
            .category(SessionConfigOptionCategory::Model),
            SessionConfigOption::select(
                THINKING,
                "Thinking",
                session.thinking_level().as_str(),
                levels,
            )
            .category(SessionConfigOptionCategory::ThoughtLevel),
            SessionConfigOption::select(MODE, "Mode", self.current(), modes)
                .category(SessionConfigOptionCategory::Mode),
        ]
    }

    /// Sets one option to `value`; an unknown option or value is an error message.
    pub fn set_option(&self, session: &AgentSession, id: &str, value: &str) -> Result<(), String> {
        match id {
            MODEL => {
                let model = session
                    .registry()
                    .available()
                    .into_iter()
                    .find(|m| model_ref(&m.provider, &m.id) == value)
                    .cloned()
                    .ok_or_else(|| format!("No available model \"{value}\""))?;
                session.set_model(model).map_err(|e| e.0)
            }
            THINKING => {
                let level = ThinkingLevel::parse(value)
                    .ok_or_else(|| format!("Unknown thinking level \"{value}\""))?;
                session.set_thinking_level(level);
                Ok(())
            }
            MODE => self.set(session, value),
            other => Err(format!("Unknown option \"{other}\"")),
        }
    }
}
