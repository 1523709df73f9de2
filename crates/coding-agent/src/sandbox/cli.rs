//! The CLI's sandbox (`--sandbox`, settings `sandbox`): the built-in `bash` runs under the
//! Landlock launcher inside `pi` itself (`pi __sandbox …`), and the file tools check their
//! paths, with writes allowed only below the cwd, the temp dir and the configured paths.
//!
//! Settings: `"sandbox": true`, or `{"enabled": true, "writePaths": ["~/.cache"],
//! "network": false}`. A project's `.pi/settings.json` can turn the sandbox on or the
//! network off, never the other way, and cannot add write paths.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentTool;
use serde_json::{Map, Value};

use super::{SandboxConfig, SandboxError, confine, sandbox_tools};
use crate::tools::bash::BashOptions;

/// The first argument that turns `pi` into the sandbox launcher.
pub const LAUNCHER_ARG: &str = "__sandbox";

/// What the settings and the flag ask of the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CliSandbox {
    /// Whether the tools are confined.
    pub enabled: bool,
    /// Extra paths (besides the cwd and the temp dir) where writes are allowed.
    pub write_paths: Vec<PathBuf>,
    /// Whether commands may use the network (TCP).
    pub network: bool,
}

/// One settings file's `sandbox` value.
#[derive(Debug, Default)]
struct FileSandbox {
    enabled: Option<bool>,
    write_paths: Vec<PathBuf>,
    network: Option<bool>,
}

fn parse_value(value: Option<&Value>, file: &Path) -> Result<FileSandbox, String> {
    let bad = |what: &str| format!("{}: \"sandbox\" {what}", file.display());
    match value {
        None | Some(Value::Null) => Ok(FileSandbox::default()),
        Some(Value::Bool(on)) => Ok(FileSandbox {
            enabled: Some(*on),
            ..FileSandbox::default()
        }),
        Some(Value::Object(object)) => {
            let enabled = match object.get("enabled") {
                None => Some(true),
                Some(Value::Bool(on)) => Some(*on),
                Some(_) => return Err(bad("\"enabled\" must be true or false")),
            };
            let network = match object.get("network") {
                None => None,
                Some(Value::Bool(on)) => Some(*on),
                Some(_) => return Err(bad("\"network\" must be true or false")),
            };
            let write_paths = match object.get("writePaths") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(expand_home))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("\"writePaths\" must be a list of paths"))?,
                Some(_) => return Err(bad("\"writePaths\" must be a list of paths")),
            };
            Ok(FileSandbox {
                enabled,
                write_paths,
                network,
            })
        }
        Some(_) => Err(bad("must be true, false or an object")),
    }
}

/// `~` and `~/…` against `$HOME`.
fn expand_home(path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home,
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
        _ => PathBuf::from(path),
    }
}

impl CliSandbox {
    /// The sandbox from the global and project settings objects and the `--sandbox` flag.
    pub fn from_settings(
        global: &Map<String, Value>,
        global_file: &Path,
        project: &Map<String, Value>,
        project_file: &Path,
        flag: bool,
    ) -> Result<Self, String> {
        let user = parse_value(global.get("sandbox"), global_file)?;
        let local = parse_value(project.get("sandbox"), project_file)?;
        Ok(Self {
            enabled: flag || user.enabled == Some(true) || local.enabled == Some(true),
            write_paths: user.write_paths,
            network: user.network.unwrap_or(true) && local.network.unwrap_or(true),
        })
    }

    /// Reads both settings files (a missing or unreadable file counts as empty).
    pub fn load(global_file: &Path, project_file: &Path, flag: bool) -> Result<Self, String> {
        let global = crate::config::settings::read_object(global_file);
        let project = crate::config::settings::read_object(project_file);
        Self::from_settings(&global, global_file, &project, project_file, flag)
    }

    /// The sandbox of a run in `cwd`, from the agent dir's and the project's settings and
    /// the flag; refused with the reason when it is on and the kernel cannot provide it.
    pub fn for_run(agent_dir: &Path, cwd: &Path, flag: bool) -> Result<Self, String> {
        let sandbox = Self::load(
            &crate::config::paths::settings_path(agent_dir),
            &crate::config::paths::project_settings_path(cwd),
            flag,
        )?;
        if sandbox.enabled {
            sandbox
                .check()
                .map_err(|e| format!("--sandbox: {e}; the tools cannot be confined"))?;
        }
        Ok(sandbox)
    }

