//! The session as it comes and goes: requests that need it wait until pi has built it (or
//! learn that it could not start), and a session opened in another folder replaces it
//! with one built there, as pi would start in that folder.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::{Error, ErrorCode};
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot, watch};

use super::link::Link;
use super::server::Server;
use crate::agent_session::AgentSession;
use crate::cli::{Args, Mode};
use crate::config::paths;
use crate::launch::{LaunchOptions, Launched, launch};
use crate::trust::TrustStore;

#[derive(Clone)]
enum State {
    Starting,
    Ready(Arc<Server>),
    /// pi could not build its session (said on stderr).
    Failed,
}

/// The connection's side of the session.
pub struct Pending {
    pub link: Arc<Link>,
    state: watch::Sender<State>,
    /// The command line pi started with, to build sessions in other folders.
    args: Args,
    /// Held while a session opens (a folder switch, a trust question): prompts wait.
    switching: Arc<Mutex<()>>,
}

/// A session as pi's start-up built it, with what ACP needs to know of that start.
pub struct Opened {
    pub session: AgentSession,
    /// The project's trust is the user's to decide (asked in the editor).
    pub trust_unasked: bool,
    pub project_trusted: bool,
    /// Its tools run confined (`--sandbox` or the settings).
    pub sandboxed: bool,
}

impl From<Launched> for Opened {
    fn from(launched: Launched) -> Self {
        Self {
            session: launched.session,
            trust_unasked: launched.trust_unasked,
            project_trusted: launched.project_trusted,
            sandboxed: launched.sandbox_label.is_some(),
        }
    }
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message.into())
}

impl Pending {
    /// Waits for the session in the background and binds it to the editor once it comes.
    pub fn new(arrives: oneshot::Receiver<Opened>, args: Args) -> Arc<Self> {
        let pending = Arc::new(Self {
            link: Arc::new(Link::default()),
            state: watch::channel(State::Starting).0,
            args,
            switching: Arc::new(Mutex::new(())),
        });
        let bind = pending.clone();
        tokio::spawn(async move {
            let state = match arrives.await {
                Ok(opened) => {
                    State::Ready(Arc::new(Server::start(opened, bind.link.clone()).await))
                }
                // pi stopped while starting.
                Err(_) => State::Failed,
            };
            bind.state.send_replace(state);
        });
        pending
    }

    /// The session, once built.
    pub async fn server(&self) -> Result<Arc<Server>, Error> {
        let mut state = self.state.subscribe();
        let state = state
            .wait_for(|s| !matches!(s, State::Starting))
            .await
            .map_err(|_| internal("pi has stopped"))?
            .clone();
        match state {
            State::Ready(server) => Ok(server),
            _ => Err(internal(
                "pi could not start its session; its standard error says why",
            )),
        }
    }

