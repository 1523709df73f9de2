//! `mcp.json` as pi 1.5 reads it: `<agentDir>/mcp.json` and, in a trusted project,
//! `.pi/mcp.json`, both `{"mcpServers": {name: entry}}`. A project entry replaces the global
//! one of the same name; a project entry without `command`, `url` or `type` only overrides
//! `enabled`, `exposure` and `toolExposure`. Entries are checked field by field with pi's
//! messages; a bad entry is reported and skipped, the others still load.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::exposure::Exposure;
use crate::naming::namespace;

/// Keys a project override may set.
const OVERRIDE_KEYS: [&str; 3] = ["enabled", "exposure", "toolExposure"];
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Which file a server comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::Project => "project",
        }
    }
}

/// How pi reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        oauth: Option<Map<String, Value>>,
        /// `auth.provider`: send that `/login` provider's token (global file only).
        auth_provider: Option<String>,
    },
}

/// One checked server entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub transport: Transport,
    pub enabled: bool,
    pub description: Option<String>,
    /// Per-request timeout in seconds (default 60).
    pub timeout_secs: Option<f64>,
    pub exposure: Option<Exposure>,
    /// Tool name or `*` pattern to exposure, in file order.
    pub tool_exposure: Vec<(String, Exposure)>,
    /// The entry as written, with exposure aliases resolved (`pi mcp add` writes this).
    pub raw: Map<String, Value>,
}

impl ServerConfig {
    /// The server's exposure (`codemode` when unset).
    pub fn exposure(&self) -> Exposure {
        self.exposure.unwrap_or(Exposure::Codemode)
    }

    /// A tool's exposure: an exact `toolExposure` entry, else the first matching pattern,
    /// else the server's.
    pub fn tool_exposure(&self, tool: &str) -> Exposure {
        if let Some((_, e)) = self.tool_exposure.iter().find(|(name, _)| name == tool) {
            return *e;
        }
        self.tool_exposure
            .iter()
            .find(|(pattern, _)| pattern.contains('*') && crate::naming::matches(pattern, tool))
            .map_or_else(|| self.exposure(), |(_, e)| *e)
    }

    /// The command line or URL, as `pi mcp list` shows it.
    pub fn describe_transport(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => url.clone(),
        }
    }

    /// The server URL when it signs in with OAuth: an HTTP server without an
    /// `Authorization` header or `auth`.
    pub fn oauth_url(&self) -> Option<&str> {
        match &self.transport {
            Transport::Http {
                url,
                headers,
                auth_provider: None,
                ..
            } if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
            {
                Some(url)
            }
            _ => None,
        }
    }
}

/// A server and where it was configured.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub config: ServerConfig,
    pub source: PathBuf,
    pub scope: Scope,
    /// The project file that overrides some of this global entry's settings.
    pub override_path: Option<PathBuf>,
}

/// Everything the files configure.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    pub servers: Vec<ServerEntry>,
    pub auto_enable_codemode: Option<bool>,
    /// One line per problem: `<file>: <what>`.
    pub errors: Vec<String>,
    /// The project file, when the project is trusted.
    pub project_config: Option<PathBuf>,
}

/// The project's `mcp.json`.
pub fn project_config_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("mcp.json")
}

/// The global `mcp.json`.
pub fn global_config_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("mcp.json")
}

