//! The environment pi gives the commands it runs: every child learns it runs under pi
//! (`PI_CODING_AGENT=true`, `AI_AGENT=pi`, pi 0.84), and the bash tool's commands also get
//! the session's id, file, model and thinking level (pi 0.82), never inherited ones.

use std::sync::{Arc, OnceLock};

/// Set for every process pi starts.
pub const CHILD_ENV: [(&str, &str); 2] = [("PI_CODING_AGENT", "true"), ("AI_AGENT", "pi")];

/// The session variables; a value pi itself inherited is not passed on.
pub const SESSION_VARS: [&str; 5] = [
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
];

/// Reads the session's variables when a command starts.
type Source = Arc<dyn Fn() -> Vec<(&'static str, String)> + Send + Sync>;

/// The bash tool's view of its session, bound once the session exists (the tools are
/// built before it). Unbound, commands get no session variables.
#[derive(Clone, Default)]
pub struct SessionEnv(Arc<OnceLock<Source>>);

impl SessionEnv {
    /// Binds the source of the variables (the first binding stays).
    pub fn bind(&self, source: impl Fn() -> Vec<(&'static str, String)> + Send + Sync + 'static) {
        let _ = self.0.set(Arc::new(source));
    }

    /// The variables now.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        self.0.get().map(|source| source()).unwrap_or_default()
    }
}

/// Applies pi's child environment to `command`: the markers, no inherited session
/// variables, then `session`'s.
pub fn apply(command: &mut std::process::Command, session: &[(&'static str, String)]) {
    for (name, value) in CHILD_ENV {
        command.env(name, value);
    }
    for name in SESSION_VARS {
        command.env_remove(name);
    }
    for (name, value) in session {
        command.env(name, value);
    }
    command.envs(pi_ai::http::settings_proxy_env());
}