    /// The launcher configuration for tools running in `cwd`: writes below the cwd, the
    /// temp dir and the write paths; the launcher is this executable.
    pub fn config(&self, cwd: &Path) -> Result<SandboxConfig, SandboxError> {
        let exe = std::env::current_exe()
            .map_err(|e| SandboxError::LauncherNotFound(format!("the running pi ({e})")))?;
        let mut config = SandboxConfig::new(exe);
        config.launcher_prefix = vec![LAUNCHER_ARG.into()];
        config.network = self.network;
        config.allowed_write_paths.push(cwd.to_path_buf());
        config.allowed_write_paths.push(std::env::temp_dir());
        for path in &self.write_paths {
            config.allowed_write_paths.push(cwd.join(path));
        }
        Ok(config)
    }

    /// Checks the kernel can do what is asked: Landlock (ABI v3+), and ABI v4 to turn the
    /// network off. The error says why not.
    pub fn check(&self) -> Result<u8, SandboxError> {
        let abi = confine::landlock_available()?;
        if !self.network && abi < confine::NETWORK_ABI {
            return Err(SandboxError::Unavailable(format!(
                "turning the network off needs Landlock ABI v{} (Linux 6.7); this kernel \
                 has v{abi}",
                confine::NETWORK_ABI
            )));
        }
        Ok(abi)
    }

    /// The footer's label: `sandbox`, or `sandbox, no network`.
    pub fn label(&self) -> Option<String> {
        match (self.enabled, self.network) {
            (false, _) => None,
            (true, true) => Some("sandbox".to_owned()),
            (true, false) => Some("sandbox, no network".to_owned()),
        }
    }

    /// The built-in tools confined: `bash` through the launcher, the file tools by path.
    pub fn confine_tools(
        &self,
        tools: Vec<Arc<dyn AgentTool>>,
        cwd: &Path,
        bash: BashOptions,
    ) -> Result<Vec<Arc<dyn AgentTool>>, SandboxError> {
        if !self.enabled {
            return Ok(tools);
        }
        sandbox_tools(tools, &self.config(cwd)?, cwd, bash)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn load(global: Value, project: Value, flag: bool) -> Result<CliSandbox, String> {
        CliSandbox::from_settings(
            &object(global),
            Path::new("g.json"),
            &object(project),
            Path::new("p.json"),
            flag,
        )
    }

    #[test]
    fn settings_shapes() {
        let off = load(json!({}), json!({}), false).unwrap();
        assert!(!off.enabled && off.network);
        assert!(load(json!({}), json!({}), true).unwrap().enabled);
        assert!(
            load(json!({"sandbox": true}), json!({}), false)
                .unwrap()
                .enabled
        );
        let detailed = load(
            json!({"sandbox": {"writePaths": ["/opt/cache"], "network": false}}),
            json!({}),
            false,
        )
        .unwrap();
        assert!(detailed.enabled && !detailed.network);
        assert_eq!(detailed.write_paths, [PathBuf::from("/opt/cache")]);
        let disabled = load(json!({"sandbox": {"enabled": false}}), json!({}), false).unwrap();
        assert!(!disabled.enabled);
        let error = load(json!({"sandbox": "yes"}), json!({}), false).unwrap_err();
        assert_eq!(
            error,
            "g.json: \"sandbox\" must be true, false or an object"
        );
    }

    #[test]
    fn a_project_only_tightens() {
        // It cannot turn off what the user turned on, nor give itself write paths.
        let user_on = json!({"sandbox": true});
        let project = json!({"sandbox": {"enabled": false, "network": true, "writePaths": ["/"]}});
        let sandbox = load(user_on, project, false).unwrap();
        assert!(sandbox.enabled && sandbox.write_paths.is_empty());
        // It can turn the sandbox on and the network off.
        let sandbox = load(json!({}), json!({"sandbox": {"network": false}}), false).unwrap();
        assert!(sandbox.enabled && !sandbox.network);
    }
}
