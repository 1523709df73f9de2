//! The `--models` scope (or `enabledModels` in settings): the models model cycling goes
//! through, each with the thinking level its pattern names.

use globset::GlobBuilder;

use pi_ai::ThinkingLevel;

use crate::agent_session::ScopedModel;
use crate::model_registry::ModelRegistry;
use crate::model_resolver::{self, Request, Resolution, Suffix};

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

/// Resolves patterns against the models that have a key, as pi 1.6.0's
/// `resolveModelScopeFromModels`: a pattern with glob characters (`*`, `?`, `[`) is first
/// an exact `provider/id` or id (ids may hold brackets), else a glob over `provider/id` or
/// the id, case-insensitively, with an optional `:level`; other patterns resolve like
/// `--model`. A pattern several providers offer adds each of them, with a warning;
/// unmatched patterns are reported on stderr and skipped.
pub fn resolve<'a>(
    registry: &ModelRegistry,
    patterns: impl IntoIterator<Item = &'a str>,
) -> Vec<ScopedModel> {
    let resolved = resolve_quietly(registry, patterns);
    for warning in &resolved.warnings {
        eprintln!("Warning: {warning}");
    }
    resolved.models
}

/// What [`resolve_quietly`] found.
pub struct ScopeResolution {
    pub models: Vec<ScopedModel>,
    /// Patterns that matched no model with a key.
    pub unmatched: Vec<String>,
    /// What [`resolve`] prints (without `Warning: `).
    pub warnings: Vec<String>,
}

/// [`resolve`] without printing (the terminal UI shows its own view of the result).
pub fn resolve_quietly<'a>(
    registry: &ModelRegistry,
    patterns: impl IntoIterator<Item = &'a str>,
) -> ScopeResolution {
    let mut warnings: Vec<String> = Vec::new();
    let mut unmatched: Vec<String> = Vec::new();
    let mut scoped: Vec<ScopedModel> = Vec::new();
    let add = |scoped: &mut Vec<ScopedModel>, model: &pi_ai::Model, level| {
        if !scoped
            .iter()
            .any(|s| s.model.provider == model.provider && s.model.id == model.id)
        {
            scoped.push(ScopedModel {
                model: model.clone(),
                thinking_level: level,
            });
        }
    };
    let ambiguous = |warnings: &mut Vec<String>, pattern: &str, candidates: &[&pi_ai::Model]| {
        let mut providers: Vec<&str> = candidates.iter().map(|m| m.provider.as_str()).collect();
        providers.sort_unstable();
        providers.dedup();
        warnings.push(format!(
            "Pattern \"{pattern}\" matches several providers: {}. Use provider/id to choose one.",
            providers.join(", ")
        ));
    };
    let available = registry.available();
    for pattern in patterns
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (matches, level): (Vec<&pi_ai::Model>, Option<ThinkingLevel>) =
            if pattern.contains(['*', '?', '[']) {
                let (glob, level) = match pattern.rsplit_once(':') {
                    Some((glob, suffix)) => match ThinkingLevel::parse(suffix) {
                        Some(level) => (glob, Some(level)),
                        None => (pattern, None),
                    },
                    None => (pattern, None),
                };
                let exact = Request {
                    text: glob,
                    provider: None,
                    suffix: Suffix::None,
                    fuzzy: false,
                };
                match model_resolver::resolve(&exact, &available, &|_| true) {
                    Resolution::Resolved { model, .. } => (vec![model], level),
                    Resolution::Ambiguous { candidates, .. } => {
                        ambiguous(&mut warnings, pattern, &candidates);
                        (candidates, level)
                    }
                    Resolution::NotFound(_) => (glob_matches(glob, &available), level),
                }
            } else {
                let request = Request {
                    text: pattern,
                    provider: None,
                    suffix: Suffix::Lenient,
                    fuzzy: true,
                };
                match model_resolver::resolve(&request, &available, &|_| true) {
                    Resolution::Resolved {
                        model,
                        level,
                        warning,
                    } => {
                        if let Some(warning) = warning {
                            warnings.push(warning);
                        }
                        (vec![model], level)
                    }
                    Resolution::Ambiguous { candidates, .. } => {
                        ambiguous(&mut warnings, pattern, &candidates);
                        (candidates, None)
                    }
                    Resolution::NotFound(_) => (Vec::new(), None),
                }
            };
        if matches.is_empty() {
            warnings.push(format!("No models match pattern \"{pattern}\""));
            unmatched.push(pattern.to_owned());
        }
        for model in matches {
            add(&mut scoped, model, level);
        }
    }
    ScopeResolution {
        models: scoped,
        unmatched,
        warnings,
    }
}

/// The models whose `provider/id` or id `glob` matches, case-insensitively.
fn glob_matches<'m>(glob: &str, models: &[&'m pi_ai::Model]) -> Vec<&'m pi_ai::Model> {
    let Ok(matcher) = GlobBuilder::new(glob)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    models
        .iter()
        .copied()
        .filter(|m| matcher.is_match(format!("{}/{}", m.provider, m.id)) || matcher.is_match(&m.id))
        .collect()
}
