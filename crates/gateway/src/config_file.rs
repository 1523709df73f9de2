//! `<agentDir>/gateway.json`: the gateway's own settings — tool policy (the OpenClaw
//! `tools` / `agents` / `groups` shape), sandbox, principals and their scopes, auth
//! profiles per provider, runner tunables and the system prompt mode.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::pipeline::ToolPolicyConfig;
use crate::runner::{AuthProfile, AuthProfileStore, CooldownConfig, PromptMode, RunnerConfig};
use crate::sandbox::{SandboxConfig, SandboxError, locate_launcher};

/// The file name under the agent dir.
pub const FILE_NAME: &str = "gateway.json";

/// A `gateway.json` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid {path}: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: {source}")]
    Sandbox { path: PathBuf, source: SandboxError },
}

/// `sandbox`: confinement of `bash` and `exec` (Linux Landlock).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxFile {
    pub enabled: bool,
    /// Where commands may write; relative paths resolve against the session's cwd.
    /// Default: the session's cwd.
    pub allowed_paths: Option<Vec<PathBuf>>,
    /// Where commands may read; default: everywhere.
    pub read_paths: Vec<PathBuf>,
    /// Also allow writes to the system temp dir (heredocs and most tools need it).
    pub allow_temp: bool,
    /// Longest a command may run.
    pub timeout_seconds: Option<u64>,
    /// Whether commands may open TCP connections and listen (off needs Landlock ABI v4).
    pub network: bool,
    /// The `pi-sandbox` launcher; default: next to the gateway binary.
    pub launcher: Option<PathBuf>,
}

impl Default for SandboxFile {
    fn default() -> Self {
        Self {
            enabled: false,
            allowed_paths: None,
            read_paths: Vec::new(),
            allow_temp: true,
            timeout_seconds: None,
            network: true,
            launcher: None,
        }
    }
}

/// `principals.<name>`: what a token's principal may do.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PrincipalFile {
    /// Scopes the principal holds (`*` = all); gates runtime and channel tools.
    pub scopes: Vec<String>,
    /// The agent id whose `agents.<id>.tools` policy applies.
    pub agent_id: Option<String>,
    /// The group id whose `groups.<id>.tools` policy applies.
    pub group_id: Option<String>,
    /// The folders the principal may open sessions in (default: its own folder under
    /// `<agent dir>/gateway/workspaces`).
    pub workspaces: Vec<PathBuf>,
}

impl Default for PrincipalFile {
    fn default() -> Self {
        Self {
            scopes: vec!["sessions".to_owned()],
            agent_id: None,
            group_id: None,
            workspaces: Vec::new(),
        }
    }
}

/// One auth profile: an id and its key.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileFile {
    pub id: String,
    pub api_key: String,
}

impl std::fmt::Debug for ProfileFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileFile")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// `runner`: the embedded runner's tunables.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RunnerFile {
    /// Longest silence of one model call before it counts as a timeout and the next auth
    /// profile is tried (default: none; the session's idle limit ends the run instead).
    pub attempt_idle_timeout_ms: Option<u64>,
    pub max_overflow_compactions: Option<u32>,
    pub max_run_loop_iterations: Option<u32>,
    /// Cooldown of a profile after a rate limit / auth / billing failure, in seconds.
    pub cooldown_seconds: Option<u64>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GatewayFile {
    #[serde(flatten)]
    pub policy: ToolPolicyConfig,
    pub sandbox: SandboxFile,
    pub principals: BTreeMap<String, PrincipalFile>,
    /// Provider → keys, in rotation order.
    pub auth_profiles: BTreeMap<String, Vec<ProfileFile>>,
    pub runner: RunnerFile,
    /// `full` (default: pi's system prompt), `minimal` or `none`.
    pub prompt_mode: Option<PromptMode>,
    /// The port of the OpenClaw protocol listener (`--openclaw-port` wins).
    pub openclaw_port: Option<u16>,
    /// OpenClaw's Control UI folder to serve on that port (`--openclaw-control-ui` wins).
    pub openclaw_control_ui: Option<PathBuf>,
}

