//! How a model reference (`--model`, a `--models` pattern) names a model, as pi 1.6.0's
//! `resolveModelReference`: `provider/id` where the provider id may hold slashes (the
//! longest known provider prefix wins), a bare id, a `:<thinking>` suffix, then fuzzy
//! matches; when several providers offer the match, credentials break the tie and else
//! it is ambiguous. A reference naming a known provider but no listed id leaves a target
//! for a custom model id.

use pi_ai::{Model, ThinkingLevel};

/// What a `:<suffix>` may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// No suffix is read (exact lookups).
    None,
    /// An invalid suffix is dropped with a warning.
    Lenient,
    /// An invalid suffix stays part of the id.
    Strict,
}

/// A provider's place for a model id it does not list.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The provider's models, the first one the reference's anchor.
    pub provider_models: Vec<&'a Model>,
    /// The text after the provider, suffix included.
    pub model_text: String,
    /// The id without a valid thinking suffix.
    pub model_id: String,
    pub level: Option<ThinkingLevel>,
}

/// What a reference resolved to.
#[derive(Debug, Clone)]
pub enum Resolution<'a> {
    Resolved {
        model: &'a Model,
        level: Option<ThinkingLevel>,
        warning: Option<String>,
    },
    Ambiguous {
        candidates: Vec<&'a Model>,
        usable_count: usize,
    },
    NotFound(Option<Target<'a>>),
}

/// A reference and how to read it.
pub struct Request<'r> {
    pub text: &'r str,
    /// Only this provider's models (`--provider`).
    pub provider: Option<&'r str>,
    pub suffix: Suffix,
    pub fuzzy: bool,
}

/// `text` split at its last `:` when what follows is a thinking level.
fn split_thinking(text: &str) -> Option<(&str, ThinkingLevel)> {
    let (base, suffix) = text.rsplit_once(':')?;
    ThinkingLevel::parse(suffix).map(|level| (base, level))
}

/// The longest provider id of `models` that `text` starts with, followed by `/`, and the
/// rest (case-insensitive; provider ids may contain `/`).
fn split_provider<'m>(text: &str, models: &[&'m Model]) -> Option<(&'m str, String)> {
    let lower = text.to_lowercase();
    let mut best: Option<(&'m str, String)> = None;
    for model in models {
        let provider = model.provider.as_str();
        let prefix = provider.trim().to_lowercase();
        if prefix.is_empty()
            || best
                .as_ref()
                .is_some_and(|(p, _)| p.len() >= provider.len())
        {
            continue;
        }
        let Some(slash) = lower
            .get(prefix.len()..)
            .and_then(|rest| rest.find('/'))
            .map(|i| i + prefix.len())
        else {
            continue;
        };
        if lower[..slash].trim() != prefix {
            continue;
        }
        let model_text = text[slash + 1..].trim();
        if !model_text.is_empty() {
            best = Some((provider, model_text.to_owned()));
        }
    }
    best
}

/// Models whose id or name contains `text` (case-insensitive).
fn fuzzy_matches<'m>(text: &str, models: &[&'m Model]) -> Vec<&'m Model> {
    let lower = text.to_lowercase();
    models
        .iter()
        .filter(|m| m.id.to_lowercase().contains(&lower) || m.name.to_lowercase().contains(&lower))
        .copied()
        .collect()
}

/// An alias (`-latest`, or no `-YYYYMMDD` date at the end).
fn is_alias(id: &str) -> bool {
    let dated = id.len() > 9
        && id.as_bytes()[id.len() - 9] == b'-'
        && id[id.len() - 8..].bytes().all(|b| b.is_ascii_digit());
    id.ends_with("-latest") || !dated
}

/// Aliases before dated versions, then the greatest id.
fn best_fuzzy<'m>(matches: &[&'m Model]) -> Option<&'m Model> {
    let aliases: Vec<&Model> = matches
        .iter()
        .copied()
        .filter(|m| is_alias(&m.id))
        .collect();
    let pool = if aliases.is_empty() {
        matches.to_vec()
    } else {
        aliases
    };
    pool.into_iter().max_by(|a, b| a.id.cmp(&b.id))
}

