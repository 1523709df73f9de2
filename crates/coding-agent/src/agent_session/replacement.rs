//! Replacing the session with extensions loaded: new, resume, fork, clone and `/reload`
//! as the TypeScript pi's runtime does them. `session_before_switch` / `session_before_fork`
//! may cancel; the old extensions hear `session_shutdown`; then every extension loads again
//! (its factory re-runs, so no state leaks from the old session) and hears `session_start`
//! with the reason and the previous session file.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, ForkResult, SessionOpError, lock};
use crate::extensions::{ExtensionErrorInfo, ExtensionEvent};

impl AgentSession {
    /// `/new`, RPC `new_session`, `ctx.newSession`: true when an extension cancelled.
    /// `setup_entries` are entries a `newSession` setup callback appended in the host.
    pub async fn new_session_with_extensions(
        &self,
        parent_session: Option<String>,
        setup_entries: Option<Vec<Value>>,
    ) -> Result<bool, String> {
        if self.before_switch("new", None).await {
            return Ok(true);
        }
        let previous = self.session_file();
        self.emit_extension_shutdown("new", None).await;
        self.new_session(parent_session).await.map_err(|e| e.0)?;
        if let Some(entries) = setup_entries {
            self.append_setup_entries(entries);
        }
        self.restart_extensions("new", previous).await;
        Ok(false)
    }

    /// `/resume`, RPC `switch_session`, `ctx.switchSession`: true when an extension
    /// cancelled.
    pub async fn switch_session_with_extensions(&self, session_path: &str) -> Result<bool, String> {
        self.switch_session_with_extensions_into(session_path, false)
            .await
    }

    /// [`Self::switch_session_with_extensions`]; `missing_cwd_ok` opens a session whose
    /// folder is gone in this folder (the user chose to continue here).
    pub async fn switch_session_with_extensions_into(
        &self,
        session_path: &str,
        missing_cwd_ok: bool,
    ) -> Result<bool, String> {
        if self
            .before_switch("resume", Some(session_path.to_owned()))
            .await
        {
            return Ok(true);
        }
        let previous = self.session_file();
        self.emit_extension_shutdown("resume", Some(session_path.to_owned()))
            .await;
        self.switch_session_into(Path::new(session_path), missing_cwd_ok)
            .await
            .map_err(|e| e.0)?;
        self.restart_extensions("resume", previous).await;
        Ok(false)
    }

    /// Forks from an entry: `position` `before` (default) branches before a user message
    /// and returns its text; `at` copies the path up to and including the entry (clone).
    pub async fn fork_with_extensions(
        &self,
        entry_id: &str,
        position: Option<&str>,
    ) -> Result<ForkResult, SessionOpError> {
        let position = position.unwrap_or("before");
        let event = ExtensionEvent::SessionBeforeFork {
            entry_id: entry_id.to_owned(),
            position: position.to_owned(),
        };
        if self
            .extension_runtime()
            .emit_session_before(&event, CancellationToken::new())
            .await
            .cancel
        {
            return Ok(ForkResult {
                text: None,
                cancelled: true,
            });
        }
        let previous = self.session_file();
        self.emit_extension_shutdown("fork", None).await;
        let result = if position == "at" {
            if self.with_session(|s| s.entry(entry_id).is_none()) {
                return Err(SessionOpError::new("Invalid entry ID for forking"));
            }
            self.branch_into_new_session(Some(entry_id)).await?;
            ForkResult::default()
        } else {
            self.fork(entry_id).await?
        };
        self.restart_extensions("fork", previous).await;
        Ok(result)
    }

    /// `/clone`, RPC `clone`: a fork at the current leaf.
    pub async fn clone_with_extensions(&self) -> Result<bool, SessionOpError> {
        let leaf = self.with_session(|s| s.leaf_id().map(str::to_owned));
        let Some(leaf) = leaf else {
            return Err(SessionOpError::new(
                "Cannot clone session: no current entry selected",
            ));
        };
        Ok(self
            .fork_with_extensions(&leaf, Some("at"))
            .await?
            .cancelled)
    }