/// Loads the global file and, when `project_trusted`, the project's.
pub fn load(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> McpConfig {
    let mut config = McpConfig::default();
    read_file(&global_config_path(agent_dir), Scope::Global, &mut config);
    if project_trusted {
        let project = project_config_path(cwd);
        read_file(&project, Scope::Project, &mut config);
        config.project_config = Some(project);
    }
    config
}

/// Whether an entry only overrides settings of a global one.
pub fn is_override(entry: &Map<String, Value>) -> bool {
    !entry.contains_key("command") && !entry.contains_key("url") && !entry.contains_key("type")
}

fn read_file(path: &Path, scope: Scope, state: &mut McpConfig) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let shown = path.display();
    let parsed: Value = match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(v) => v,
        Err(e) => {
            state.errors.push(format!("{shown}: {e}"));
            return;
        }
    };
    let servers = match parsed.get("mcpServers") {
        None => None,
        Some(Value::Object(map)) => Some(map),
        Some(_) => {
            state.errors.push(format!(
                "{shown}: expected an object with an \"mcpServers\" object"
            ));
            return;
        }
    };
    let Value::Object(top) = &parsed else {
        state.errors.push(format!(
            "{shown}: expected an object with an \"mcpServers\" object"
        ));
        return;
    };
    match top.get("autoEnableCodemode") {
        Some(Value::Bool(b)) => state.auto_enable_codemode = Some(*b),
        Some(_) => state
            .errors
            .push(format!("{shown}: autoEnableCodemode must be a boolean")),
        None => {}
    }
    for (name, value) in servers.into_iter().flatten() {
        if scope == Scope::Project
            && let Value::Object(entry) = value
            && is_override(entry)
        {
            apply_override(path, name, entry, state);
            continue;
        }
        let config = match validate(name, value) {
            Ok(c) => c,
            Err(e) => {
                state.errors.push(format!("{shown}: {e}"));
                continue;
            }
        };
        if let Some(clash) = state
            .servers
            .iter()
            .find(|s| s.name != *name && namespace(&s.name) == namespace(name))
        {
            state.errors.push(format!(
                "{shown}: server \"{name}\" conflicts with \"{}\"",
                clash.name
            ));
            continue;
        }
        if scope == Scope::Project
            && matches!(
                config.transport,
                Transport::Http {
                    auth_provider: Some(_),
                    ..
                }
            )
        {
            state.errors.push(format!(
                "{shown}: server \"{name}\": auth is only allowed in the global mcp.json"
            ));
            continue;
        }
        let entry = ServerEntry {
            name: name.clone(),
            config,
            source: path.to_path_buf(),
            scope,
            override_path: None,
        };
        match state.servers.iter_mut().find(|s| s.name == *name) {
            Some(existing) => *existing = entry,
            None => state.servers.push(entry),
        }
    }
}

fn apply_override(path: &Path, name: &str, entry: &Map<String, Value>, state: &mut McpConfig) {
    let shown = path.display();
    let Some(base) = state.servers.iter_mut().find(|s| s.name == name) else {
        state.errors.push(format!(
            "{shown}: server \"{name}\" needs \"command\" or \"url\", or a global server to override"
        ));
        return;
    };
    if entry.keys().any(|k| !OVERRIDE_KEYS.contains(&k.as_str())) {
        state.errors.push(format!(
            "{shown}: server \"{name}\": an override can only set {}",
            OVERRIDE_KEYS.join(", ")
        ));
        return;
    }
    let mut merged = base.config.raw.clone();
    for (k, v) in entry {
        merged.insert(k.clone(), v.clone());
    }
    match validate(name, &Value::Object(merged)) {
        Ok(config) => {
            base.config = config;
            base.override_path = Some(path.to_path_buf());
        }
        Err(e) => state.errors.push(format!("{shown}: {e}")),
    }
}

/// Checks one `mcpServers` entry as pi does; the error is pi's message.
pub fn validate(name: &str, raw: &Value) -> Result<ServerConfig, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let Value::Object(entry) = raw else {
        return Err(format!("server \"{name}\" must be an object"));
    };
    let entry = resolve_aliases(entry);
    let fail = |e: String| format!("server \"{name}\": {e}");
    base_fields(&entry).map_err(fail)?;
    let kind = entry.get("type").and_then(Value::as_str);
    let http_type = matches!(kind, None | Some("http" | "streamable-http"));
    let transport = if kind == Some("sse") {
        return Err(format!(
            "server \"{name}\": legacy SSE transport is not supported; use the streamable HTTP URL"
        ));
    } else if let (Some(Value::String(url)), true) = (entry.get("url"), http_type) {
        http_fields(&entry, url).map_err(fail)?
    } else if let (Some(Value::String(command)), true) =
        (entry.get("command"), matches!(kind, None | Some("stdio")))
    {
        stdio_fields(&entry, command).map_err(fail)?
    } else {
        return Err(format!(
            "server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        ));
    };
    let exposures = r#""codemode", "deferred", "direct", "hidden""#;
    let exposure = match entry.get("exposure") {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(Exposure::parse)
                .ok_or_else(|| fail(format!("exposure must be one of {exposures}")))?,
        ),
    };
    let mut tool_exposure = Vec::new();
    match entry.get("toolExposure") {
        None => {}
        Some(Value::Object(map)) => {
            for (tool, v) in map {
                let e = v.as_str().and_then(Exposure::parse).ok_or_else(|| {
                    fail(format!(
                        "toolExposure \"{tool}\" must be one of {exposures}"
                    ))
                })?;
                tool_exposure.push((tool.clone(), e));
            }
        }
        Some(_) => return Err(fail("toolExposure must map tool names to exposures".into())),
    }
    if let Transport::Http {
        url,
        auth_provider: Some(_),
        ..
    } = &transport
    {
        let parsed = url::Url::parse(url).ok();
        let loopback = parsed
            .as_ref()
            .and_then(|u| u.host_str())
            .is_some_and(|h| LOOPBACK_HOSTS.contains(&h));
        if parsed.as_ref().map(url::Url::scheme) != Some("https") && !loopback {
            return Err(fail(
                "auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]".into(),
            ));
        }
    }
    Ok(ServerConfig {
        transport,
        enabled: entry
            .get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        description: entry
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        timeout_secs: entry.get("timeout").and_then(Value::as_f64),
        exposure,
        tool_exposure,
        raw: entry,
    })
}

