//! Claude's thinking controls: adaptive or budgeted thinking, and the effort of a request with
//! mid-conversation effort.

use serde_json::Value;

use crate::types::{Model, StreamOptions};

/// Whether the model thinks adaptively with an effort level: the catalog's
/// `compat.forceAdaptiveThinking` (pi 1.6 decides by it alone), else, for models without the
/// flag (`models.json`), the ids known to (Opus/Sonnet 4.6, Opus 4.7).
pub fn supports_adaptive_thinking(model: &Model) -> bool {
    if let Some(flag) = model
        .compat
        .as_ref()
        .and_then(|c| c.force_adaptive_thinking)
    {
        return flag;
    }
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|needle| model.id.contains(needle))
}

/// Whether `value` is one of Claude's effort levels.
pub(super) fn is_effort(value: &str) -> bool {
    matches!(value, "low" | "medium" | "high" | "xhigh" | "max")
}

/// Whether `model` takes effort-only system messages and thinking binding controls
/// (`compat.supportsMidConvoEffort`).
pub fn supports_mid_convo_effort(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_mid_convo_effort)
        .unwrap_or(false)
}

/// Whether the request turns thinking off: a reasoning model asked not to think, unless
/// its level map marks `off` unsupported.
fn thinking_disabled(model: &Model, options: &StreamOptions) -> bool {
    model.reasoning
        && options
            .anthropic_thinking
            .as_ref()
            .is_some_and(|t| !t.enabled)
        && model.thinking_level_value(crate::types::ThinkingLevel::Off) != Some(None)
}

/// The effort a request with mid-conversation effort runs at (`high` unless chosen), or
/// `None` when the model has no mid-conversation effort or thinking is off.
pub fn mid_convo_effort(model: &Model, options: &StreamOptions) -> Option<String> {
    if !supports_mid_convo_effort(model) || thinking_disabled(model, options) {
        return None;
    }
    Some(
        options
            .anthropic_thinking
            .as_ref()
            .and_then(|t| t.effort.clone())
            .unwrap_or_else(|| "high".to_owned()),
    )
}

/// `thinking` and `output_config` for a reasoning model.
pub(super) fn thinking_params(
    model: &Model,
    options: &StreamOptions,
) -> (Option<Value>, Option<Value>) {
    if !model.reasoning {
        return (None, None);
    }
    match options.anthropic_thinking.as_ref() {
        Some(t) if t.enabled => {
            let display = t.display.clone().unwrap_or_else(|| "summarized".into());
            if supports_adaptive_thinking(model) {
                (
                    Some(serde_json::json!({"type": "adaptive", "display": display})),
                    t.effort
                        .as_ref()
                        .map(|effort| serde_json::json!({"effort": effort})),
                )
            } else {
                (
                    Some(serde_json::json!({
                        "type": "enabled",
                        "budget_tokens": t.budget_tokens.filter(|b| *b > 0).unwrap_or(1024),
                        "display": display,
                    })),
                    None,
                )
            }
        }
        Some(_) => (Some(serde_json::json!({"type": "disabled"})), None),
        None => (None, None),
    }
}
