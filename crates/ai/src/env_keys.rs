//! API keys from the environment variables the TypeScript pi reads, per provider.

/// The environment variables that may hold a provider's API key, in priority order: pi
/// 1.6's `env-api-keys.js`, variable for variable.
///
/// Two differences are on purpose: `ANTHROPIC_AUTH_TOKEN`, which pi 1.6 lists for
/// Anthropic but sends as a bearer token (not as a key), is served by [`env_auth_header`];
/// and `azure-openai-responses`, the Azure provider's name before pi 1.6 renamed it `azure`,
/// still finds the Azure key for settings that name it.
pub fn api_key_env_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        "anthropic" => &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "ant-ling" => &["ANT_LING_API_KEY"],
        // Qwen Token Plan: the plan's own variable first, then the region's variable both
        // plans shared before.
        "qwen-token-plan" => &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &[
            "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY",
            "QWEN_TOKEN_PLAN_CN_API_KEY",
        ],
        "qwen-token-plan-individual" => &[
            "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
            "QWEN_TOKEN_PLAN_API_KEY",
        ],
        "qwen-token-plan-individual-cn" => &[
            "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
            "QWEN_TOKEN_PLAN_CN_API_KEY",
        ],
        "openai" => &["OPENAI_API_KEY"],
        "azure" | "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "typesafe" => &["TYPESAFE_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "meta" => &["META_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => &[],
    }
}

/// The request header that authenticates `provider` from the environment in place of a
/// key: pi 1.6 sends `ANTHROPIC_AUTH_TOKEN` to Anthropic (and gateways speaking its API at
/// the provider's base URL) as `Authorization: Bearer <token>`.
pub fn env_auth_header(provider: &str) -> Option<(String, String)> {
    if provider != "anthropic" {
        return None;
    }
    non_empty_env("ANTHROPIC_AUTH_TOKEN")
        .map(|token| ("Authorization".to_owned(), format!("Bearer {token}")))
}

/// Whether a request is authenticated by a key or by one of the headers that carry
/// credentials (`authorization`, `x-api-key`, Cloudflare AI Gateway's
/// `cf-aig-authorization`), as pi-ai 1.6's `hasRequestAuth`.
pub fn has_request_auth<'a>(
    api_key: Option<&str>,
    headers: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> bool {
    api_key.is_some_and(|k| !k.is_empty())
        || headers.into_iter().any(|(name, value)| {
            ["authorization", "x-api-key", "cf-aig-authorization"]
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n))
                && !value.trim().is_empty()
        })
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A variable of one provider's configuration: its provider-scoped value (an `auth.json`
/// key's `env`) first, then the process environment; empty values count as unset (pi-ai
/// 1.6's `getProviderEnvValue`).
pub fn provider_env(
    name: &str,
    scoped: Option<&std::collections::BTreeMap<String, String>>,
) -> Option<String> {
    scoped
        .and_then(|env| env.get(name))
        .filter(|v| !v.is_empty())
        .cloned()
        .or_else(|| non_empty_env(name))
}

/// The API key for a provider from its environment variables, if one is set.
///
/// Providers with ambient credentials (Vertex ADC, AWS) report `"<authenticated>"` when those
/// are configured, as the TypeScript pi does.
pub fn get_env_api_key(provider: &str) -> Option<String> {
    if let Some(key) = api_key_env_vars(provider)
        .iter()
        .find_map(|v| non_empty_env(v))
    {
        return Some(key);
    }
    let authenticated = || Some("<authenticated>".to_owned());
    match provider {
        "google-vertex" => {
            let has_adc = match non_empty_env("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(path) => std::path::Path::new(&path).exists(),
                None => std::env::var_os("HOME").is_some_and(|home| {
                    std::path::Path::new(&home)
                        .join(".config/gcloud/application_default_credentials.json")
                        .exists()
                }),
            };
            // GOOGLE_CLOUD_ACCESS_TOKEN (a ready OAuth token) is pi-rs's addition.
            let has_credentials = has_adc || non_empty_env("GOOGLE_CLOUD_ACCESS_TOKEN").is_some();
            let has_project = non_empty_env("GOOGLE_CLOUD_PROJECT")
                .or_else(|| non_empty_env("GCLOUD_PROJECT"))
                .is_some();
            let has_location = non_empty_env("GOOGLE_CLOUD_LOCATION").is_some();
            (has_credentials && has_project && has_location)
                .then(authenticated)
                .flatten()
        }
        "amazon-bedrock" => {
            let any = [
                "AWS_PROFILE",
                "AWS_BEARER_TOKEN_BEDROCK",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "AWS_WEB_IDENTITY_TOKEN_FILE",
            ]
            .iter()
            .any(|v| non_empty_env(v).is_some());
            let keys = non_empty_env("AWS_ACCESS_KEY_ID").is_some()
                && non_empty_env("AWS_SECRET_ACCESS_KEY").is_some();
            (any || keys).then(authenticated).flatten()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_providers_to_their_variables() {
        assert_eq!(api_key_env_vars("openai"), &["OPENAI_API_KEY"]);
        assert_eq!(
            api_key_env_vars("anthropic"),
            &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
        );
        assert_eq!(api_key_env_vars("groq"), &["GROQ_API_KEY"]);
        assert!(api_key_env_vars("my-local-thing").is_empty());
    }

    #[test]
    fn providers_new_in_pi_16_have_their_variables() {
        assert_eq!(
            api_key_env_vars("github-copilot"),
            &["COPILOT_GITHUB_TOKEN"]
        );
        assert_eq!(api_key_env_vars("azure"), &["AZURE_OPENAI_API_KEY"]);
        assert_eq!(api_key_env_vars("ant-ling"), &["ANT_LING_API_KEY"]);
        assert_eq!(api_key_env_vars("meta"), &["META_API_KEY"]);
        assert_eq!(
            api_key_env_vars("qwen-token-plan-individual-cn"),
            &[
                "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
                "QWEN_TOKEN_PLAN_CN_API_KEY"
            ]
        );
        assert_eq!(
            api_key_env_vars("qwen-token-plan"),
            &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"]
        );
    }
}
