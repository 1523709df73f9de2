//! `pi mcp`: add, remove and check MCP servers without starting a session, with pi 1.5.2's
//! texts, options and exit codes.

use std::collections::BTreeMap;
use std::path::Path;

use pi_mcp::config::{self, McpConfig, Scope, ServerEntry};
use pi_mcp::connection::State;
use serde_json::{Map, Value, json};

use super::runtime::McpRuntime;
use crate::config::paths;
use crate::trust::TrustStore;

const HELP: &str = "Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send \"Authorization: Bearer ${NAME}\"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default), cimd, or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)";

const HELP_HINT: &str = "Use \"pi mcp --help\" for usage.";

/// How an option takes its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
    List,
}

#[derive(Default)]
struct Parsed {
    positional: Vec<String>,
    values: BTreeMap<String, String>,
    flags: Vec<String>,
    lists: BTreeMap<String, Vec<String>>,
}

impl Parsed {
    fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
            || self.values.contains_key(name)
            || self.lists.contains_key(name)
    }
}

/// `--name value` options until `--` or `max_positionals` positional arguments; the rest is
/// positional, so a command's own options pass through.
fn parse(
    args: &[String],
    known: &[(&str, Kind)],
    max_positionals: usize,
) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut index = 0;
    while index < args.len() {
        let typed = &args[index];
        let arg = if typed == "-l" {
            "--local"
        } else {
            typed.as_str()
        };
        if arg == "--" || parsed.positional.len() >= max_positionals {
            let from = if arg == "--" { index + 1 } else { index };
            parsed.positional.extend(args[from..].iter().cloned());
            break;
        }
        let Some(name) = arg.strip_prefix("--") else {
            parsed.positional.push(arg.to_owned());
            index += 1;
            continue;
        };
        let Some((_, kind)) = known.iter().find(|(k, _)| *k == name) else {
            return Err(format!("Unknown option {typed}.\n{HELP_HINT}"));
        };
        match kind {
            Kind::Flag => parsed.flags.push(name.to_owned()),
            Kind::Value | Kind::List => {
                index += 1;
                let Some(value) = args.get(index) else {
                    return Err(format!("{arg} needs a value."));
                };
                if *kind == Kind::List {
                    parsed
                        .lists
                        .entry(name.to_owned())
                        .or_default()
                        .push(value.clone());
                } else {
                    parsed.values.insert(name.to_owned(), value.clone());
                }
            }
        }
        index += 1;
    }
    Ok(parsed)
}

/// Handles `pi mcp …`; `None` when the arguments are not an mcp command.
pub fn handle(args: &[String]) -> Option<i32> {
    if args.first().map(String::as_str) != Some("mcp") {
        return None;
    }
    let rest = &args[1..];
    let command = rest.first().map(String::as_str);
    if command.is_none()
        || command == Some("help")
        || rest.iter().any(|a| a == "--help" || a == "-h")
    {
        println!("{HELP}");
        return Some(0);
    }
    let agent_dir = paths::agent_dir();
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let args = &rest[1..];
    let result = match command.unwrap_or_default() {
        "add" => add(args, &agent_dir, &cwd),
        "remove" => remove(args, &agent_dir, &cwd),
        "list" => list(args, &agent_dir, &cwd),
        "login" | "logout" => sign_in_or_out(command.unwrap_or_default(), args, &agent_dir, &cwd),
        other => Err(format!("Unknown mcp command \"{other}\".\n{HELP_HINT}")),
    };
    Some(match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            1
        }
    })
}

fn trusted(agent_dir: &Path, cwd: &Path) -> bool {
    TrustStore::new(agent_dir).get(cwd).ok().flatten() == Some(true)
}

fn pairs(option: &str, values: Option<&Vec<String>>) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for pair in values.into_iter().flatten() {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                out.insert(key.to_owned(), json!(value));
            }
            _ => return Err(format!("--{option} expects KEY=VALUE, got \"{pair}\".")),
        }
    }
    Ok(out)
}

