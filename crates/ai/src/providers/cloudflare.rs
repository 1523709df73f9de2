//! Cloudflare's two providers (Workers AI, AI Gateway) over any of their APIs: their base URLs
//! name the account (and gateway) as `{CLOUDFLARE_ACCOUNT_ID}` / `{CLOUDFLARE_GATEWAY_ID}`
//! placeholders, and the gateway authenticates with its own header. pi 1.6 wraps the
//! OpenAI Completions, OpenAI Responses and Anthropic Messages APIs the same way.

use crate::http::HttpRequest;
use crate::types::{Model, StreamOptions};

/// Whether the model is served by one of Cloudflare's providers.
pub fn is_cloudflare(provider: &str) -> bool {
    provider == "cloudflare-workers-ai" || provider == "cloudflare-ai-gateway"
}

/// The base URL a request goes to: for Cloudflare, its `{VAR}` placeholders filled from the
/// request's scoped env (the ids stored with the key it uses), else the environment (an
/// unset variable is an error naming it); for others, the model's.
pub fn request_base_url(model: &Model, options: &StreamOptions) -> Result<String, String> {
    if !is_cloudflare(&model.provider) {
        return Ok(model.base_url.clone());
    }
    fill_placeholders(model, &|name| {
        crate::env_keys::provider_env(name, options.env.as_deref())
    })
}

/// Fills the `{UPPER_CASE}` placeholders of the model's base URL with `lookup`; other braces
/// stay as written.
pub fn fill_placeholders(
    model: &Model,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let url = &model.base_url;
    let mut out = String::with_capacity(url.len());
    let mut rest = url.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .char_indices()
            .find(|&(i, c)| !(c == '_' || c.is_ascii_uppercase() || (i > 0 && c.is_ascii_digit())))
            .map_or(after.len(), |(i, _)| i);
        let name = &after[..name_len];
        if name_len > 0 && after[name_len..].starts_with('}') {
            let value = lookup(name).ok_or_else(|| {
                format!(
                    "{name} is required for provider {} but is not set.",
                    model.provider
                )
            })?;
            out.push_str(&value);
            rest = &after[name_len + 1..];
        } else {
            out.push('{');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// AI Gateway: the key goes in `cf-aig-authorization`, and the upstream key headers
/// (`authorization`, `x-api-key`) are dropped unless the model or the caller set them.
pub fn apply_gateway_auth(
    request: &mut HttpRequest,
    model: &Model,
    options: &StreamOptions,
    api_key: &str,
) {
    if model.provider != "cloudflare-ai-gateway" {
        return;
    }
    for header in ["authorization", "x-api-key"] {
        let explicit = model
            .headers
            .iter()
            .flatten()
            .chain(&options.headers)
            .any(|(name, _)| name.eq_ignore_ascii_case(header));
        if !explicit {
            request
                .headers
                .retain(|(name, _)| !name.eq_ignore_ascii_case(header));
        }
    }
    request.set_header("cf-aig-authorization", &format!("Bearer {api_key}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_need_their_variables() {
        let mut model = crate::models::get_model("openai", "gpt-4o").unwrap();
        model.provider = "cloudflare-ai-gateway".into();
        model.base_url =
            "https://gateway/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai".into();
        let lookup = |name: &str| (name == "CLOUDFLARE_ACCOUNT_ID").then(|| "acc".to_owned());
        assert_eq!(
            fill_placeholders(&model, &lookup),
            Err("CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set.".into())
        );
        let both = |name: &str| Some(name.to_lowercase());
        assert_eq!(
            fill_placeholders(&model, &both).unwrap(),
            "https://gateway/v1/cloudflare_account_id/cloudflare_gateway_id/openai"
        );
        model.base_url = "https://gateway/{lower}/x".into();
        assert_eq!(
            fill_placeholders(&model, &both).unwrap(),
            "https://gateway/{lower}/x"
        );
    }

    #[test]
    fn every_cloudflare_model_names_its_account() {
        for provider in ["cloudflare-workers-ai", "cloudflare-ai-gateway"] {
            for model in crate::models::get_models(provider) {
                assert!(
                    model.base_url.contains("{CLOUDFLARE_ACCOUNT_ID}"),
                    "{}",
                    model.base_url
                );
            }
        }
    }
}
