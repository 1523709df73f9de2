//! How a Chat Completions request asks for reasoning: each server's thinking format
//! (`compat.thinkingFormat`), the effort values of the model's thinking-level map, and the
//! thinking budget some servers take, as pi-ai 1.6 builds them.

use serde_json::{Map, Value};

use super::compat::Compat;
use crate::types::{Model, ThinkingFormat, ThinkingLevel};

/// The `reasoning_effort` z.ai gets while thinking, where the server takes one:
/// the level's mapped value, or the level's name when the map has none; a level mapped to
/// `null` sends nothing.
fn mapped_effort(model: &Model, compat: &Compat, effort: Option<ThinkingLevel>) -> Option<String> {
    let level = effort.filter(|_| compat.supports_reasoning_effort)?;
    match model.thinking_level_value(level) {
        Some(Some(mapped)) => Some(mapped.to_owned()),
        Some(None) => None,
        None => Some(level.as_str().to_owned()),
    }
}

fn reasoning_value(model: &Model, level: ThinkingLevel) -> String {
    match model.thinking_level_value(level) {
        Some(Some(mapped)) => mapped.to_owned(),
        _ => level.as_str().to_owned(),
    }
}

/// Answer tokens pi 1.6 keeps free when a thinking budget shares the output limit.
const MIN_ANSWER_TOKENS: u64 = 1024;

/// The thinking budget of a level (pi's default budgets: custom `thinkingBudgets` do not reach
/// this API's options yet), clamped so that `MIN_ANSWER_TOKENS` of the output limit stay for
/// the answer; `None` when not thinking.
pub(super) fn budget(
    model: &Model,
    body_limit: Option<u64>,
    effort: Option<ThinkingLevel>,
) -> Option<u64> {
    let level = effort.filter(|_| model.reasoning)?;
    let ceiling = body_limit.unwrap_or(model.max_tokens);
    let budget = crate::types::ThinkingBudgets::default()
        .budget_for(level)
        .min(ceiling.saturating_sub(MIN_ANSWER_TOKENS));
    (budget > 0).then_some(budget)
}