/// `codemode-deferred` is an older name of `codemode`.
fn resolve_aliases(entry: &Map<String, Value>) -> Map<String, Value> {
    let mut out = entry.clone();
    let alias = |v: &mut Value| {
        if v.as_str() == Some("codemode-deferred") {
            *v = Value::from("codemode");
        }
    };
    if let Some(v) = out.get_mut("exposure") {
        alias(v);
    }
    if let Some(Value::Object(map)) = out.get_mut("toolExposure") {
        map.values_mut().for_each(alias);
    }
    out
}

fn base_fields(entry: &Map<String, Value>) -> Result<(), String> {
    if entry.get("enabled").is_some_and(|v| !v.is_boolean()) {
        return Err("enabled must be a boolean".into());
    }
    if entry.get("description").is_some_and(|v| !v.is_string()) {
        return Err("description must be a string".into());
    }
    if entry
        .get("timeout")
        .is_some_and(|v| v.as_f64().is_none_or(|t| t <= 0.0 || t.is_nan()))
    {
        return Err("timeout must be a positive number of seconds".into());
    }
    Ok(())
}

fn string_pairs(value: Option<&Value>, what: &str) -> Result<Vec<(String, String)>, String> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(what.to_owned()),
            })
            .collect(),
        Some(_) => Err(what.to_owned()),
    }
}

fn http_fields(entry: &Map<String, Value>, url: &str) -> Result<Transport, String> {
    let scheme_ok = url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    if !scheme_ok {
        return Err("url must be an http or https URL".into());
    }
    let headers = string_pairs(entry.get("headers"), "headers must map names to strings")?;
    let oauth = match entry.get("oauth") {
        None => None,
        Some(Value::Object(map)) => {
            check_oauth(map)?;
            Some(map.clone())
        }
        Some(_) => return Err("oauth must be an object".into()),
    };
    let auth_provider = match entry.get("auth") {
        None => None,
        Some(auth) => Some(
            auth.get("provider")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .ok_or("auth.provider must be a provider name")?
                .to_owned(),
        ),
    };
    Ok(Transport::Http {
        url: url.to_owned(),
        headers,
        oauth,
        auth_provider,
    })
}

fn is_loopback_redirect(value: &str) -> bool {
    url::Url::parse(value).is_ok_and(|u| {
        u.scheme() == "http"
            && u.host_str().is_some_and(|h| LOOPBACK_HOSTS.contains(&h))
            && u.query().is_none()
            && u.fragment().is_none()
    })
}

fn check_oauth(oauth: &Map<String, Value>) -> Result<(), String> {
    let string = |key: &str| oauth.get(key).is_some_and(|v| !v.is_string());
    if string("clientId") {
        return Err("oauth.clientId must be a string".into());
    }
    if string("clientSecret") {
        return Err("oauth.clientSecret must be a string".into());
    }
    let port = oauth.get("callbackPort");
    if let Some(port) = port
        && port.as_u64().is_none_or(|p| !(1..=65535).contains(&p))
    {
        return Err("oauth.callbackPort must be a port number".into());
    }
    if let Some(callback) = oauth.get("callbackUrl") {
        let Some(callback) = callback.as_str().filter(|c| is_loopback_redirect(c)) else {
            return Err("oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment".into());
        };
        let url_port = url::Url::parse(callback).ok().and_then(|u| u.port());
        if let (Some(url_port), Some(port)) = (url_port, port.and_then(Value::as_u64))
            && u64::from(url_port) != port
        {
            return Err("oauth.callbackUrl and oauth.callbackPort name different ports".into());
        }
    }
    if string("scope") {
        return Err("oauth.scope must be a string".into());
    }
    if oauth
        .get("clientName")
        .is_some_and(|v| v.as_str().is_none_or(|s| s.trim().is_empty()))
    {
        return Err("oauth.clientName must be a non-empty string".into());
    }
    match oauth.get("clientRegistration").map(|v| v.as_str()) {
        None | Some(Some("auto" | "dcr")) => {}
        Some(Some("cimd")) => {
            if oauth.contains_key("clientId") || oauth.contains_key("clientName") {
                return Err("oauth.clientRegistration \"cimd\" cannot be combined with oauth.clientId or oauth.clientName".into());
            }
            let document_callback = match oauth.get("callbackUrl").and_then(Value::as_str) {
                None => true,
                Some(c) => url::Url::parse(c)
                    .is_ok_and(|u| u.host_str() != Some("[::1]") && u.path() == "/callback"),
            };
            if !document_callback {
                return Err("oauth.clientRegistration \"cimd\" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback".into());
            }
        }
        Some(_) => {
            return Err("oauth.clientRegistration must be \"auto\", \"dcr\", or \"cimd\"".into());
        }
    }
    if let Some(metadata) = oauth.get("authServerMetadataUrl") {
        let ok = metadata
            .as_str()
            .and_then(|m| url::Url::parse(m).ok())
            .is_some_and(|u| {
                u.scheme() == "https"
                    || (u.scheme() == "http"
                        && u.host_str().is_some_and(|h| LOOPBACK_HOSTS.contains(&h)))
            });
        if !ok {
            return Err("oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]".into());
        }
    }
    Ok(())
}

