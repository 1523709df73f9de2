//! `pi --list-models [search]`: a table of the models that have a key configured.

use pi_ai::Model;

use crate::model_registry::ModelRegistry;

/// `200000` → `200K`, `1000000` → `1M`, `1048576` → `1.0M`.
pub fn format_token_count(count: u64) -> String {
    let scaled = |unit: f64, suffix: &str| {
        let value = count as f64 / unit;
        if value.fract() == 0.0 {
            format!("{value}{suffix}")
        } else {
            format!("{value:.1}{suffix}")
        }
    };
    if count >= 1_000_000 {
        scaled(1_000_000.0, "M")
    } else if count >= 1_000 {
        scaled(1_000.0, "K")
    } else {
        count.to_string()
    }
}

/// Whether every character of `query` appears in `text` in order (case-insensitive).
fn fuzzy_matches(text: &str, query: &str) -> bool {
    let text = text.to_lowercase();
    query.to_lowercase().split_whitespace().all(|token| {
        let mut chars = text.chars();
        token.chars().all(|c| chars.any(|t| t == c))
    })
}

/// The table text, or the message to show when nothing matches.
pub fn render(registry: &ModelRegistry, search: Option<&str>) -> String {
    let mut models: Vec<&Model> = registry.available();
    if models.is_empty() {
        return "No models available. Set an API key environment variable (for example \
ANTHROPIC_API_KEY or OPENAI_API_KEY), add a key to auth.json, or add a provider to models.json."
            .to_owned();
    }
    if let Some(query) = search {
        models.retain(|m| fuzzy_matches(&format!("{} {}", m.provider, m.id), query));
        if models.is_empty() {
            return format!("No models matching \"{query}\"");
        }
    }
    models.sort_by(|a, b| a.provider.cmp(&b.provider).then_with(|| a.id.cmp(&b.id)));
    let header = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ]
    .map(str::to_owned);
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                if m.reasoning { "yes" } else { "no" }.to_owned(),
                if m.supports_images() { "yes" } else { "no" }.to_owned(),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 6]| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    std::iter::once(line(&header))
        .chain(rows.iter().map(line))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(1_048_576), "1.0M");
        assert_eq!(format_token_count(131_072), "131.1K");
        assert_eq!(format_token_count(512), "512");
    }

    #[test]
    fn fuzzy_search_matches_in_order() {
        assert!(fuzzy_matches("anthropic claude-sonnet-4-5", "sonnet"));
        assert!(fuzzy_matches("anthropic claude-sonnet-4-5", "ant snt"));
        assert!(!fuzzy_matches("openai gpt-4o", "sonnet"));
    }
}