/// pi 1.6's chat-template values: literals as written, `{"$var": …}` filled in from the
/// thinking setting (`thinking.enabled`, `thinking.budget`, else the mapped level), and
/// values with `omitWhenOff` left out when not thinking. `None` when nothing remains.
fn template_values(
    model: &Model,
    effort: Option<ThinkingLevel>,
    budget: Option<u64>,
    values: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    for (key, value) in values? {
        let Value::Object(spec) = value else {
            out.insert(key.clone(), value.clone());
            continue;
        };
        if effort.is_none() && spec.get("omitWhenOff").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let resolved = match spec.get("$var").and_then(Value::as_str) {
            Some("thinking.enabled") => Some(Value::Bool(effort.is_some())),
            Some("thinking.budget") => budget.map(Value::from),
            _ => match model.thinking_level_value(effort.unwrap_or(ThinkingLevel::Off)) {
                Some(mapped) => mapped.map(Value::from),
                None => effort.map(|l| Value::from(l.as_str())),
            },
        };
        if let Some(resolved) = resolved {
            out.insert(key.clone(), resolved);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Puts the reasoning fields of `compat`'s thinking format into the body's `extra` fields,
/// for a reasoning model at `effort` (`None`: not thinking); `body_limit` is the body's
/// output cap.
pub(super) fn apply(
    extra: &mut Map<String, Value>,
    model: &Model,
    compat: &Compat,
    effort: Option<ThinkingLevel>,
    body_limit: Option<u64>,
) {
    if model.reasoning {
        match compat.thinking_format {
            ThinkingFormat::Zai => {
                let thinking = if effort.is_some() {
                    serde_json::json!({"type": "enabled", "clear_thinking": false})
                } else {
                    serde_json::json!({"type": "disabled"})
                };
                extra.insert("thinking".into(), thinking);
                if let Some(value) = mapped_effort(model, compat, effort) {
                    extra.insert("reasoning_effort".into(), Value::String(value));
                }
            }
            ThinkingFormat::Qwen => {
                extra.insert("enable_thinking".into(), Value::Bool(effort.is_some()));
                // Unlike z.ai, a level mapped to `null` sends its own name (pi-ai 1.6).
                if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                    extra.insert(
                        "reasoning_effort".into(),
                        Value::String(reasoning_value(model, level)),
                    );
                }
            }
            ThinkingFormat::QwenChatTemplate => {
                extra.insert(
                    "chat_template_kwargs".into(),
                    serde_json::json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
                );
            }
            ThinkingFormat::Deepseek => {
                if effort.is_some() {
                    extra.insert("thinking".into(), serde_json::json!({"type": "enabled"}));
                } else if model.thinking_level_value(ThinkingLevel::Off) != Some(None) {
                    extra.insert("thinking".into(), serde_json::json!({"type": "disabled"}));
                }
                if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                    extra.insert(
                        "reasoning_effort".into(),
                        Value::String(reasoning_value(model, level)),
                    );
                }
            }
            ThinkingFormat::Openrouter => match effort {
                Some(level) => {
                    extra.insert(
                        "reasoning".into(),
                        serde_json::json!({"effort": reasoning_value(model, level)}),
                    );
                }
                None => match model.thinking_level_value(ThinkingLevel::Off) {
                    Some(None) => {}
                    Some(Some(off)) => {
                        extra.insert("reasoning".into(), serde_json::json!({"effort": off}));
                    }
                    None => {
                        extra.insert("reasoning".into(), serde_json::json!({"effort": "none"}));
                    }
                },
            },
            ThinkingFormat::Openai if compat.supports_reasoning_effort => match effort {
                Some(level) => {
                    extra.insert(
                        "reasoning_effort".into(),
                        Value::String(reasoning_value(model, level)),
                    );
                }
                None => {
                    if let Some(Some(off)) = model.thinking_level_value(ThinkingLevel::Off) {
                        extra.insert("reasoning_effort".into(), Value::String(off.to_owned()));
                    }
                }
            },
            ThinkingFormat::Openai => {}
            ThinkingFormat::ChatTemplate => {
                let budget = budget(model, body_limit, effort);
                if let Some(values) =
                    template_values(model, effort, budget, compat.chat_template_kwargs.as_ref())
                {
                    extra.insert("chat_template_kwargs".into(), Value::Object(values));
                }
            }
            ThinkingFormat::Baseten => {
                let budget = budget(model, body_limit, effort);
                if let Some(values) =
                    template_values(model, effort, budget, compat.chat_template_args.as_ref())
                {
                    extra.insert("chat_template_args".into(), Value::Object(values));
                }
                if compat.supports_reasoning_effort {
                    let level = effort.unwrap_or(ThinkingLevel::Off);
                    let value = match model.thinking_level_value(level) {
                        Some(mapped) => mapped.map(str::to_owned),
                        None => effort.map(|l| l.as_str().to_owned()),
                    };
                    if let Some(value) = value {
                        extra.insert("reasoning_effort".into(), Value::String(value));
                    }
                }
            }
            ThinkingFormat::AntLing => {
                if let Some(Some(Some(value))) = effort.map(|l| model.thinking_level_value(l)) {
                    extra.insert("reasoning".into(), serde_json::json!({"effort": value}));
                }
            }
            ThinkingFormat::Together => {
                extra.insert(
                    "reasoning".into(),
                    serde_json::json!({"enabled": effort.is_some()}),
                );
                if let Some(level) = effort.filter(|_| compat.supports_reasoning_effort) {
                    extra.insert(
                        "reasoning_effort".into(),
                        Value::String(reasoning_value(model, level)),
                    );
                }
            }
            ThinkingFormat::StringThinking => match effort {
                Some(level) => {
                    extra.insert(
                        "thinking".into(),
                        Value::String(reasoning_value(model, level)),
                    );
                }
                None => match model.thinking_level_value(ThinkingLevel::Off) {
                    Some(None) => {}
                    Some(Some(off)) => {
                        extra.insert("thinking".into(), Value::String(off.to_owned()));
                    }
                    None => {
                        extra.insert("thinking".into(), Value::from("none"));
                    }
                },
            },
        }
    }
}
