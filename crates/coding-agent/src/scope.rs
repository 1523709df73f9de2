//! The `--models` scope (or `enabledModels` in settings): the models model cycling goes
//! through, each with the thinking level its pattern names.

use globset::GlobBuilder;

use pi_ai::ThinkingLevel;

use crate::agent_session::ScopedModel;
use crate::model_registry::ModelRegistry;

/// The model a new session without `--model` starts on, as pi 1.6.0's main.js: the saved
/// default when the scope has it, else the scope's first model (`None` for no scope).
pub fn startup_model<'a>(
    scoped: &'a [ScopedModel],
    default_provider: Option<&str>,
    default_model: Option<&str>,
) -> Option<&'a ScopedModel> {
    let saved = scoped.iter().find(|s| {
        Some(s.model.provider.as_str()) == default_provider
            && Some(s.model.id.as_str()) == default_model
    });
    saved.or_else(|| scoped.first())
}

/// Resolves patterns against the models that have a key: globs (`*`, `?`, `[`) match
/// `provider/id` or the id, case-insensitively, with an optional `:level`; other patterns
/// resolve like `--model`. Unmatched patterns are reported on stderr and skipped.
pub fn resolve<'a>(
    registry: &ModelRegistry,
    patterns: impl IntoIterator<Item = &'a str>,
) -> Vec<ScopedModel> {
    let mut scoped: Vec<ScopedModel> = Vec::new();
    let add = |scoped: &mut Vec<ScopedModel>, model: pi_ai::Model, level| {
        if !scoped
            .iter()
            .any(|s| s.model.provider == model.provider && s.model.id == model.id)
        {
            scoped.push(ScopedModel {
                model,
                thinking_level: level,
            });
        }
    };
    for pattern in patterns
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        if pattern.contains(['*', '?', '[']) {
            let (glob, level) = match pattern.rsplit_once(':') {
                Some((glob, suffix)) => match ThinkingLevel::parse(suffix) {
                    Some(level) => (glob, Some(level)),
                    None => (pattern, None),
                },
                None => (pattern, None),
            };
            let Ok(matcher) = GlobBuilder::new(glob)
                .case_insensitive(true)
                .literal_separator(false)
                .build()
                .map(|g| g.compile_matcher())
            else {
                eprintln!("Warning: No models match pattern \"{pattern}\"");
                continue;
            };
            let matching: Vec<_> = registry
                .available()
                .into_iter()
                .filter(|m| {
                    matcher.is_match(format!("{}/{}", m.provider, m.id)) || matcher.is_match(&m.id)
                })
                .cloned()
                .collect();
            if matching.is_empty() {
                eprintln!("Warning: No models match pattern \"{pattern}\"");
            }
            for model in matching {
                add(&mut scoped, model, level);
            }
            continue;
        }
        match registry.resolve_pattern(pattern, None) {
            Ok((model, level)) if registry.has_auth(&model.provider) => {
                add(&mut scoped, model, level)
            }
            _ => eprintln!("Warning: No models match pattern \"{pattern}\""),
        }
    }
    scoped
}
