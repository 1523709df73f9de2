//! `pi auth`: check a provider's readiness, print its credentials for other programs, log
//! out, and save an API key, with pi 1.5.2's texts and exit codes. None of them starts a
//! session; only `--provider` / `--model` select what they resolve.

use std::io::{IsTerminal, Write};
use std::path::Path;

use serde_json::{Value, json};

use pi_ai::oauth::OAuthProvider;

use crate::config::auth::{Credential, update_auth_file};
use crate::config::paths;
use crate::model_registry::ModelRegistry;

const HELP: &str = "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, print their credentials for external clients, or check that they are ready.
Credentials are stored in ~/.pi/agent/auth.json.

Commands:
  login <provider>        Sign in with an account in the browser, or save an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshes if expired)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Emit the credential from check, or include it in JSON output
  --no-refresh            Do not refresh expired OAuth credentials during check";

const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";

/// Handles `pi auth ...`; `None` when the arguments are not an auth command.
pub fn handle(args: &[String]) -> Option<i32> {
    if args.first().map(String::as_str) != Some("auth") {
        return None;
    }
    let rest = &args[1..];
    let sub = rest.first().map(String::as_str);
    if sub.is_none() || sub == Some("help") || rest.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return Some(0);
    }
    let agent_dir = paths::agent_dir();
    Some(match sub.unwrap_or_default() {
        "check" => run_check(&rest[1..], &agent_dir),
        "print-api-key" => run_print(&rest[1..], &agent_dir, Kind::ApiKey),
        "print-bearer-token" => run_print(&rest[1..], &agent_dir, Kind::BearerToken),
        "logout" => run_logout(&rest[1..], &agent_dir),
        "login" => run_login(&rest[1..], &agent_dir),
        other => {
            eprintln!(
                "Error: Unknown auth command \"{other}\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\"."
            );
            1
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Check => "auth check",
            Self::ApiKey => "auth print-api-key",
            Self::BearerToken => "auth print-bearer-token",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Self::Check => {
                "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]"
            }
            Self::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Self::BearerToken => {
                "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]"
            }
        }
    }
}

/// The options of check and the print commands.
#[derive(Debug, Default)]
struct Options {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    credentials: bool,
    no_refresh: bool,
    /// `--min-expiry`: the lifetime a printed bearer token must have left.
    min_expiry_ms: Option<i64>,
}

/// The lifetime print-bearer-token asks of a token when `--min-expiry` is not given.
const DEFAULT_BEARER_MIN_EXPIRY_MS: i64 = 30 * 60_000;

/// Why the options were refused: an unknown option has its own two-line message.
enum OptionsError {
    Unknown(String),
    Message(String),
}

fn parse_options(args: &[String], kind: Kind) -> Result<Options, OptionsError> {
    let mut options = Options::default();
    let mut positional = false;
    let mut iter = args.iter().peekable();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--provider" | "--model" => {
                let value = iter.next_if(|v| !v.starts_with('-')).cloned();
                let Some(value) = value else {
                    return Err(OptionsError::Unknown(arg.clone()));
                };
                let value = Some(value.trim().to_owned()).filter(|v| !v.is_empty());
                if arg == "--provider" {
                    options.provider = value;
                } else {
                    options.model = value;
                }
            }
            "--min-expiry" => {
                if kind != Kind::BearerToken {
                    return Err(OptionsError::Message(
                        "--min-expiry is only supported by print-bearer-token".into(),
                    ));
                }
                let Some(ms) = iter.next().and_then(|v| parse_duration_ms(v)) else {
                    return Err(OptionsError::Message(
                        "--min-expiry must use a duration such as 30m or 1h".into(),
                    ));
                };
                options.min_expiry_ms = Some(i64::try_from(ms).unwrap_or(i64::MAX));
            }
            "--json" | "--credentials" | "--no-refresh" => {
                if kind != Kind::Check {
                    return Err(OptionsError::Message(format!(
                        "{arg} is only supported by auth check"
                    )));
                }
                options.json |= arg == "--json";
                options.credentials |= arg == "--credentials";
                options.no_refresh |= arg == "--no-refresh";
            }
            other if other.starts_with('-') => {
                return Err(OptionsError::Unknown(other.to_owned()));
            }
            _ => positional = true,
        }
    }
    if positional {
        return Err(OptionsError::Message(
            "Auth commands only accept --provider and --model".into(),
        ));
    }
    if options.provider.is_none() && options.model.is_none() {
        return Err(OptionsError::Message(match kind {
            Kind::Check => "Auth checks require --provider <provider> or --model <model>".into(),
            _ => "Credential printing requires --provider <provider> or --model <model>".into(),
        }));
    }
    Ok(options)
}