    /// `/reload`: skills, prompt templates, context files and SYSTEM.md / APPEND_SYSTEM.md
    /// are read from disk again (settings included) and the system prompt is rebuilt from
    /// them, as pi 1.6 reloads its resources. Extensions add theirs again when they hear
    /// `resources_discover`. Returns the resource diagnostics.
    pub fn reload_resources(&self) -> Vec<String> {
        let Some(sources) = &self.inner.ext.resource_sources else {
            return Vec::new();
        };
        let loaded = sources.load();
        *lock(&self.inner.skills) = loaded.skills;
        *lock(&self.inner.prompt_templates) = loaded.prompt_templates;
        {
            let mut recipe = lock(&self.inner.ext.recipe);
            if recipe.is_some() {
                *recipe = Some(loaded.recipe);
            }
        }
        self.inner
            .ext
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.rebuild_system_prompt();
        loaded.warnings
    }

    /// `/reload`: tells the extensions (`session_shutdown` with reason `reload`), loads
    /// them again (in the same host, or a new one when it died) with their modules
    /// evaluated afresh, refreshes their tools, and starts them (`session_start` with
    /// reason `reload`). Load failures become extension errors. (A replaced session in
    /// the same folder keeps the modules: only the factories run again.)
    /// A response or compaction still running makes the caller wait: extensions are not
    /// replaced under it (pi 1.5.1).
    pub async fn reload_extensions(&self) -> Result<(), String> {
        if self.is_streaming() {
            return Err("Wait for the current response to finish before reloading.".into());
        }
        if self.is_compacting() {
            return Err("Wait for compaction to finish before reloading.".into());
        }
        self.emit_extension_shutdown("reload", None).await;
        self.extension_runtime()
            .host_notify("clear_module_cache", serde_json::json!({}));
        self.reload_settings();
        self.load_extensions_again().await?;
        self.emit_session_start("reload", None).await;
        Ok(())
    }

    /// Runs every extension factory again, reports the ones that failed to load, and
    /// refreshes their tools.
    async fn load_extensions_again(&self) -> Result<(), String> {
        let runtime = self.extension_runtime().clone();
        let errors = runtime.reload().await?;
        for error in errors {
            runtime.report_error(ExtensionErrorInfo {
                extension_path: error.path,
                event: "load".into(),
                error: error.error,
                stack: None,
            });
        }
        self.refresh_extension_tools();
        Ok(())
    }

    /// After the session was replaced: the extensions load again, as the TypeScript pi
    /// builds a new runtime for the new session, then hear `session_start`. Without
    /// extensions nothing starts.
    async fn restart_extensions(&self, reason: &str, previous: Option<PathBuf>) {
        let runtime = self.extension_runtime().clone();
        if !runtime.is_empty()
            && runtime.can_reload()
            && let Err(error) = self.load_extensions_again().await
        {
            runtime.report_error(ExtensionErrorInfo {
                extension_path: "<runtime>".into(),
                event: "load".into(),
                error,
                stack: None,
            });
        }
        self.emit_session_start(reason, previous).await;
    }

    /// `session_before_switch`; true when an extension cancelled.
    async fn before_switch(&self, reason: &str, target: Option<String>) -> bool {
        let event = ExtensionEvent::SessionBeforeSwitch {
            reason: reason.into(),
            target_session_file: target,
        };
        self.extension_runtime()
            .emit_session_before(&event, CancellationToken::new())
            .await
            .cancel
    }

    async fn emit_extension_shutdown(&self, reason: &str, target: Option<String>) {
        let event = ExtensionEvent::SessionShutdown {
            reason: reason.into(),
            target_session_file: target,
        };
        self.extension_runtime()
            .emit(&event, CancellationToken::new())
            .await;
    }

    /// `session_start`, then `resources_discover` (as binding the extensions does).
    async fn emit_session_start(&self, reason: &str, previous: Option<PathBuf>) {
        let event = ExtensionEvent::SessionStart {
            reason: reason.into(),
            previous_session_file: previous.map(|p| p.display().to_string()),
        };
        self.extension_runtime()
            .emit(&event, CancellationToken::new())
            .await;
        let discover = if reason == "reload" {
            "reload"
        } else {
            "startup"
        };
        self.extend_resources_from_extensions(discover).await;
    }
}