fn stdio_fields(entry: &Map<String, Value>, command: &str) -> Result<Transport, String> {
    let args = match entry.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or("args must be an array of strings")?,
        Some(_) => return Err("args must be an array of strings".into()),
    };
    let env = string_pairs(entry.get("env"), "env must map names to strings")?;
    let cwd = match entry.get("cwd") {
        None => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err("cwd must be a string".into()),
    };
    Ok(Transport::Stdio {
        command: command.to_owned(),
        args,
        env,
        cwd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(name: &str, entry: Value) -> String {
        validate(name, &entry).unwrap_err()
    }

    #[test]
    fn entries_are_checked_with_pis_messages() {
        assert_eq!(
            error("a", json!({"url": "ftp://x"})),
            "server \"a\": url must be an http or https URL"
        );
        assert_eq!(
            error("a", json!({"command": "x", "args": [1]})),
            "server \"a\": args must be an array of strings"
        );
        assert_eq!(
            error("a", json!({"command": "x", "exposure": "loud"})),
            "server \"a\": exposure must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\""
        );
        assert_eq!(
            error(
                "a",
                json!({"url": "http://x", "oauth": {"callbackPort": 70000}})
            ),
            "server \"a\": oauth.callbackPort must be a port number"
        );
        assert_eq!(
            error(
                "a",
                json!({"url": "http://x.test/mcp", "auth": {"provider": "anthropic"}})
            ),
            "server \"a\": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
        );
        assert_eq!(
            error("a", json!({"type": "stdio", "url": "http://x"})),
            "server \"a\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
        );
        let ok = validate("a", &json!({"command": "x", "exposure": "codemode-deferred", "toolExposure": {"get_*": "direct", "x": "hidden"}})).unwrap();
        assert_eq!(ok.exposure(), Exposure::Codemode);
        assert_eq!(ok.raw["exposure"], "codemode");
        assert_eq!(ok.tool_exposure("get_sum"), Exposure::Direct);
        assert_eq!(ok.tool_exposure("x"), Exposure::Hidden);
        assert_eq!(ok.tool_exposure("y"), Exposure::Codemode);
    }

    #[test]
    fn project_entries_replace_or_override_global_ones() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let cwd = dir.path().join("proj");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            agent.join("mcp.json"),
            r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "v"}}, "b": {"url": "https://b.test/mcp"}, "c-d": {"command": "y"}}}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.join(".pi/mcp.json"),
            r#"{"mcpServers": {"a": {"enabled": false}, "b": {"command": "local"}, "c_d": {"command": "z"}, "e": {"enabled": false}}}"#,
        )
        .unwrap();
        let untrusted = load(&agent, &cwd, false);
        assert_eq!(untrusted.servers.len(), 3);
        assert!(untrusted.servers.iter().all(|s| s.scope == Scope::Global));
        let trusted = load(&agent, &cwd, true);
        let a = &trusted.servers[0];
        assert!(!a.config.enabled);
        assert_eq!(a.override_path, Some(project_config_path(&cwd)));
        assert!(matches!(&a.config.transport, Transport::Stdio { env, .. } if env.len() == 1));
        assert_eq!(trusted.servers[1].scope, Scope::Project);
        assert_eq!(trusted.servers[1].config.describe_transport(), "local");
        let shown = project_config_path(&cwd).display().to_string();
        assert_eq!(
            trusted.errors,
            [
                format!("{shown}: server \"c_d\" conflicts with \"c-d\""),
                format!(
                    "{shown}: server \"e\" needs \"command\" or \"url\", or a global server to override"
                ),
            ]
        );
    }
}