/// `30m`, `1h`, `10s`, `500ms`.
fn parse_duration_ms(text: &str) -> Option<u64> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    let amount: u64 = text[..digits].parse().ok()?;
    let factor = match text[digits..].to_ascii_lowercase().as_str() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(factor)
}

/// Prints a refused option as pi does; returns the exit code.
fn refuse(error: OptionsError, kind: Kind, message_code: i32) -> i32 {
    match error {
        OptionsError::Unknown(option) => {
            eprintln!(
                "Unknown option {option} for \"{}\".\nUse \"pi --help\" or \"{}\".",
                kind.name(),
                kind.usage()
            );
            1
        }
        OptionsError::Message(message) => {
            eprintln!("Error: {message}");
            message_code
        }
    }
}

/// The provider `--model` names: its `provider/` prefix when that provider exists, else
/// the provider of the model it resolves to.
fn provider_of_model(
    registry: &ModelRegistry,
    pattern: &str,
    provider: Option<&str>,
) -> Option<String> {
    if let Some((prefix, _)) = pattern.split_once('/')
        && registry.has_provider(prefix)
    {
        return Some(prefix.to_owned());
    }
    registry
        .resolve_pattern(pattern, provider)
        .ok()
        .map(|(model, _)| model.provider)
}

fn run_check(args: &[String], agent_dir: &Path) -> i32 {
    let options = match parse_options(args, Kind::Check) {
        Ok(options) => options,
        Err(error) => return refuse(error, Kind::Check, 2),
    };
    let registry = ModelRegistry::load(agent_dir);
    let provider = match (&options.model, &options.provider) {
        (Some(model), provider) => match provider_of_model(&registry, model, provider.as_deref()) {
            Some(found) => found,
            None => {
                return report(
                    &options,
                    json!({"status": "invalid", "provider": model, "reason": "invalid_state"}),
                    None,
                    2,
                );
            }
        },
        (None, Some(provider)) => provider.clone(),
        (None, None) => return 2,
    };
    if !registry.has_provider(&provider) {
        return report(
            &options,
            json!({"status": "not_ready", "provider": provider, "reason": "provider_not_found"}),
            None,
            1,
        );
    }
    let oauth = registry.auth_storage().oauth(&provider).is_some();
    let auth_type = if oauth { "oauth" } else { "api_key" };
    let key = if oauth {
        oauth_credential(agent_dir, &provider, 0, !options.no_refresh, false)
    } else {
        registry.provider_key(&provider)
    };
    match key {
        Some(key) => report(
            &options,
            json!({"status": "ready", "provider": provider, "authType": auth_type}),
            Some(key),
            0,
        ),
        None => report(
            &options,
            json!({"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}),
            None,
            1,
        ),
    }
}

/// A provider's OAuth credential, refreshed (under the auth.json lock) when it expires
/// within `min_validity_ms` and `refresh` allows: the request key, or with `bearer` the
/// access token. `None` when there is none or the refresh failed (said on stderr).
fn oauth_credential(
    agent_dir: &Path,
    provider: &str,
    min_validity_ms: i64,
    refresh: bool,
    bearer: bool,
) -> Option<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    let path = paths::auth_path(agent_dir);
    let found = runtime.block_on(crate::config::oauth_refresh::fresh_credentials(
        &path,
        provider,
        min_validity_ms,
        refresh,
    ));
    match found {
        Ok(credentials) => credentials.map(|c| {
            if bearer {
                c.access
            } else {
                crate::config::auth::oauth_key(provider, &c)
            }
        }),
        Err(error) => {
            eprintln!("{error}");
            None
        }
    }
}

/// The OAuth bearer token of `provider` with at least `min_validity_ms` (and five minutes)
/// left, refreshed and saved first when it has less. A refresh that fails, or one whose
/// token still expires too soon, is pi 1.6.0's "Failed to resolve credential".
fn bearer_for_print(
    agent_dir: &Path,
    provider: &str,
    min_validity_ms: i64,
) -> Result<Option<String>, String> {
    const FAILED: &str = "Failed to resolve credential";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|_| FAILED.to_owned())?;
    let path = paths::auth_path(agent_dir);
    let wanted = min_validity_ms.max(crate::config::oauth_refresh::MIN_VALIDITY_MS);
    let found = runtime.block_on(crate::config::oauth_refresh::fresh_credentials(
        &path, provider, wanted, true,
    ));
    match found {
        Ok(Some(credentials)) if credentials.expires_within(wanted) => Err(FAILED.to_owned()),
        Ok(credentials) => Ok(credentials.map(|c| c.access)),
        Err(_) => Err(FAILED.to_owned()),
    }
}