fn resolved(model: &Model) -> Resolution<'_> {
    Resolution::Resolved {
        model,
        level: None,
        warning: None,
    }
}

/// The fuzzy matches' pick: among several providers the usable ones, the best id, and an
/// ambiguity when that id is on several of them.
fn select_fuzzy<'m>(
    matches: &[&'m Model],
    usable: &dyn Fn(&str) -> bool,
) -> Option<Resolution<'m>> {
    let first = matches.first()?;
    let several = matches.iter().any(|m| m.provider != first.provider);
    let usable_matches: Vec<&Model> = if several {
        matches
            .iter()
            .copied()
            .filter(|m| usable(&m.provider))
            .collect()
    } else {
        Vec::new()
    };
    let pool = if usable_matches.is_empty() {
        matches.to_vec()
    } else {
        usable_matches.clone()
    };
    let best = best_fuzzy(&pool)?;
    let tied: Vec<&Model> = pool.into_iter().filter(|m| m.id == best.id).collect();
    if tied.iter().all(|m| m.provider == best.provider) {
        return Some(resolved(best));
    }
    let usable_count = if usable_matches.is_empty() {
        0
    } else {
        tied.len()
    };
    Some(Resolution::Ambiguous {
        candidates: tied,
        usable_count,
    })
}

/// The exact reference: the named provider's own id, else the same id on any provider;
/// credentials decide between providers.
fn select_reference<'m>(
    text: &str,
    pool: &[&'m Model],
    fuzzy: bool,
    usable: &dyn Fn(&str) -> bool,
) -> Option<Resolution<'m>> {
    let lower = text.to_lowercase();
    let raw: Vec<&Model> = pool
        .iter()
        .copied()
        .filter(|m| m.id.to_lowercase() == lower)
        .collect();
    let named = split_provider(text, pool).and_then(|(provider, model_text)| {
        let own: Vec<&Model> = pool
            .iter()
            .copied()
            .filter(|m| m.provider == provider)
            .collect();
        let lower_text = model_text.to_lowercase();
        own.iter()
            .copied()
            .find(|m| m.id.to_lowercase() == lower_text)
            .or_else(|| raw.iter().copied().find(|m| m.provider == provider))
            .or_else(|| {
                fuzzy
                    .then(|| best_fuzzy(&fuzzy_matches(&model_text, &own)))
                    .flatten()
            })
    });
    let others: Vec<&Model> = raw
        .into_iter()
        .filter(|m| !named.is_some_and(|n| std::ptr::eq(*m, n)))
        .collect();
    let candidates: Vec<&Model> = named.into_iter().chain(others.iter().copied()).collect();
    let first = candidates.first()?;
    if candidates.iter().all(|m| m.provider == first.provider) {
        return Some(resolved(first));
    }
    if let Some(named) = named.filter(|n| usable(&n.provider)) {
        return Some(resolved(named));
    }
    let usable_others: Vec<&Model> = others
        .iter()
        .copied()
        .filter(|m| usable(&m.provider))
        .collect();
    match (usable_others.as_slice(), named) {
        ([only], _) => Some(resolved(only)),
        ([], Some(named)) => Some(resolved(named)),
        _ => Some(Resolution::Ambiguous {
            candidates,
            usable_count: usable_others.len(),
        }),
    }
}

/// pi 1.6.0's `resolveText`: the reference, fuzzy matches, then the text without a
/// thinking suffix.
fn resolve_text<'m>(
    text: &str,
    request: &Request,
    pool: &[&'m Model],
    usable: &dyn Fn(&str) -> bool,
) -> Resolution<'m> {
    if let Some(found) = select_reference(text, pool, request.fuzzy, usable) {
        return found;
    }
    if request.fuzzy
        && let Some(found) = select_fuzzy(&fuzzy_matches(text, pool), usable)
    {
        return found;
    }
    if request.suffix == Suffix::None {
        return Resolution::NotFound(None);
    }
    if let Some((base, level)) = split_thinking(text) {
        return match resolve_text(base, request, pool, usable) {
            Resolution::Resolved { model, warning, .. } => Resolution::Resolved {
                model,
                level: warning.is_none().then_some(level),
                warning,
            },
            other => other,
        };
    }
    let Some((base, suffix)) = text
        .rsplit_once(':')
        .filter(|_| request.suffix == Suffix::Lenient)
    else {
        return Resolution::NotFound(None);
    };
    match resolve_text(base, request, pool, usable) {
        Resolution::Resolved { model, .. } => Resolution::Resolved {
            model,
            level: None,
            warning: Some(format!(
                "Invalid thinking level \"{suffix}\" in pattern \"{text}\". Using default instead."
            )),
        },
        other => other,
    }
}