impl GatewayFile {
    /// Reads `<agent_dir>/gateway.json`; a missing file is the default.
    pub fn load(agent_dir: &Path) -> Result<Self, ConfigFileError> {
        let path = agent_dir.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigFileError::Read { path, source }),
        };
        serde_json::from_str(&text).map_err(|source| ConfigFileError::Parse { path, source })
    }

    /// The principal's settings (defaults when it has none).
    pub fn principal(&self, name: &str) -> PrincipalFile {
        self.principals.get(name).cloned().unwrap_or_default()
    }

    /// The auth profile store of the configured keys.
    pub fn auth_store(&self) -> AuthProfileStore {
        let profiles = self
            .auth_profiles
            .iter()
            .flat_map(|(provider, keys)| {
                keys.iter()
                    .map(move |k| AuthProfile::new(&k.id, provider, &k.api_key))
            })
            .collect();
        let cooldowns = match self.runner.cooldown_seconds {
            Some(seconds) => CooldownConfig::uniform(Duration::from_secs(seconds)),
            None => CooldownConfig::default(),
        };
        AuthProfileStore::new(profiles, cooldowns)
    }

    /// The runner's configuration.
    pub fn runner_config(&self) -> RunnerConfig {
        let defaults = RunnerConfig::default();
        RunnerConfig {
            idle_timeout_ms: self.runner.attempt_idle_timeout_ms,
            max_overflow_compactions: self
                .runner
                .max_overflow_compactions
                .unwrap_or(defaults.max_overflow_compactions),
            max_run_loop_iterations: self.runner.max_run_loop_iterations,
            ..defaults
        }
    }

    /// The sandbox of a session in `cwd`, when enabled.
    pub fn sandbox_config(&self, cwd: &Path) -> Result<Option<SandboxConfig>, SandboxError> {
        if !self.sandbox.enabled {
            return Ok(None);
        }
        let launcher = match &self.sandbox.launcher {
            Some(path) => path.clone(),
            None => locate_launcher()?,
        };
        let mut config = SandboxConfig::new(launcher);
        config.allowed_write_paths = match &self.sandbox.allowed_paths {
            Some(paths) => paths.iter().map(|p| cwd.join(p)).collect(),
            None => vec![cwd.to_path_buf()],
        };
        if self.sandbox.allow_temp {
            config.allowed_write_paths.push(std::env::temp_dir());
        }
        config.allowed_read_paths = self
            .sandbox
            .read_paths
            .iter()
            .map(|p| cwd.join(p))
            .collect();
        config.timeout = self.sandbox.timeout_seconds.map(Duration::from_secs);
        config.network = self.sandbox.network;
        Ok(Some(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section_and_defaults_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            GatewayFile::load(dir.path()).unwrap(),
            GatewayFile::default()
        );
        std::fs::write(
            dir.path().join(FILE_NAME),
            r#"{
              "tools": {"deny": ["write"]},
              "agents": {"coder": {"tools": {"allow": ["read"]}}},
              "sandbox": {"enabled": true, "allowedPaths": ["out"], "timeoutSeconds": 30,
                          "launcher": "/bin/true"},
              "principals": {"alice": {"scopes": ["*"], "agentId": "coder"}},
              "authProfiles": {"mock": [{"id": "a", "apiKey": "k-a"}, {"id": "b", "apiKey": "k-b"}]},
              "runner": {"attemptIdleTimeoutMs": 500, "cooldownSeconds": 5},
              "promptMode": "minimal"
            }"#,
        )
        .unwrap();
        let file = GatewayFile::load(dir.path()).unwrap();
        assert_eq!(file.policy.tools.deny, Some(vec!["write".to_owned()]));
        assert!(file.policy.agents.contains_key("coder"));
        assert_eq!(file.principal("alice").agent_id.as_deref(), Some("coder"));
        assert_eq!(file.principal("bob").scopes, ["sessions"]);
        assert_eq!(file.auth_store().profile_ids("mock"), ["a", "b"]);
        assert_eq!(file.runner_config().idle_timeout_ms, Some(500));
        assert_eq!(file.prompt_mode, Some(PromptMode::Minimal));
        let sandbox = file.sandbox_config(Path::new("/w")).unwrap().unwrap();
        assert_eq!(
            sandbox.allowed_write_paths,
            [PathBuf::from("/w/out"), std::env::temp_dir()]
        );
        assert_eq!(sandbox.timeout, Some(Duration::from_secs(30)));
        assert!(
            !format!("{file:?}").contains("k-a"),
            "keys stay out of Debug"
        );
    }

    #[test]
    fn a_malformed_file_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), "{\"sandbox\": 3}").unwrap();
        let error = GatewayFile::load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("gateway.json"), "{error}");
    }
}
