//! How the other tools are presented while codemode is active (pi 1.6's
//! `codemode.mode`): with `on` each declared tool a script can call carries a note on
//! calling it from scripts; with `only` those tools are left out of requests (still
//! active and callable) and codemode's description lists them instead, within
//! `codemode.inlineBudget` estimated tokens.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::CODEMODE;
use super::catalog::script_call_note;
use super::listing::nested_tools;
use super::presented::Presented;
use crate::config::settings_store::SettingsStore;

/// Tools that stay declared to the model only, never called from scripts.
const MODEL_ONLY: [&str; 2] = [CODEMODE, crate::mcp::tool_search::TOOL_SEARCH];
/// Estimated tokens codemode's description may spend on declarations by default.
const DEFAULT_INLINE_BUDGET: usize = 3000;

/// `codemode.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    On,
    Only,
}

/// The settings that decide the presentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Presentation {
    pub mode: Mode,
    pub inline_budget: usize,
}

impl Default for Presentation {
    fn default() -> Self {
        Self {
            mode: Mode::On,
            inline_budget: DEFAULT_INLINE_BUDGET,
        }
    }
}

impl Presentation {
    /// From `codemode.mode` (only `"only"` changes it) and `codemode.inlineBudget` (a
    /// finite number from 0 up, else the default).
    pub fn from_settings(settings: &SettingsStore) -> Self {
        let mode = match settings.value(&["codemode", "mode"]) {
            Some(serde_json::Value::String(mode)) if mode == "only" => Mode::Only,
            _ => Mode::On,
        };
        let inline_budget = settings
            .value(&["codemode", "inlineBudget"])
            .and_then(|v| v.as_f64())
            .filter(|b| b.is_finite() && *b >= 0.0)
            .map_or(DEFAULT_INLINE_BUDGET, |b| b as usize);
        Self {
            mode,
            inline_budget,
        }
    }
}

/// `tools` as the model is shown them. `originals` gives each tool as registered (without
/// what an earlier presentation added).
pub fn prepare(
    tools: Vec<Arc<dyn AgentTool>>,
    originals: &[Arc<dyn AgentTool>],
    presentation: Presentation,
) -> Vec<Arc<dyn AgentTool>> {
    let original = |tool: Arc<dyn AgentTool>| {
        originals
            .iter()
            .find(|o| o.name() == tool.name())
            .cloned()
            .unwrap_or(tool)
    };
    let tools: Vec<Arc<dyn AgentTool>> = tools.into_iter().map(original).collect();
    if !tools.iter().any(|t| t.name() == CODEMODE) {
        return tools;
    }
    let callable = |tool: &Arc<dyn AgentTool>| !MODEL_ONLY.contains(&tool.name());
    match presentation.mode {
        Mode::On => tools
            .into_iter()
            .map(|tool| {
                let noted = tool.description().contains("\n\nCodemode: `tools.");
                if !callable(&tool) || noted {
                    return tool;
                }
                let description = script_call_note(tool.as_ref());
                Presented::described(tool, description)
            })
            .collect(),
        Mode::Only => {
            let listed: Vec<Arc<dyn AgentTool>> =
                tools.iter().filter(|t| callable(t)).cloned().collect();
            let listing = nested_tools(&listed, &HashMap::new(), Some(presentation.inline_budget));
            tools
                .into_iter()
                .map(|tool| match tool.name() {
                    CODEMODE => match &listing {
                        Some(listing) => {
                            let description = format!("{}\n\n{listing}", tool.description());
                            Presented::described(tool, description)
                        }
                        None => tool,
                    },
                    _ if callable(&tool) => Presented::hidden(tool),
                    _ => tool,
                })
                .collect()
        }
    }
}

/// The names of the tools declared to the model, in order.
pub fn declared_names(tools: &[Arc<dyn AgentTool>]) -> Vec<String> {
    tools
        .iter()
        .filter(|t| t.declared())
        .map(|t| t.name().to_owned())
        .collect()
}