/// Resolves `request` among `models`; `usable` (a provider has credentials) only breaks
/// ties between providers.
pub fn resolve<'m>(
    request: &Request,
    models: &[&'m Model],
    usable: &dyn Fn(&str) -> bool,
) -> Resolution<'m> {
    let text = request.text.trim();
    if text.is_empty() {
        return Resolution::NotFound(None);
    }
    let constraint = request.provider.map(str::to_lowercase);
    let pool: Vec<&Model> = match &constraint {
        Some(c) => models
            .iter()
            .copied()
            .filter(|m| m.provider.to_lowercase() == *c)
            .collect(),
        None => models.to_vec(),
    };
    let result = resolve_text(text, request, &pool, usable);
    if !matches!(result, Resolution::NotFound(_)) {
        return result;
    }
    let split = split_provider(text, &pool);
    let anchor = match (&constraint, &split) {
        (Some(_), _) => pool.first().copied(),
        (None, Some((provider, _))) => pool.iter().copied().find(|m| m.provider == *provider),
        (None, None) => None,
    };
    let Some(anchor) = anchor else {
        return result;
    };
    let model_text = split.map_or_else(|| text.to_owned(), |(_, rest)| rest);
    let thinking = (request.suffix != Suffix::None)
        .then(|| split_thinking(&model_text))
        .flatten();
    let mut provider_models = vec![anchor];
    provider_models.extend(
        pool.iter()
            .copied()
            .filter(|m| m.provider == anchor.provider && !std::ptr::eq(*m, anchor)),
    );
    Resolution::NotFound(Some(Target {
        provider_models,
        model_id: thinking.map_or_else(|| model_text.clone(), |(base, _)| base.to_owned()),
        level: thinking.map(|(_, level)| level),
        model_text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> Model {
        let mut m = pi_ai::get_models("openai").remove(0);
        m.provider = provider.into();
        m.id = id.into();
        m.name = id.into();
        m
    }

    #[test]
    fn references_resolve_as_pi_16s() {
        let all = [
            model("openai", "gpt-5.4"),
            model("proxy", "openai/gpt-5.4"),
            model("local/llama", "small"),
            model("a", "shared"),
            model("b", "shared"),
        ];
        let models: Vec<&Model> = all.iter().collect();
        let request = |text| Request {
            text,
            provider: None,
            suffix: Suffix::Strict,
            fuzzy: true,
        };
        let id_of = |r: Resolution| match r {
            Resolution::Resolved { model, level, .. } => {
                format!("{}/{} {level:?}", model.provider, model.id)
            }
            Resolution::Ambiguous { candidates, .. } => format!("ambiguous {}", candidates.len()),
            Resolution::NotFound(t) => format!("not found {:?}", t.map(|t| t.model_id)),
        };
        let only_proxy = |p: &str| p == "proxy";
        assert_eq!(
            id_of(resolve(&request("openai/gpt-5.4"), &models, &only_proxy)),
            "proxy/openai/gpt-5.4 None"
        );
        assert_eq!(
            id_of(resolve(
                &request("local/llama/small:high"),
                &models,
                &|_| true
            )),
            "local/llama/small Some(High)"
        );
        assert_eq!(
            id_of(resolve(&request("shared"), &models, &|p| p == "b")),
            "b/shared None"
        );
        assert_eq!(
            id_of(resolve(&request("shared"), &models, &|_| true)),
            "ambiguous 2"
        );
        assert_eq!(
            id_of(resolve(&request("proxy/other:low"), &models, &|_| true)),
            "not found Some(\"other\")"
        );
        assert!(is_alias("model-latest") && !is_alias("model-20250929") && is_alias("m"));
    }
}