fn add(args: &[String], agent_dir: &Path, cwd: &Path) -> Result<i32, String> {
    use Kind::{Flag, List, Value as V};
    let usage = format!(
        "Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}"
    );
    let parsed = parse(
        args,
        &[
            ("local", Flag),
            ("url", V),
            ("env", List),
            ("cwd", V),
            ("header", List),
            ("bearer-token-env-var", V),
            ("oauth-client-id", V),
            ("oauth-client-secret", V),
            ("oauth-callback-port", V),
            ("oauth-client-name", V),
            ("oauth-client-registration", V),
            ("exposure", V),
            ("description", V),
        ],
        2,
    )?;
    let Some((name, command)) = parsed.positional.split_first() else {
        return Err(usage);
    };
    let url = parsed.values.get("url");
    if url.is_none() == command.is_empty() {
        return Err(usage);
    }
    const HTTP_ONLY: [&str; 7] = [
        "header",
        "bearer-token-env-var",
        "oauth-client-id",
        "oauth-client-secret",
        "oauth-callback-port",
        "oauth-client-name",
        "oauth-client-registration",
    ];
    const STDIO_ONLY: [&str; 2] = ["env", "cwd"];
    let misplaced = if url.is_none() {
        HTTP_ONLY.iter().find(|o| parsed.has(o))
    } else {
        STDIO_ONLY.iter().find(|o| parsed.has(o))
    };
    if let Some(option) = misplaced {
        let applies = if url.is_none() {
            "HTTP servers (--url)"
        } else {
            "stdio servers"
        };
        return Err(format!("--{option} only applies to {applies}."));
    }
    let value = |key: &str| parsed.values.get(key).cloned();
    let mut entry = Map::new();
    if let Some(url) = url {
        let mut headers = pairs("header", parsed.lists.get("header"))?;
        if let Some(name) = value("bearer-token-env-var") {
            headers.insert("Authorization".into(), json!(format!("Bearer ${{{name}}}")));
        }
        let mut oauth = Map::new();
        if let Some(id) = value("oauth-client-id") {
            oauth.insert("clientId".into(), json!(id));
        }
        if let Some(secret) = value("oauth-client-secret") {
            oauth.insert("clientSecret".into(), json!(secret));
        }
        if let Some(port) = value("oauth-callback-port") {
            let number: Value = port
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::Null, Value::Number);
            let number = match number.as_f64() {
                Some(n) if n.fract() == 0.0 && n >= 0.0 => json!(n as u64),
                _ => number,
            };
            oauth.insert("callbackPort".into(), number);
        }
        if let Some(name) = value("oauth-client-name") {
            oauth.insert("clientName".into(), json!(name));
        }
        if let Some(mode) = value("oauth-client-registration") {
            oauth.insert("clientRegistration".into(), json!(mode));
        }
        entry.insert("url".into(), json!(url));
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
        if !oauth.is_empty() {
            entry.insert("oauth".into(), Value::Object(oauth));
        }
    } else {
        let env = pairs("env", parsed.lists.get("env"))?;
        let (executable, command_args) = command.split_first().ok_or(usage)?;
        entry.insert("command".into(), json!(executable));
        if !command_args.is_empty() {
            entry.insert("args".into(), json!(command_args));
        }
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env));
        }
        if let Some(dir) = value("cwd") {
            entry.insert("cwd".into(), json!(dir));
        }
    }
    if let Some(exposure) = value("exposure") {
        entry.insert("exposure".into(), json!(exposure));
    }
    if let Some(description) = value("description") {
        entry.insert("description".into(), json!(description));
    }
    let validated = config::validate(name, &Value::Object(entry))?;
    let project = parsed.has("local");
    let path = if project {
        config::project_config_path(cwd)
    } else {
        config::global_config_path(agent_dir)
    };
    let scope = if project { "project" } else { "global" };
    let replaced = pi_mcp::edit::add_server(&path, name, validated.raw.clone())
        .map_err(|e| format!("Could not update {}: {e}", path.display()))?;
    println!(
        "{} {scope} MCP server \"{name}\" in {}.",
        if replaced { "Replaced" } else { "Added" },
        path.display()
    );
    if project && !trusted(agent_dir, cwd) {
        println!(
            "The project is not trusted, so {} is ignored until you start pi in the project and trust it.",
            path.display()
        );
    }
    let sign_in = if validated.oauth_url().is_some() {
        format!(". If it requires sign-in: pi mcp login {name}")
    } else {
        String::new()
    };
    println!("Check it with: pi mcp list{sign_in}");
    Ok(0)
}