/// Prints a check result (plain status, the credential, or JSON) and returns `code`.
fn report(options: &Options, mut result: Value, credential: Option<String>, code: i32) -> i32 {
    if options.json {
        if options.credentials
            && let (Some(key), Value::Object(map)) = (&credential, &mut result)
        {
            map.insert("credentials".into(), key.clone().into());
        }
        println!("{result}");
    } else if let (true, Some(key)) = (options.credentials, &credential) {
        println!("{key}");
    } else {
        println!("{}", result["status"].as_str().unwrap_or_default());
    }
    code
}

fn run_print(args: &[String], agent_dir: &Path, kind: Kind) -> i32 {
    let options = match parse_options(args, kind) {
        Ok(options) => options,
        Err(error) => return refuse(error, kind, 1),
    };
    match resolve_for_print(&options, &ModelRegistry::load(agent_dir), kind, agent_dir) {
        Ok(value) => {
            println!("{value}");
            0
        }
        Err(message) => {
            eprintln!("Error: {message}");
            1
        }
    }
}

fn resolve_for_print(
    options: &Options,
    registry: &ModelRegistry,
    kind: Kind,
    agent_dir: &Path,
) -> Result<String, String> {
    let stored = registry.auth_storage();
    let providers: Vec<String> = match (&options.provider, &options.model) {
        (Some(provider), model) => {
            if !registry.has_provider(provider) {
                return Err(format!(
                    "Unknown provider \"{provider}\". Use --list-models to see available providers."
                ));
            }
            if let Some(model) = model {
                registry.resolve_pattern(model, Some(provider))?;
            }
            vec![provider.clone()]
        }
        (None, Some(model)) => {
            let found: Vec<String> = stored
                .providers()
                .into_iter()
                .filter(|p| registry.has_provider(p))
                .filter(|p| registry.resolve_pattern(model, Some(p)).is_ok())
                .map(str::to_owned)
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "Model \"{model}\" not found. Use --list-models to see available models."
                ));
            }
            found
        }
        (None, None) => Vec::new(),
    };
    let mut values: Vec<(String, String)> = Vec::new();
    for provider in &providers {
        let oauth = matches!(stored.credential(provider), Some(Credential::Oauth { .. }));
        let value = match kind {
            Kind::ApiKey if oauth => None,
            Kind::BearerToken if !oauth => None,
            Kind::BearerToken => {
                let min_validity = options
                    .min_expiry_ms
                    .unwrap_or(DEFAULT_BEARER_MIN_EXPIRY_MS);
                bearer_for_print(agent_dir, provider, min_validity)?
            }
            _ => registry.provider_key(provider),
        };
        if let Some(value) = value {
            values.push((provider.clone(), value));
        }
    }
    match values.len() {
        1 => Ok(values.remove(0).1),
        0 => {
            let first = providers.first().cloned().unwrap_or_default();
            let oauth = matches!(stored.credential(&first), Some(Credential::Oauth { .. }));
            let by_provider = options.provider.is_some();
            Err(match kind {
                Kind::ApiKey if by_provider && oauth => {
                    format!("Provider \"{first}\" is configured with OAuth, not an API key")
                }
                Kind::BearerToken if by_provider && !oauth => {
                    format!("Provider \"{first}\" is not configured with an OAuth bearer token")
                }
                Kind::BearerToken => "No usable OAuth bearer token is configured".into(),
                _ => "No usable API key is configured".into(),
            })
        }
        _ => Err(format!(
            "Multiple configured providers matched ({}). Specify --provider.",
            values
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn run_logout(args: &[String], agent_dir: &Path) -> i32 {
    let [provider] = args else {
        eprintln!("Usage: pi auth logout <provider>");
        return 1;
    };
    if provider.starts_with('-') {
        eprintln!("Usage: pi auth logout <provider>");
        return 1;
    }
    let registry = ModelRegistry::load(agent_dir);
    let stored = registry.auth_storage().credential(provider).cloned();
    if !registry.has_provider(provider) && stored.is_none() {
        eprintln!("Unknown provider \"{provider}\".");
        let ids = registry.auth_storage().providers().join(", ");
        eprintln!(
            "Stored credentials: {}",
            if ids.is_empty() { "none" } else { &ids }
        );
        return 1;
    }
    let name = provider_display_name(provider);
    let Some(stored) = stored else {
        println!(
            "No stored credentials for {name}. Environment variables and models.json config are unchanged."
        );
        return 0;
    };
    let removed = update_auth_file(&paths::auth_path(agent_dir), |map| {
        map.shift_remove(provider.as_str());
    });
    if let Err(e) = removed {
        eprintln!("Logout failed: {e}");
        return 1;
    }
    match stored {
        Credential::Oauth { .. } => println!("Logged out of {name}."),
        Credential::ApiKey { .. } => println!(
            "Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        ),
    }
    0
}

/// The provider names pi 1.5 shows (its built-in providers'); others by their id.
pub(crate) fn provider_display_name(provider: &str) -> String {
    match provider {
        "amazon-bedrock" => "Amazon Bedrock",
        "ant-ling" => "Ant Ling",
        "anthropic" => "Anthropic",
        "azure" => "Azure",
        "baseten" => "Baseten",
        "cerebras" => "Cerebras",
        "cloudflare-ai-gateway" => "Cloudflare AI Gateway",
        "cloudflare-workers-ai" => "Cloudflare Workers AI",
        "deepseek" => "DeepSeek",
        "fireworks" => "Fireworks",
        "github-copilot" => "GitHub Copilot",
        "google" => "Google",
        "google-vertex" => "Google Vertex AI",
        "google-gemini-cli" => "Google Gemini CLI",
        "google-antigravity" => "Google Antigravity",
        "groq" => "Groq",
        "huggingface" => "Hugging Face",
        "kimi-coding" => "Kimi For Coding",
        "meta" => "Meta",
        "minimax" => "MiniMax",
        "minimax-cn" => "MiniMax CN",
        "mistral" => "Mistral",
        "moonshotai" => "Moonshot AI",
        "moonshotai-cn" => "Moonshot AI CN",
        "nvidia" => "NVIDIA",
        "openai" => "OpenAI",
        "openai-codex" => "OpenAI Codex",
        "opencode" => "OpenCode Zen",
        "opencode-go" => "OpenCode Go",
        "openrouter" => "OpenRouter",
        "qwen-token-plan" => "Qwen Token Plan Team",
        "qwen-token-plan-cn" => "Qwen Token Plan Team CN",
        "qwen-token-plan-individual" => "Qwen Token Plan Individual",
        "qwen-token-plan-individual-cn" => "Qwen Token Plan Individual CN",
        "together" => "Together",
        "typesafe" => "TypeSafe",
        "vercel-ai-gateway" => "Vercel AI Gateway",
        "xai" => "xAI",
        "xiaomi" => "Xiaomi",
        "xiaomi-token-plan-ams" => "Xiaomi Token Plan AMS",
        "xiaomi-token-plan-cn" => "Xiaomi Token Plan CN",
        "xiaomi-token-plan-sgp" => "Xiaomi Token Plan SGP",
        "zai" => "Z.AI",
        "zai-coding-cn" => "Z.AI Coding CN",
        other => other,
    }
    .to_owned()
}

fn run_login(args: &[String], agent_dir: &Path) -> i32 {
    let mut provider: Option<&String> = None;
    let (mut api_key, mut browser) = (false, true);
    for arg in args {
        match arg.as_str() {
            "--api-key" => api_key = true,
            "--no-browser" => browser = false,
            other if other.starts_with('-') || provider.is_some() => {
                eprintln!("Usage: {LOGIN_USAGE}");
                return 1;
            }
            _ => provider = Some(arg),
        }
    }
    let Some(provider) = provider else {
        eprintln!("Usage: {LOGIN_USAGE}");
        return 1;
    };
    if api_key && !browser {
        eprintln!("--no-browser only applies to account sign-in; omit it with --api-key.");
        return 1;
    }
    let registry = ModelRegistry::load(agent_dir);
    let login = OAuthProvider::from_id(provider).filter(|p| p.is_offered());
    if login.is_none() && !registry.has_provider(provider) {
        // Built-in providers, those of models.json and extensions, and the sign-ins.
        let mut ids: Vec<String> = pi_ai::get_providers()
            .into_iter()
            .chain(registry.all().iter().map(|m| m.provider.clone()))
            .chain(OAuthProvider::ALL.iter().map(|p| p.id().to_owned()))
            .collect();
        ids.sort();
        ids.dedup();
        eprintln!("Unknown provider \"{provider}\".");
        eprintln!("Providers: {}", ids.join(", "));
        return 1;
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("\"{LOGIN_USAGE}\" requires an interactive terminal");
        return 1;
    }
    let name = provider_display_name(provider);
    let path = paths::auth_path(agent_dir);
    match login {
        Some(login) if !api_key => {
            return crate::modes::auth_login::run_oauth_login(login, browser, &name, &path);
        }
        Some(login) if !login.has_api_key_login() => {
            eprintln!("{name} has no API key login. Omit --api-key to sign in.");
            return 1;
        }
        _ => {}
    }
    let Some(key) = read_secret("Enter API key: ") else {
        eprintln!("Error: no API key entered");
        return 1;
    };
    let saved = update_auth_file(&path, |map| {
        map.insert(provider.clone(), json!({"type": "api_key", "key": key}));
    });
    match saved {
        Ok(()) => {
            println!(
                "Saved API key for {name}. Credentials saved to {}",
                path.display()
            );
            0
        }
        Err(e) => {
            eprintln!("Error: could not save the key: {e}");
            1
        }
    }
}

/// Reads a line from the terminal without echo; `None` when empty or unreadable.
fn read_secret(prompt: &str) -> Option<String> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let original = tcgetattr(&stdin).ok();
    if let Some(original) = &original {
        let mut quiet = original.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(&stdin, SetArg::TCSANOW, &quiet);
    }
    print!("{prompt}");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let read = stdin.read_line(&mut line);
    if let Some(original) = &original {
        let _ = tcsetattr(&stdin, SetArg::TCSANOW, original);
    }
    println!();
    read.ok()?;
    let key = line.trim().to_owned();
    (!key.is_empty()).then_some(key)
}
