//! `settings.json`: global settings, overridden by the project's `.pi/settings.json`.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The settings this binary reads so far (unknown keys are kept in the raw map).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    pub default_thinking_level: Option<String>,
    /// pi 1.5: the startup thinking level per `provider/id` (over `defaultThinkingLevel`).
    pub model_thinking_levels: Option<std::collections::BTreeMap<String, String>>,
    /// pi 1.5: the startup tools; a list of only `+name`/`-name` edits the built-in default.
    pub default_tools: Option<Vec<String>>,
    /// Where sessions are stored (after `--session-dir` and `PI_CODING_AGENT_SESSION_DIR`).
    pub session_dir: Option<String>,
    /// The shell for the bash tool.
    pub shell_path: Option<String>,
    /// Text prepended (with a newline) to every bash command.
    pub shell_command_prefix: Option<String>,
    /// Bash tool settings of this build (`{"timeoutSeconds": 600}`).
    pub bash: Option<BashSettings>,
    /// Auto-retry of transient provider errors.
    pub retry: Option<crate::retry::RetrySettings>,
    /// pi 1.5: how long a provider response may stay silent (ms, default 300000);
    /// `0` or `"disabled"` turns the limit off.
    pub http_idle_timeout_ms: Option<IdleTimeout>,
    /// How OpenAI Codex requests travel: `auto` (default), `sse`, `websocket`,
    /// `websocket-cached`.
    pub transport: Option<pi_ai::Transport>,
    /// Longest wait for a WebSocket to open (ms, default 15000); `0` or `"disabled"`: none.
    pub websocket_connect_timeout_ms: Option<IdleTimeout>,
    /// Skill files or directories, and `!`/`+`/`-` patterns (an old `skills` object gives
    /// its `customDirectories`).
    #[serde(
        default,
        deserialize_with = "crate::resources::deserialize_string_list"
    )]
    pub skills: Option<Vec<String>>,
    /// Prompt template files or directories, and `!`/`+`/`-` patterns.
    #[serde(
        default,
        deserialize_with = "crate::resources::deserialize_string_list"
    )]
    pub prompts: Option<Vec<String>>,
    /// Whether skills are offered as `/skill:name` commands (default true).
    pub enable_skill_commands: Option<bool>,
    /// Automatic compaction.
    pub compaction: Option<crate::compaction::CompactionConfig>,
    /// Branch summaries when leaving a branch of the session tree.
    pub branch_summary: Option<crate::compaction::BranchSummarySettings>,
    /// How queued steering messages are delivered.
    pub steering_mode: Option<pi_agent_core::QueueMode>,
    /// How queued follow-up messages are delivered.
    pub follow_up_mode: Option<pi_agent_core::QueueMode>,
    /// Model patterns for cycling when `--models` is not given.
    pub enabled_models: Option<Vec<String>>,
    /// Interactive theme name (`dark`, `light` or a custom theme's `name`).
    pub theme: Option<String>,
    /// Extra theme files or directories.
    #[serde(
        default,
        deserialize_with = "crate::resources::deserialize_string_list"
    )]
    pub themes: Option<Vec<String>>,
    /// Collapse thinking blocks in the interactive view.
    pub hide_thinking_block: Option<bool>,
    /// Skip the startup header in interactive mode (`true`); pi 1.5's `"header"` keeps
    /// only the header, which is all this build's startup shows.
    pub quiet_startup: Option<QuietStartup>,
    /// Horizontal padding inside the editor.
    pub editor_padding_x: Option<usize>,
    /// Rows of the autocomplete list.
    pub autocomplete_max_visible: Option<usize>,
    /// What a double Escape on an empty editor opens: `tree`, `fork` or `none`.
    pub double_escape_action: Option<String>,
    /// Markdown rendering options.
    pub markdown: Option<MarkdownSettings>,
    /// pi 1.x: anonymous install reporting and provider attribution headers (default true;
    /// `PI_TELEMETRY` overrides). This build reports no installs; the setting decides the
    /// attribution headers.
    pub enable_install_telemetry: Option<bool>,
    /// How images sent to models are treated.
    pub images: Option<ImageSettings>,
    /// pi 1.6's layout settings, kept raw and read as pi reads them (`tui_settings.rs`).
    pub tui_mode: Option<Value>,
    pub fullscreen_exit_output: Option<Value>,
    pub fullscreen_scrollbar: Option<Value>,
    pub fullscreen_copy_on_select: Option<Value>,
    pub fullscreen_wheel_scroll_lines: Option<Value>,
}

/// `images` settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSettings {
    /// Resize new images to the model's profile (default true).
    pub auto_resize: Option<bool>,
    /// Keep images from models (default false).
    pub block_images: Option<bool>,
}

/// Markdown rendering settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MarkdownSettings {
    /// Indent of code block lines (a string of spaces, default two).
    pub code_block_indent: Option<String>,
}

/// Bash tool settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashSettings {
    /// Default timeout of a command when the model gives none (0 = none).
    pub timeout_seconds: Option<u64>,
    /// Leave processes a command started in the background running after it exits
    /// (default false: they are ended with the command's shell).
    pub keep_background_processes: Option<bool>,
}

