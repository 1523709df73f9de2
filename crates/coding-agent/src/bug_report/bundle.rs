//! What a bug report collects (pi 1.6's `collectBugReportMetadata` and
//! `collectBugReportDiagnostics`): the environment, the session's id and size, the model
//! and provider (without keys), extensions, redacted settings, and the failed assistant
//! turns and recorded crashes. Conversation content is never part of these two files.

use serde_json::{Map, Value, json};

use super::redact::{redact_json, redact_settings, redact_url};
use crate::extensions::LoadedExtension;
use crate::session::SessionManager;

const SCHEMA_VERSION: u64 = 1;

/// What `report.json` is made from.
pub struct MetadataInput<'a> {
    /// Set in tests; a new UUIDv7 otherwise.
    pub id: Option<String>,
    pub hint: Option<&'a str>,
    pub session_id: &'a str,
    pub cwd: &'a str,
    pub include_session: bool,
    pub include_summary: bool,
    pub message_count: usize,
    pub model: Option<&'a pi_ai::Model>,
    pub provider: Option<ProviderFacts>,
    pub thinking_level: &'a str,
    pub extensions: &'a [LoadedExtension],
    pub extension_errors: &'a [(String, String)],
    pub global_settings: &'a Map<String, Value>,
    pub project_settings: &'a Map<String, Value>,
}

/// What is told about the model's provider.
pub struct ProviderFacts {
    pub id: String,
    pub name: String,
    pub base_url: Option<String>,
    pub header_names: Vec<String>,
    pub auth_types: Vec<&'static str>,
    pub auth_status: Value,
    pub using_oauth: bool,
    pub registered_by_extension: bool,
}

/// Node's `process.platform` for this system.
fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// Node's `process.arch` for this machine.
fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    }
}

fn environment() -> Value {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .map_or(Value::Null, Value::String)
    };
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    // Node's os.release() and os.version() (uname's release and version).
    let kernel = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    let (os_release, os_version) = (kernel("osrelease"), kernel("version"));
    let version = crate::PI_VERSION;
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        // pi 1.6 sets its child variables (`PI_CODING_AGENT`) in its own environment; ours
        // gives them to children only, so they are named here as pi 1.6 would list them.
        .chain(
            crate::tools::bash_env::CHILD_ENV
                .iter()
                .map(|(name, _)| (*name).to_owned()),
        )
        .filter(|name| name.starts_with("PI_"))
        .collect();
    names.sort();
    names.dedup();
    json!({
        "version": version,
        "userAgent": format!("pi/{version} ({}; rust; {})", platform(), arch()),
        "runtime": "rust",
        "platform": platform(),
        "arch": arch(),
        "osRelease": os_release,
        "osVersion": os_version,
        "shell": std::env::var("SHELL").ok()
            .and_then(|s| s.rsplit(['/', '\\']).next().map(str::to_owned))
            .filter(|s| !s.is_empty())
            .map_or(Value::Null, Value::String),
        "terminal": {
            "term": env("TERM"),
            "program": env("TERM_PROGRAM"),
            "programVersion": env("TERM_PROGRAM_VERSION"),
            "colorterm": env("COLORTERM"),
            "tmux": set("TMUX"),
            "ssh": set("SSH_CONNECTION") || set("SSH_CLIENT") || set("SSH_TTY"),
            "ci": set("CI"),
        },
        // Names help diagnose configuration; values never leave the machine.
        "piEnvironmentVariables": names,
    })
}

fn describe_model(model: &pi_ai::Model) -> Value {
    let optional = |value: Option<Value>| {
        value
            .filter(|v| !v.is_null())
            .map_or(Value::Null, |v| redact_json(&v))
    };
    let mut header_names: Vec<&String> = model.headers.iter().flat_map(|h| h.keys()).collect();
    header_names.sort();
    json!({
        "provider": model.provider,
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "baseUrl": redact_url(&model.base_url),
        "reasoning": model.reasoning,
        "input": model.input,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "samplingParams": optional(model.extras.sampling_params.as_ref().map(|p| Value::Object(p.clone()))),
        "compat": optional(model.compat.as_ref().and_then(|c| serde_json::to_value(c).ok())),
        "thinkingLevelMap": model.thinking_level_map.as_ref()
            .and_then(|m| serde_json::to_value(m).ok())
            .unwrap_or(Value::Null),
        "headerNames": header_names,
    })
}