fn remove(args: &[String], agent_dir: &Path, cwd: &Path) -> Result<i32, String> {
    let parsed = parse(args, &[("local", Kind::Flag)], usize::MAX)?;
    let [name] = parsed.positional.as_slice() else {
        return Err(format!("Usage: pi mcp remove <server> [-l]\n{HELP_HINT}"));
    };
    let project = parsed.has("local");
    let (path, scope) = if project {
        (config::project_config_path(cwd), Scope::Project)
    } else {
        (config::global_config_path(agent_dir), Scope::Global)
    };
    let removed = pi_mcp::edit::remove_server(&path, name)
        .map_err(|e| format!("Could not update {}: {e}", path.display()))?;
    if removed {
        println!(
            "Removed {} MCP server \"{name}\" from {}.",
            scope.as_str(),
            path.display()
        );
        return Ok(0);
    }
    let all = config::load(agent_dir, cwd, true);
    let other = all
        .servers
        .iter()
        .find(|s| s.name == *name && s.scope != scope);
    let hint = other.map_or_else(String::new, |o| {
        let how = if o.scope == Scope::Project {
            "use --local"
        } else {
            "omit --local"
        };
        format!(" It is defined in {}; {how}.", o.source.display())
    });
    Err(format!(
        "No {} MCP server named \"{name}\" in {}.{hint}",
        scope.as_str(),
        path.display()
    ))
}

/// The note for an untrusted project's ignored file.
fn untrusted_note(agent_dir: &Path, cwd: &Path) -> Option<String> {
    let project = config::project_config_path(cwd);
    (!trusted(agent_dir, cwd) && project.exists()).then(|| {
        format!(
            "{} is ignored because the project is not trusted. Start pi in the project to trust it.",
            project.display()
        )
    })
}

fn list(args: &[String], agent_dir: &Path, cwd: &Path) -> Result<i32, String> {
    let parsed = parse(args, &[("json", Kind::Flag)], usize::MAX)?;
    if !parsed.positional.is_empty() {
        return Err(format!("Usage: pi mcp list [--json]\n{HELP_HINT}"));
    }
    let runtime = McpRuntime::load(agent_dir, cwd, trusted(agent_dir, cwd));
    let note = untrusted_note(agent_dir, cwd);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let reports = tokio.block_on(futures_util::future::join_all(
        runtime.connections().iter().map(|c| async move {
            if c.entry.config.enabled {
                let _ = c.connect().await;
            }
            let report = report(&c.entry, &c.status());
            c.close().await;
            report
        }),
    ));
    let failed = !runtime.config.errors.is_empty()
        || reports
            .iter()
            .any(|r| r["enabled"] == json!(true) && r["state"] != json!("connected"));
    if parsed.has("json") {
        let mut out = json!({"servers": reports, "errors": runtime.config.errors});
        if let Some(note) = &note {
            out["note"] = json!(note);
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(i32::from(failed));
    }
    print_list(&reports, &runtime.config, note.as_deref(), agent_dir);
    Ok(i32::from(failed))
}

/// One server of `pi mcp list --json`.
fn report(entry: &ServerEntry, status: &pi_mcp::connection::Status) -> Value {
    let config = &entry.config;
    let mut report = Map::new();
    report.insert("name".into(), json!(entry.name));
    report.insert("scope".into(), json!(entry.scope.as_str()));
    report.insert("source".into(), json!(entry.source.display().to_string()));
    if let Some(path) = &entry.override_path {
        report.insert("override".into(), json!(path.display().to_string()));
    }
    report.insert("enabled".into(), json!(config.enabled));
    report.insert("exposure".into(), json!(config.exposure().as_str()));
    report.insert("transport".into(), json!(config.describe_transport()));
    if let pi_mcp::config::Transport::Http {
        auth_provider: Some(provider),
        ..
    } = &config.transport
    {
        report.insert("authProvider".into(), json!(provider));
    }
    let state = if config.enabled {
        status.state
    } else {
        State::Disabled
    };
    report.insert("state".into(), json!(state.as_str()));
    let tools: Vec<&str> = if config.enabled {
        status.tools.iter().map(|t| t.name.as_ref()).collect()
    } else {
        Vec::new()
    };
    report.insert("tools".into(), json!(tools));
    let overrides: Map<String, Value> = tools
        .iter()
        .filter_map(|t| {
            let e = config.tool_exposure(t);
            (e != config.exposure()).then(|| ((*t).to_owned(), json!(e.as_str())))
        })
        .collect();
    if !overrides.is_empty() {
        report.insert("toolExposure".into(), Value::Object(overrides));
    }
    if config.enabled && status.has_resources {
        report.insert("resources".into(), json!(true));
    }
    if config.enabled
        && state != State::Connected
        && let Some(error) = &status.error
    {
        report.insert("error".into(), json!(error));
    }
    Value::Object(report)
}

fn print_list(reports: &[Value], config: &McpConfig, note: Option<&str>, agent_dir: &Path) {
    if reports.is_empty() && config.errors.is_empty() {
        println!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            config::global_config_path(agent_dir).display()
        );
    }
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    for report in reports {
        let tools: Vec<String> = report["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let state = match text(report, "state").as_str() {
            "connected" => format!(
                "connected, {} tool{}",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            ),
            "needs-auth" => "needs sign-in".into(),
            other => other.to_owned(),
        };
        println!(
            "{}: {state} ({}, {})",
            text(report, "name"),
            text(report, "exposure"),
            text(report, "scope")
        );
        println!("  {}", text(report, "transport"));
        if let Some(path) = report["override"].as_str() {
            println!("  project override: {path}");
        }
        if report["state"] == json!("needs-auth") {
            match report["authProvider"].as_str() {
                Some(provider) => println!("  sign in with: /login {provider} in pi"),
                None => println!("  sign in with: pi mcp login {}", text(report, "name")),
            }
        }
        if !tools.is_empty() {
            let shown: Vec<String> = tools
                .iter()
                .map(|t| match report["toolExposure"][t].as_str() {
                    Some(e) => format!("{t} [{e}]"),
                    None => t.clone(),
                })
                .collect();
            println!("  tools: {}", shown.join(", "));
        }
        if report["resources"] == json!(true) {
            println!("  offers resources");
        }
        if let Some(error) = report["error"].as_str() {
            println!("  {}", error.replace('\n', "\n  "));
        }
    }
    for error in &config.errors {
        println!("config error: {error}");
    }
    if let Some(note) = note {
        println!("{note}");
    }
}