pub(crate) fn read_object(path: &Path) -> Map<String, Value> {
    crate::text_file::read_text(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
}

/// Merges `over` into `base`; nested objects merge key by key. A `defaultTools` made only
/// of `+name`/`-name` entries is appended to the inherited list (it edits that selection,
/// pi 0.99.0); any other value replaces it.
pub(crate) fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    let is_modifier = |v: &Value| v.as_str().is_some_and(|s| s.starts_with(['+', '-']));
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(nested)) => merge(existing, nested),
            (Some(Value::Array(inherited)), Value::Array(edits))
                if key == "defaultTools" && edits.iter().all(is_modifier) =>
            {
                inherited.extend(edits);
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// `httpIdleTimeoutMs`: milliseconds, or `"disabled"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum IdleTimeout {
    Millis(u64),
    Named(IdleTimeoutName),
}

/// The named form of `httpIdleTimeoutMs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdleTimeoutName {
    Disabled,
}

/// pi 1.5's default `httpIdleTimeoutMs`: five minutes.
pub const DEFAULT_HTTP_IDLE_TIMEOUT_MS: u64 = 300_000;

impl Settings {
    /// `shellPath` with a leading `~` expanded to the home directory (pi 0.80.6).
    pub fn shell(&self) -> Option<std::path::PathBuf> {
        self.shell_path
            .as_deref()
            .map(crate::config::paths::expand_tilde)
    }

    /// The WebSocket connect timeout in milliseconds (0: none), when set.
    pub fn websocket_connect_timeout_ms(&self) -> Option<u64> {
        match self.websocket_connect_timeout_ms? {
            IdleTimeout::Millis(ms) => Some(ms),
            IdleTimeout::Named(IdleTimeoutName::Disabled) => Some(0),
        }
    }

    /// The stream idle timeout in milliseconds; `None` when disabled.
    pub fn http_idle_timeout_ms(&self) -> Option<u64> {
        match self.http_idle_timeout_ms {
            None => Some(DEFAULT_HTTP_IDLE_TIMEOUT_MS),
            Some(IdleTimeout::Millis(0) | IdleTimeout::Named(IdleTimeoutName::Disabled)) => None,
            Some(IdleTimeout::Millis(ms)) => Some(ms),
        }
    }
}

/// `quietStartup`: a boolean, or pi 1.5's `"header"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum QuietStartup {
    Flag(bool),
    Mode(QuietMode),
}

/// The named forms of `quietStartup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuietMode {
    Header,
}

impl QuietStartup {
    /// Whether the startup header is left out.
    pub fn hides_header(self) -> bool {
        self == Self::Flag(true)
    }
}

/// Settings from a merged object. A key whose value this build cannot read (a newer pi's
/// form, a typo) is left out and named, instead of every setting being lost.
pub fn parse_lenient(map: Map<String, Value>) -> (Settings, Vec<String>) {
    if let Ok(settings) = Settings::deserialize(Value::Object(map.clone())) {
        return (settings, Vec::new());
    }
    let mut kept = Map::new();
    let mut dropped = Vec::new();
    for (key, value) in map {
        let single = Map::from_iter([(key.clone(), value.clone())]);
        match Settings::deserialize(Value::Object(single)) {
            Ok(_) => {
                kept.insert(key, value);
            }
            Err(e) => dropped.push(format!("\"{key}\" ({e})")),
        }
    }
    (
        Settings::deserialize(Value::Object(kept)).unwrap_or_default(),
        dropped,
    )
}

/// Says once per process which settings were left out.
fn warn_dropped(dropped: &[String]) {
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    for key in dropped {
        if !warned.contains(key) {
            eprintln!("Warning: settings: ignoring {key}");
            warned.push(key.clone());
        }
    }
}

/// [`parse_lenient`], warning about what it left out.
pub fn parse_settings(map: Map<String, Value>) -> Settings {
    let (settings, dropped) = parse_lenient(map);
    warn_dropped(&dropped);
    settings
}

impl Settings {
    /// The compaction settings, with defaults for what is not set (no model's overrides).
    pub fn compaction_settings(&self) -> crate::compaction::CompactionSettings {
        self.compaction_settings_for(None)
    }

    /// The compaction settings for the model `provider/model_id`, its overrides applied.
    pub fn compaction_settings_for(
        &self,
        model_key: Option<&str>,
    ) -> crate::compaction::CompactionSettings {
        self.compaction
            .as_ref()
            .map(|c| c.resolve(model_key))
            .unwrap_or_default()
    }

    /// Global settings with the project's merged over them.
    pub fn load(global: &Path, project: &Path) -> Self {
        let mut merged = read_object(global);
        merge(&mut merged, read_object(project));
        parse_settings(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_this_build_cannot_read_loses_only_its_key() {
        let map = serde_json::json!({"steeringMode": "all", "theme": 7, "quietStartup": "header"});
        let Value::Object(map) = map else {
            unreachable!()
        };
        let (settings, dropped) = parse_lenient(map);
        assert_eq!(settings.steering_mode, Some(pi_agent_core::QueueMode::All));
        assert_eq!(
            settings.quiet_startup,
            Some(QuietStartup::Mode(QuietMode::Header))
        );
        assert!(!settings.quiet_startup.unwrap().hides_header());
        assert_eq!(dropped.len(), 1);
        assert!(dropped[0].starts_with("\"theme\""), "{dropped:?}");
    }
}