fn describe_provider(provider: &ProviderFacts) -> Value {
    json!({
        "id": provider.id,
        "name": provider.name,
        "baseUrl": provider.base_url.as_deref().map_or(Value::Null, |u| Value::String(redact_url(u))),
        "headerNames": provider.header_names,
        "authTypes": provider.auth_types,
        "authStatus": provider.auth_status,
        "usingOAuth": provider.using_oauth,
        "registeredByExtension": provider.registered_by_extension,
    })
}

fn describe_extension(extension: &LoadedExtension) -> Value {
    let info = &extension.source_info;
    json!({
        "path": extension.path,
        "source": redact_url(info["source"].as_str().unwrap_or_default()),
        "scope": info["scope"],
        "origin": info["origin"],
        "hidden": false,
    })
}

/// `report.json`.
pub fn collect_metadata(input: &MetadataInput<'_>) -> Value {
    let hint = input
        .hint
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map_or(Value::Null, |h| Value::String(h.to_owned()));
    let mut session = json!({
        "id": input.session_id,
        "included": input.include_session,
        "summaryIncluded": input.include_summary,
        "messageCount": input.message_count,
    });
    if input.include_session
        && let Value::Object(map) = &mut session
    {
        map.insert("cwd".into(), Value::String(input.cwd.to_owned()));
    }
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "id": input.id.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
        "createdAt": crate::session::time::iso_now(),
        "hint": hint,
        "environment": environment(),
        "session": session,
        "model": input.model.map_or(Value::Null, describe_model),
        "provider": input.provider.as_ref().map_or(Value::Null, describe_provider),
        "thinkingLevel": input.thinking_level,
        "extensions": input.extensions.iter().map(describe_extension).collect::<Vec<_>>(),
        "extensionErrors": input.extension_errors.iter()
            .map(|(path, error)| json!({"path": path, "error": error}))
            .collect::<Vec<_>>(),
        "settings": {
            "global": redact_settings(&Value::Object(input.global_settings.clone())),
            "project": redact_settings(&Value::Object(input.project_settings.clone())),
        },
    })
}

/// `diagnostics.json`: the failed or diagnosed assistant turns of the whole session, and
/// the recorded crashes (without their `notified` flag).
pub fn collect_diagnostics(session: &SessionManager, crashes: &[Value]) -> Value {
    let entries = session.entries();
    let mut assistant = Vec::new();
    let mut assistant_count = 0;
    for entry in entries {
        let Ok(line) = entry.to_json().map(Value::Object) else {
            continue;
        };
        let message = &line["message"];
        if line["type"] != "message" || message["role"] != "assistant" {
            continue;
        }
        assistant_count += 1;
        let diagnostics = match &message["diagnostics"] {
            Value::Array(d) => d.clone(),
            _ => Vec::new(),
        };
        let stop = message["stopReason"].as_str().unwrap_or_default();
        let error = message["errorMessage"].as_str().filter(|e| !e.is_empty());
        if diagnostics.is_empty() && stop != "error" && stop != "aborted" && error.is_none() {
            continue;
        }
        let mut item = json!({
            "entryId": line["id"],
            "timestamp": line["timestamp"],
            "provider": message["provider"],
            "model": message["model"],
            "api": message["api"],
            "stopReason": message["stopReason"],
        });
        if let Value::Object(map) = &mut item {
            for key in ["rawStopReason", "errorMessage"] {
                if let Some(value) = message.get(key) {
                    map.insert(key.into(), value.clone());
                }
            }
            map.insert("diagnostics".into(), Value::Array(diagnostics));
        }
        assistant.push(item);
    }
    let crashes: Vec<Value> = crashes
        .iter()
        .map(|record| {
            let mut record = record.clone();
            if let Value::Object(map) = &mut record {
                map.shift_remove("notified");
            }
            record
        })
        .collect();
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "sessionId": session.session_id(),
        "entryCount": entries.len(),
        "assistantMessageCount": assistant_count,
        "assistant": assistant,
        "crashes": crashes,
    })
}
