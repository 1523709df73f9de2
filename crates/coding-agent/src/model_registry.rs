//! Built-in and custom models, and the key and headers to call each one with.

use pi_ai::providers::anthropic_messages::federation::Federation;
use std::collections::BTreeMap;
use std::path::Path;

use pi_ai::models::{ModelOverride, ModelsConfig, ResolvedModels, builtin_models};
use pi_ai::{Model, ThinkingLevel};

use crate::config::auth::AuthStorage;
use crate::config::paths;
use crate::config::values::{is_config_value_configured, resolve_config_value};
use crate::llama;
use crate::model_resolver::{self, Request, Resolution, Suffix};

mod classifiers;
mod virtual_entries;

const CLOUDFLARE_ACCOUNT_ID: &str = "CLOUDFLARE_ACCOUNT_ID";
const CLOUDFLARE_GATEWAY_ID: &str = "CLOUDFLARE_GATEWAY_ID";

/// The model pi picks for each provider when the user names none: pi 1.6's
/// `defaultModelPerProvider`, in its order, which is also the order in which providers with a
/// key are tried for the default model.
pub const DEFAULT_MODELS: [(&str, &str); 42] = [
    ("amazon-bedrock", "us.anthropic.claude-opus-5-5"),
    ("ant-ling", "Ring-2.6-1T"),
    ("anthropic", "claude-opus-5-5"),
    ("openai", "gpt-6.2-sol"),
    ("azure", "gpt-6.2-sol"),
    ("openai-codex", "gpt-6.2-sol"),
    ("radius", "balanced"),
    ("nvidia", "nvidia/nemotron-3.5-super-vl-120b-a12b"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-4-argon"),
    ("google-vertex", "gemini-4-argon"),
    ("github-copilot", "gpt-6.1-sol"),
    ("openrouter", "moonshotai/kimi-k2.7-code"),
    ("vercel-ai-gateway", "zai/glm-5.3"),
    ("xai", "grok-4.7"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"),
    ("zai", "glm-5.3"),
    ("zai-coding-cn", "glm-5.3"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M3"),
    ("minimax-cn", "MiniMax-M3"),
    ("moonshotai", "kimi-k2.7-code"),
    ("moonshotai-cn", "kimi-k2.7-code"),
    ("huggingface", "moonshotai/Kimi-K2.7-Code"),
    ("fireworks", "accounts/fireworks/models/kimi-k3"),
    ("together", "moonshotai/Kimi-K3"),
    ("baseten", "zai-org/GLM-5.3"),
    ("opencode", "kimi-k2.7-code"),
    ("opencode-go", "kimi-k3.1-pro"),
    ("kimi-coding", "kimi-for-coding"),
    ("meta", "muse-spark-1.3"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.7-code"),
    (
        "cloudflare-ai-gateway",
        "workers-ai/@cf/moonshotai/kimi-k2.7-code",
    ),
    ("qwen-token-plan", "qwen3.8-max"),
    ("qwen-token-plan-cn", "qwen3.8-max"),
    ("qwen-token-plan-individual", "qwen3.8-max"),
    ("qwen-token-plan-individual-cn", "qwen3.8-max"),
    ("xiaomi", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.6-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.6-pro"),
];

/// The model id pi picks for a provider when the user names none (see [`DEFAULT_MODELS`]).
pub fn default_model_for(provider: &str) -> Option<&'static str> {
    let provider = canonical_provider(provider);
    DEFAULT_MODELS
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, id)| *id)
}

/// The provider name pi 1.6 uses for one a user may still have in settings, `auth.json` or a
/// `--model` pattern: `azure-openai-responses` became `azure`. Other names are returned as
/// they are.
pub fn canonical_provider(provider: &str) -> &str {
    match provider {
        "azure-openai-responses" => "azure",
        other => other,
    }
}

/// The older name of a provider pi 1.6 renamed, under which `auth.json` may hold its key.
fn former_provider_name(provider: &str) -> Option<&'static str> {
    (provider == "azure").then_some("azure-openai-responses")
}

/// Every model pi knows, with request settings from `models.json` and keys from `auth.json`.
#[derive(Debug, Default, Clone)]
pub struct ModelRegistry {
    resolved: ResolvedModels,
    auth: AuthStorage,
    auth_path: Option<std::path::PathBuf>,
    load_error: Option<String>,
    /// The built-in llama.cpp provider is off (`-builtin:llama.cpp`, `--no-extensions`).
    llama_disabled: bool,
    /// The llama.cpp router, when one is configured.
    llama: Option<llama::config::ServerConfig>,
    /// `models.json` `modelOverrides` by provider, applied again to the models an extension
    /// registers for that provider (pi 0.80.4).
    model_overrides: BTreeMap<String, BTreeMap<String, ModelOverride>>,
    /// Providers that exist only for the virtual models listed under them: always usable.
    virtual_only: std::collections::BTreeSet<String>,
    /// The llama.cpp router's classifier entries (pi 1.6's catalog shape), for
    /// `models.classify()`; never chosen as the session's model.
    llama_classifiers: Vec<serde_json::Value>,
}

/// The key and extra headers for one request.
#[derive(Debug, Default, Clone)]
pub struct RequestAuth {
    pub api_key: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// The provider's own auth resolved to a header (`ANTHROPIC_AUTH_TOKEN`'s bearer token)
    /// rather than a key. Headers configured in `models.json` do not count: pi 1.6 still asks
    /// those providers for a key.
    pub header_auth: bool,
    /// Anthropic authenticates by workload identity federation (`ANTHROPIC_FEDERATION_RULE_ID`
    /// and company): the provider exchanges the identity token itself, no key is needed.
    pub federation: bool,
    /// The provider-scoped environment (`auth.json` `env`) the request's configuration reads
    /// before the process environment.
    pub env: Option<std::sync::Arc<BTreeMap<String, String>>>,
}

impl ModelRegistry {
    /// Loads the catalog, `models.json` and `auth.json` from the agent dir. A broken
    /// `models.json` keeps the built-in models and is reported by [`Self::load_error`].
    pub fn load(agent_dir: &Path) -> Self {
        let mut registry = Self::load_files(agent_dir);
        registry.auth_path = Some(paths::auth_path(agent_dir));
        registry.apply_login_base_urls();
        registry.apply_login_model_lists();
        registry.llama = llama::config::resolve(&registry.auth);
        let stored = llama::store::read_chat_models(agent_dir);
        registry.set_llama_models(stored);
        registry.set_llama_classifiers(llama::store::read_classifiers(agent_dir));
        registry
    }

    /// The registry read again from the same agent dir (`None` for one built in memory).
    pub fn reloaded(&self) -> Option<Self> {
        let mut fresh = self
            .auth_path
            .as_deref()
            .and_then(Path::parent)
            .map(Self::load)?;
        if self.llama_disabled {
            fresh.disable_llama();
        }
        Some(fresh)
    }

    /// Turns the built-in llama.cpp provider off: its models go and it counts as not
    /// configured.
    pub fn disable_llama(&mut self) {
        self.llama_disabled = true;
        self.llama = None;
        self.llama_classifiers.clear();
        self.resolved
            .models
            .retain(|m| m.provider != llama::PROVIDER_ID);
    }

    /// Whether the built-in llama.cpp provider (and `/llama`) is on.
    pub fn llama_enabled(&self) -> bool {
        !self.llama_disabled
    }

    /// The configured llama.cpp router, if the provider is on and has one.
    pub fn llama_server(&self) -> Option<&llama::config::ServerConfig> {
        self.llama.as_ref()
    }

    /// Replaces the llama.cpp models (from the saved catalog or a refresh); they call the
    /// router configured now.
    pub fn set_llama_models(&mut self, models: Vec<Model>) {
        if self.llama_disabled {
            return;
        }
        self.resolved
            .models
            .retain(|m| m.provider != llama::PROVIDER_ID);
        let base_url = self
            .llama
            .as_ref()
            .and_then(|c| llama::url::inference_url(&c.server_url).ok());
        self.resolved
            .models
            .extend(models.into_iter().map(|mut model| {
                if let Some(base_url) = &base_url {
                    model.base_url = base_url.clone();
                }
                model
            }));
    }

    /// Where `auth.json` is (`None` for a registry built in memory).
    pub fn auth_path(&self) -> Option<&Path> {
        self.auth_path.as_deref()
    }

    /// Models of a provider whose login names its API host (Copilot) use that host, unless
    /// `models.json` set one for the provider.
    fn apply_login_base_urls(&mut self) {
        let providers: Vec<String> = self
            .auth
            .providers()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for provider in providers {
            let (Some(login), Some(credentials)) = (
                pi_ai::oauth::OAuthProvider::from_id(&provider),
                self.auth.oauth(&provider),
            ) else {
                continue;
            };
            let Some(base_url) = login.base_url(credentials) else {
                continue;
            };
            let builtin = pi_ai::get_models(&provider);
            for model in self
                .resolved
                .models
                .iter_mut()
                .filter(|m| m.provider == provider)
            {
                // A base URL models.json set differs from the catalog's: it stays.
                let from_catalog = builtin
                    .iter()
                    .any(|b| b.id == model.id && b.base_url == model.base_url);
                if from_catalog {
                    model.base_url = base_url.clone();
                }
            }
        }
    }

    /// A GitHub Copilot login that lists the models its account may use
    /// (`availableModelIds`, every one a string) hides the catalog's other Copilot models,
    /// as pi 1.6.0's `filterModels`; models added in `models.json` stay.
    fn apply_login_model_lists(&mut self) {
        const PROVIDER: &str = "github-copilot";
        let Some(ids) = self
            .auth
            .oauth(PROVIDER)
            .and_then(|login| login.extra.get("availableModelIds"))
            .and_then(serde_json::Value::as_array)
        else {
            return;
        };
        let Some(available) = ids
            .iter()
            .map(serde_json::Value::as_str)
            .collect::<Option<std::collections::HashSet<&str>>>()
        else {
            return;
        };
        let builtin = pi_ai::get_models(PROVIDER);
        self.resolved.models.retain(|model| {
            model.provider != PROVIDER
                || available.contains(model.id.as_str())
                || !builtin.iter().any(|b| b.id == model.id)
        });
    }

    fn load_files(agent_dir: &Path) -> Self {
        let auth = AuthStorage::load(&paths::auth_path(agent_dir));
        let builtin = match builtin_models() {
            Ok(models) => models,
            Err(e) => {
                return Self {
                    auth,
                    auth_path: None,
                    load_error: Some(e.to_string()),
                    ..Self::default()
                };
            }
        };
        let models_path = paths::models_path(agent_dir);
        let text = match crate::text_file::read_text(&models_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Self {
                    resolved: ResolvedModels {
                        models: builtin,
                        ..Default::default()
                    },
                    auth,
                    auth_path: None,
                    load_error: None,
                    ..Self::default()
                };
            }
            Err(e) => {
                let error = format!(
                    "Failed to load models.json: {e}\n\nFile: {}",
                    models_path.display()
                );
                return Self {
                    resolved: ResolvedModels {
                        models: builtin,
                        ..Default::default()
                    },
                    auth,
                    auth_path: None,
                    load_error: Some(error),
                    ..Self::default()
                };
            }
        };
        let parsed = ModelsConfig::parse(&text)
            .and_then(|config| Ok((config.resolve(builtin.clone())?, config)));
        match parsed {
            Ok((resolved, config)) => Self {
                resolved,
                model_overrides: config
                    .providers
                    .into_iter()
                    .filter(|(_, p)| !p.model_overrides.is_empty())
                    .map(|(name, p)| (name, p.model_overrides))
                    .collect(),
                auth,
                auth_path: None,
                load_error: None,
                ..Self::default()
            },
            Err(e) => Self {
                resolved: ResolvedModels {
                    models: builtin,
                    ..Default::default()
                },
                auth,
                auth_path: None,
                load_error: Some(format!("{e}\n\nFile: {}", models_path.display())),
                ..Self::default()
            },
        }
    }

    /// `pi.registerProvider(name, config)` of an extension, with the config shaped like a
    /// `models.json` provider entry: with `models`, they replace the provider's models;
    /// without, `baseUrl` and the request settings override the provider's.
    pub fn register_provider(
        &mut self,
        name: &str,
        config: &serde_json::Value,
    ) -> Result<(), String> {
        let text = serde_json::json!({ "providers": { name: config } }).to_string();
        let parsed = ModelsConfig::parse(&text).map_err(|e| e.to_string())?;
        let replaces = config
            .get("models")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|m| !m.is_empty());
        let mut current = self.resolved.models.clone();
        if replaces {
            current.retain(|m| m.provider != name);
        }
        let resolved = parsed.resolve(current).map_err(|e| e.to_string())?;
        self.resolved.models = resolved.models;
        if let Some(overrides) = self.model_overrides.get(name) {
            for model in self
                .resolved
                .models
                .iter_mut()
                .filter(|m| m.provider == name)
            {
                if let Some(o) = overrides.get(&model.id) {
                    o.apply(model);
                }
            }
        }
        self.resolved
            .request_configs
            .extend(resolved.request_configs);
        self.resolved.model_headers.extend(resolved.model_headers);
        Ok(())
    }

    /// Why `models.json` could not be used, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    /// Every model.
    pub fn all(&self) -> &[Model] {
        &self.resolved.models
    }

    /// Models whose provider has a key configured somewhere.
    pub fn available(&self) -> Vec<&Model> {
        self.all()
            .iter()
            .filter(|m| self.has_auth(&m.provider))
            .collect()
    }

    /// Whether a provider has a key in `auth.json`, the environment or `models.json` / an
    /// extension's `registerProvider` (whose `apiKey` counts, as in pi 1.6, only when the
    /// variables it names are set; llama.cpp: whether a router URL is configured).
    pub fn has_auth(&self, provider: &str) -> bool {
        if provider == llama::PROVIDER_ID && !self.llama_disabled {
            return self.llama.is_some();
        }
        if self.virtual_only.contains(provider) {
            return true;
        }
        let has_key = self.stored_key(provider).is_some()
            || self.auth.signed_in_by_env(provider)
            || pi_ai::get_env_api_key(provider).is_some()
            || pi_ai::env_keys::env_auth_header(provider).is_some()
            || (provider == "anthropic" && Federation::from_env(None).is_some())
            || self
                .resolved
                .request_configs
                .get(provider)
                .is_some_and(|c| c.api_key.as_deref().is_some_and(is_config_value_configured));
        has_key && self.has_cloudflare_ids(provider)
    }

    /// Where a provider's credential comes from, as pi 1.6's `getProviderAuthStatus` names
    /// it (`stored`, `environment`, `models_json_key`), for bug reports; never the key.
    pub fn auth_status(&self, provider: &str) -> serde_json::Value {
        let source = if self.stored_key(provider).is_some() || self.auth.oauth(provider).is_some() {
            Some("stored")
        } else if pi_ai::get_env_api_key(provider).is_some() || self.auth.signed_in_by_env(provider)
        {
            Some("environment")
        } else if self
            .resolved
            .request_configs
            .get(provider)
            .is_some_and(|c| c.api_key.as_deref().is_some_and(is_config_value_configured))
        {
            Some("models_json_key")
        } else {
            None
        };
        match source {
            Some(source) => serde_json::json!({"configured": true, "source": source}),
            None => serde_json::json!({"configured": false}),
        }
    }

    /// Whether the provider's requests use an OAuth sign-in.
    pub fn uses_oauth(&self, provider: &str) -> bool {
        self.auth.oauth(provider).is_some()
    }

    /// The key `auth.json` holds for a provider, under its name or the one pi 1.6 renamed.
    fn stored_key(&self, provider: &str) -> Option<String> {
        self.auth
            .api_key(provider)
            .or_else(|| former_provider_name(provider).and_then(|former| self.auth.api_key(former)))
    }

    /// Cloudflare's providers also need the account (and the AI Gateway its gateway) id, from
    /// the environment or stored with the key, as in pi 1.6; other providers need nothing more.
    fn has_cloudflare_ids(&self, provider: &str) -> bool {
        let needed: &[&str] = match provider {
            "cloudflare-workers-ai" => &[CLOUDFLARE_ACCOUNT_ID],
            "cloudflare-ai-gateway" => &[CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_GATEWAY_ID],
            _ => return true,
        };
        let stored = self.auth.env(provider);
        needed.iter().all(|name| {
            std::env::var(name).is_ok_and(|v| !v.is_empty())
                || stored
                    .and_then(|env| env.get(*name))
                    .is_some_and(|v| !v.is_empty())
        })
    }

    /// Whether any model belongs to `provider`.
    pub fn has_provider(&self, provider: &str) -> bool {
        self.all().iter().any(|m| m.provider == provider)
    }

    /// The stored credentials (`auth.json`) as loaded.
    pub fn auth_storage(&self) -> &AuthStorage {
        &self.auth
    }

    /// A provider's key in the request order without `--api-key`: `auth.json`, the
    /// environment, `models.json`'s `apiKey`.
    pub fn provider_key(&self, provider: &str) -> Option<String> {
        if provider == llama::PROVIDER_ID && !self.llama_disabled {
            return self.llama.as_ref().map(|c| c.api_key.clone());
        }
        self.stored_key(provider)
            .or_else(|| pi_ai::get_env_api_key(provider))
            .or_else(|| {
                self.resolved
                    .request_configs
                    .get(provider)
                    .and_then(|c| c.api_key.as_deref())
                    .and_then(resolve_config_value)
            })
    }

    /// A model by provider and id.
    /// A provider renamed by pi 1.6 is found under its old name too.
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        let provider = canonical_provider(provider);
        self.all()
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    /// Key and headers for a request: `--api-key`, then `auth.json`, then the environment,
    /// then `models.json`'s `apiKey`; headers from the model, provider and per-model config.
    pub fn request_auth(
        &self,
        model: &Model,
        cli_key: Option<&str>,
    ) -> Result<RequestAuth, String> {
        let config = self.resolved.request_configs.get(&model.provider);
        let llama_key = (model.provider == llama::PROVIDER_ID && !self.llama_disabled)
            .then(|| self.llama.as_ref().map(|c| c.api_key.clone()))
            .flatten();
        let stored = (cli_key.is_none() && llama_key.is_none())
            .then(|| self.stored_key(&model.provider))
            .flatten();
        let env = self.auth.scoped_env(&model.provider, stored.is_some());
        // A Bedrock profile or Vertex project stored without a key authenticates as
        // ambient credentials do.
        let stored = stored.or_else(|| {
            (cli_key.is_none() && self.auth.signed_in_by_env(&model.provider))
                .then(|| "<authenticated>".to_owned())
        });
        let given = cli_key.map(str::to_owned).or(llama_key).or(stored);
        // pi 1.6: without a given or stored key, `ANTHROPIC_AUTH_TOKEN` authenticates
        // Anthropic as a bearer token, ahead of the key variables.
        let bearer = given
            .is_none()
            .then(|| pi_ai::env_keys::env_auth_header(&model.provider))
            .flatten();
        let api_key = match (given, &bearer) {
            (Some(key), _) => Some(key),
            (None, Some(_)) => None,
            (None, None) => pi_ai::get_env_api_key(&model.provider).or_else(|| {
                config
                    .and_then(|c| c.api_key.as_deref())
                    .and_then(resolve_config_value)
            }),
        };
        if let (Some(raw), None, None) =
            (config.and_then(|c| c.api_key.as_deref()), &api_key, &bearer)
            && let Some(command) = raw.strip_prefix('!')
        {
            return Err(format!(
                "Failed to resolve API key for provider \"{}\" from shell command: {command}",
                model.provider
            ));
        }
        let header_auth = bearer.is_some();
        let federation = api_key.is_none()
            && !header_auth
            && model.provider == "anthropic"
            && Federation::from_env(env.as_deref()).is_some();
        let mut headers: BTreeMap<String, String> = bearer.into_iter().collect();
        let sources = [
            model.headers.as_ref(),
            config.and_then(|c| c.headers.as_ref()),
            self.resolved
                .model_headers
                .get(&(model.provider.clone(), model.id.clone())),
        ];
        for (name, value) in sources.into_iter().flatten().flatten() {
            let resolved = resolve_config_value(value).ok_or_else(|| {
                format!(
                    "Failed to resolve header \"{name}\" for \"{}\"",
                    model.full_id()
                )
            })?;
            headers.insert(name.clone(), resolved);
        }
        if config.is_some_and(|c| c.auth_header) {
            let key = api_key
                .as_deref()
                .ok_or_else(|| format!("No API key found for \"{}\"", model.provider))?;
            headers.insert("Authorization".into(), format!("Bearer {key}"));
        }
        Ok(RequestAuth {
            api_key,
            headers,
            header_auth,
            federation,
            env,
        })
    }

    /// Resolves a `--model` pattern (`provider/id`, `id`, each with an optional `:level`)
    /// and optional `--provider` to a listed model and an explicit thinking level, as pi
    /// 1.6.0 resolves references (`model_resolver`).
    pub fn resolve_pattern(
        &self,
        pattern: &str,
        provider: Option<&str>,
    ) -> Result<(Model, Option<ThinkingLevel>), String> {
        match self.resolve_reference(pattern, provider) {
            Resolution::Resolved { model, level, .. } => Ok((model.clone(), level)),
            other => Err(Self::unresolved_text(pattern, provider, &other)),
        }
    }

    /// `--model` as pi 1.6.0's `resolveCliModel`: a listed model, else a custom model id on
    /// the provider the pattern names (reasoning when a thinking level other than `off` is
    /// asked for), with the warning to show. `cli_thinking` is `--thinking`: given, a
    /// `:<level>` suffix stays part of a custom id.
    pub fn resolve_cli(
        &self,
        pattern: &str,
        provider: Option<&str>,
        cli_thinking: Option<ThinkingLevel>,
    ) -> Result<(Model, Option<ThinkingLevel>, Option<String>), String> {
        match self.resolve_reference(pattern, provider) {
            Resolution::Resolved {
                model,
                level,
                warning,
            } => Ok((model.clone(), level, warning)),
            Resolution::NotFound(Some(target)) => {
                let Some(first) = target.provider_models.first() else {
                    return Err(format!("Model not found: {pattern}"));
                };
                let base = default_model_for(&first.provider)
                    .and_then(|id| target.provider_models.iter().find(|m| m.id == id))
                    .unwrap_or(first);
                let id = if cli_thinking.is_some() {
                    target.model_text.clone()
                } else {
                    target.model_id.clone()
                };
                let level = cli_thinking.is_none().then_some(target.level).flatten();
                let mut model = (*base).clone();
                model.id.clone_from(&id);
                model.name.clone_from(&id);
                if cli_thinking
                    .or(level)
                    .is_some_and(|l| l != ThinkingLevel::Off)
                {
                    model.reasoning = true;
                }
                let warning = format!(
                    "Model \"{id}\" not found for provider \"{}\". Using custom model id.",
                    model.provider
                );
                Ok((model, level, Some(warning)))
            }
            other => Err(Self::unresolved_text(pattern, provider, &other)),
        }
    }

    /// The reference among every model (credentials only break ties), the old Azure
    /// provider name read as `azure`.
    fn resolve_reference<'a>(&'a self, pattern: &str, provider: Option<&str>) -> Resolution<'a> {
        // `azure-openai-responses/<id>` names the provider pi 1.6 calls `azure`.
        let renamed = pattern
            .split_once('/')
            .filter(|(p, _)| canonical_provider(p) != *p)
            .map(|(p, id)| format!("{}/{id}", canonical_provider(p)));
        let request = Request {
            text: renamed.as_deref().unwrap_or(pattern),
            provider: provider.map(canonical_provider),
            suffix: Suffix::Strict,
            fuzzy: true,
        };
        let models: Vec<&Model> = self.all().iter().collect();
        model_resolver::resolve(&request, &models, &|p| self.has_auth(p))
    }

    /// The error of a reference that named no one model.
    fn unresolved_text(pattern: &str, provider: Option<&str>, result: &Resolution) -> String {
        match result {
            Resolution::Ambiguous { candidates, .. } => {
                let mut names: Vec<String> = candidates.iter().map(|m| m.full_id()).collect();
                names.sort();
                format!(
                    "Model \"{pattern}\" is ambiguous; use provider/id: {}",
                    names.join(", ")
                )
            }
            _ => match provider.map(canonical_provider) {
                Some(provider) => {
                    let id = pattern
                        .strip_prefix(&format!("{provider}/"))
                        .unwrap_or(pattern);
                    format!("Model not found: {provider}/{id}")
                }
                None => format!("Model not found: {pattern}"),
            },
        }
    }

    /// The model to use when none is named: the settings' default, else the default model of
    /// the first built-in provider with a key, else the first available model. A saved
    /// default whose provider has no key gives way to a model that has one (pi 0.80.4).
    pub fn default_model(&self, provider: Option<&str>, model: Option<&str>) -> Option<Model> {
        if let (Some(p), Some(id)) = (provider, model)
            && let Some(m) = self.find(p, id)
        {
            if self.has_auth(&m.provider) {
                return Some(m.clone());
            }
            if let Some(available) = self.first_available() {
                return Some(available);
            }
            return Some(m.clone());
        }
        if let Some(p) = provider.map(canonical_provider) {
            if let Some(m) = default_model_for(p).and_then(|id| self.find(p, id)) {
                return Some(m.clone());
            }
            if let Some(m) = self.all().iter().find(|m| m.provider == p) {
                return Some(m.clone());
            }
        }
        self.first_available()
    }

    /// The default model of the first built-in provider with a key, else the first model
    /// with a key.
    fn first_available(&self) -> Option<Model> {
        for (p, id) in DEFAULT_MODELS {
            if self.has_auth(p)
                && let Some(m) = self.find(p, id)
            {
                return Some(m.clone());
            }
        }
        self.available().first().map(|m| (*m).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_model_is_in_the_catalog() {
        for (provider, id) in DEFAULT_MODELS {
            assert!(pi_ai::get_model(provider, id).is_some(), "{provider}/{id}");
        }
        // Every provider of the catalog with chat models has one (typesafe has none).
        for provider in pi_ai::get_providers() {
            let has_models = !pi_ai::get_models(&provider).is_empty();
            assert_eq!(
                default_model_for(&provider).is_some(),
                has_models,
                "{provider}"
            );
        }
    }

    #[test]
    fn the_old_azure_name_means_azure() {
        assert_eq!(canonical_provider("azure-openai-responses"), "azure");
        assert_eq!(canonical_provider("openai"), "openai");
        assert_eq!(
            default_model_for("azure-openai-responses"),
            Some("gpt-6.2-sol")
        );
    }
}