    /// The session if it is built already (requests naming a session come after one).
    pub fn ready(&self) -> Result<Arc<Server>, Error> {
        match &*self.state.borrow() {
            State::Ready(server) => Ok(server.clone()),
            _ => Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                "No session yet: start one with session/new or session/load",
            )),
        }
    }

    /// Waits until no session is opening (see [`Self::opening`]); the session then.
    pub async fn settled(&self) -> Result<Arc<Server>, Error> {
        drop(self.switching.lock().await);
        self.server().await
    }

    /// Holds prompts back while a session opens, until the guard is dropped.
    pub async fn opening(&self) -> OwnedMutexGuard<()> {
        self.switching.clone().lock_owned().await
    }

    /// The session working in `cwd`: the current one when it works there, else one built
    /// in `cwd` from pi's command line (the current one is shut down; one session at a
    /// time, as pi-acp keeps). Called while [`Self::opening`]'s guard is held.
    pub async fn in_folder(&self, cwd: &Path) -> Result<Arc<Server>, Error> {
        if !cwd.is_absolute() {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                format!("cwd must be an absolute path: {}", cwd.display()),
            ));
        }
        let current = self.server().await?;
        if current.works_in(cwd) {
            return Ok(current);
        }
        if !cwd.is_dir() {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                format!("No such folder: {}", cwd.display()),
            ));
        }
        let built = build(fresh_args(&self.args), cwd).await?;
        current.retire().await;
        let server = Arc::new(Server::start(built.into(), self.link.clone()).await);
        self.state.send_replace(State::Ready(server.clone()));
        Ok(server)
    }

    /// `server`'s session built again (by its id) with `change` made to pi's command line:
    /// it takes `server`'s place. Called while [`Self::opening`]'s guard is held.
    async fn rebuild(
        &self,
        server: &Arc<Server>,
        trusted: bool,
        change: impl FnOnce(&mut Args),
    ) -> Result<Arc<Server>, Error> {
        let mut args = Args {
            approve: trusted,
            no_approve: !trusted,
            session_id: Some(server.session().session_id()),
            ..fresh_args(&self.args)
        };
        change(&mut args);
        let cwd = server.session().cwd().to_path_buf();
        let built = build(args, &cwd).await?;
        server.retire().await;
        let rebuilt = Arc::new(Server::start(built.into(), self.link.clone()).await);
        rebuilt.adopt(server).await;
        self.state.send_replace(State::Ready(rebuilt.clone()));
        Ok(rebuilt)
    }

    /// Switches the session's mode; into or out of the sandbox, the session is built again
    /// with its tools confined or not. Called while [`Self::opening`]'s guard is held.
    pub async fn set_mode(&self, server: Arc<Server>, mode: &str) -> Result<Arc<Server>, Error> {
        let Some(sandbox) = server.sandbox_switch(mode) else {
            server.set_mode_now(mode)?;
            return Ok(server);
        };
        if server.session().is_streaming() {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                "pi is working: switch the sandbox once this run has ended",
            ));
        }
        let trusted = server.project_trusted();
        let rebuilt = self
            .rebuild(&server, trusted, |args| args.sandbox = sandbox)
            .await?;
        if rebuilt.sandboxed() != sandbox {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                "The settings keep the sandbox on (\"sandbox\": true)",
            ));
        }
        rebuilt.set_mode_now(mode)?;
        Ok(rebuilt)
    }

    /// Asks the editor pi's trust question when `server`'s folder awaits it; trusted, the
    /// session is built again with the project's resources (the same session, by id).
    /// Called while [`Self::opening`]'s guard is held.
    pub async fn settle_trust(&self, server: Arc<Server>) {
        if !server.take_trust_unasked() {
            return;
        }
        let cwd = server.session().cwd().to_path_buf();
        let Some(choice) = super::trust::ask(&self.link, &cwd).await else {
            return;
        };
        if let Err(e) = TrustStore::new(&paths::agent_dir()).set_many(&choice.updates) {
            eprintln!("Warning: {e}");
        }
        if !choice.trusted {
            return;
        }
        let trusted = match self.rebuild(&server, true, |_| {}).await {
            Ok(trusted) => trusted,
            Err(error) => {
                eprintln!("pi: {}", error.message);
                return;
            }
        };
        trusted.announce_commands();
    }

    /// The session now, if any (to shut it down when the editor leaves).
    pub fn current(&self) -> Option<Arc<Server>> {
        self.ready().ok()
    }
}

/// pi's command line for a session in another folder: the same options, but a new
/// session and no messages (`--continue`, `--session`, `--fork` name this folder's).
fn fresh_args(args: &Args) -> Args {
    Args {
        continue_session: false,
        resume: false,
        session: None,
        session_id: None,
        fork: None,
        name: None,
        messages: Vec::new(),
        ..args.clone()
    }
}

/// Builds a session in `cwd` from `args` as pi's start-up does (on a blocking thread: it
/// loads extensions and the catalog).
async fn build(args: Args, cwd: &Path) -> Result<Launched, Error> {
    let folder = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let options = LaunchOptions {
            args: &args,
            cwd: folder,
            mode: Mode::Acp,
            interactive: false,
            tools_flag: args
                .tools
                .as_deref()
                .and_then(|t| crate::tool_selection::ToolsFlag::parse(t).ok()),
        };
        launch(&tokio::runtime::Handle::current(), &options)
    })
    .await
    .map_err(|_| internal("building the session failed"))?
    .map_err(|_| {
        internal(format!(
            "pi could not open a session in {}; its standard error says why",
            cwd.display()
        ))
    })
}