fn sign_in_or_out(
    command: &str,
    args: &[String],
    agent_dir: &Path,
    cwd: &Path,
) -> Result<i32, String> {
    let known: &[(&str, Kind)] = if command == "login" {
        &[("local", Kind::Flag), ("timeout", Kind::Value)]
    } else {
        &[("local", Kind::Flag)]
    };
    let parsed = parse(args, known, usize::MAX)?;
    let [name] = parsed.positional.as_slice() else {
        return Err(format!(
            "Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}"
        ));
    };
    let loaded = config::load(agent_dir, cwd, trusted(agent_dir, cwd));
    let Some(entry) = loaded.servers.iter().find(|s| s.name == *name) else {
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        let suggestion = names
            .iter()
            .find(|n| edit_distance(n, name) <= 2)
            .map(|n| format!(" Did you mean \"{n}\"?"))
            .unwrap_or_default();
        let note = untrusted_note(agent_dir, cwd)
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        let configured = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        return Err(format!(
            "No MCP server named \"{name}\".{suggestion}{note} Configured: {configured}."
        ));
    };
    if parsed.has("local") && entry.scope != Scope::Project {
        return Err(format!(
            "MCP server \"{name}\" is defined in {}, not in the project; omit --local.",
            entry.source.display()
        ));
    }
    if let pi_mcp::config::Transport::Http {
        auth_provider: Some(provider),
        ..
    } = &entry.config.transport
    {
        return Err(format!(
            "MCP server \"{name}\" uses the credentials of provider \"{provider}\". Run \"pi auth {command} {provider}\"."
        ));
    }
    if entry.config.oauth_url().is_none() {
        return Err(format!(
            "MCP server \"{name}\" does not use OAuth. Only HTTP servers without an Authorization header do."
        ));
    }
    let url = entry.config.oauth_url().unwrap_or_default();
    if command == "logout" {
        let store = pi_mcp::oauth::AuthStore::in_agent_dir(agent_dir);
        let removed = store.remove(name, url).map_err(|e| {
            format!(
                "Could not update {}: {e}",
                agent_dir.join("mcp-auth.json").display()
            )
        })?;
        if removed {
            println!("Signed out of MCP server \"{name}\".");
        } else {
            println!("No stored credentials for MCP server \"{name}\".");
        }
        return Ok(0);
    }
    let timeout = match parsed.values.get("timeout") {
        None => super::login::DEFAULT_TIMEOUT.as_secs_f64(),
        Some(value) => value
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t > 0.0)
            .ok_or("--timeout must be a positive number of seconds.")?,
    };
    super::login::login(
        name,
        agent_dir,
        cwd,
        trusted(agent_dir, cwd),
        std::time::Duration::from_secs_f64(timeout.min(1e9)),
    )
}

/// Levenshtein distance, to suggest a configured name for a mistyped one.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            current.push(
                (previous[j + 1] + 1)
                    .min(current[j] + 1)
                    .min(previous[j] + cost),
            );
        }
        previous = current;
    }
    previous[b.len()]
}
