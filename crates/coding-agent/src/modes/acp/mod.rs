//! ACP mode (`pi --mode acp`): pi as an Agent Client Protocol agent over stdio, for editors
//! (Zed, JetBrains, Neovim and Emacs plugins). Built on the protocol's own Rust SDK. The
//! editor drives the same session RPC mode drives: one session at a time, `session/new`
//! starting a fresh one, `session/load` reopening a saved one with its history replayed as
//! updates, either in another folder getting a session built there.
//!
//! The connection serves from the start: `initialize` is answered while pi still builds its
//! session (models, extensions, MCP), and the session requests wait for it.

mod auth;
mod client_files;
mod commands;
mod config;
mod edits;
mod link;
mod listing;
mod mcp;
mod prompt;
mod replay;
mod server;
mod starting;
mod terminal;
mod trust;
mod ui;
mod updates;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, CancelNotification, CloseSessionRequest,
    CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse, InitializeRequest,
    ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SetSessionConfigOptionRequest, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::{
    Agent, Client, Error, JsonRpcResponse, Protocol, Responder, Stdio, on_receive_notification,
    on_receive_request,
};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::agent_session::AgentSession;
use crate::cli::Args;
use server::Server;
pub use starting::Opened;
use starting::Pending;

/// ACP mode begun before the session exists: the connection already serves.
pub struct Starting {
    session: oneshot::Sender<Opened>,
    pending: Arc<Pending>,
    served: JoinHandle<i32>,
}

impl Starting {
    /// Starts serving stdin (on the current tokio runtime); the session comes with
    /// [`Self::run`]. `args` builds the sessions of other folders.
    pub fn begin(args: &Args) -> Self {
        let (session, arrives) = oneshot::channel();
        let pending = Pending::new(arrives, args.clone());
        let served = tokio::spawn(serve(pending.clone()));
        Self {
            session,
            pending,
            served,
        }
    }

    /// Hands over the session and serves the editor until it closes stdin; the exit code.
    pub async fn run(self, opened: Opened) -> i32 {
        let session = opened.session.clone();
        let _ = self.session.send(opened);
        let code = self.served.await.unwrap_or(1);
        // The session now: the first one, or one that took its place (the first one was
        // shut down then).
        match self.pending.current() {
            Some(server) => {
                shut_down(server.session()).await;
                server.session().close_mcp().await;
            }
            None => shut_down(&session).await,
        }
        code
    }
}

/// Answers a request from a task of its own (handlers block the dispatch loop while they
/// run), with the work's value or error.
fn answer<T, P>(
    connection: &ConnectionTo<Client>,
    responder: Responder<T, P>,
    work: impl Future<Output = Result<T, Error>> + Send + 'static,
) -> Result<(), Error>
where
    T: JsonRpcResponse + Send + 'static,
    P: Protocol,
{
    connection.spawn(async move {
        match work.await {
            Ok(response) => responder.respond(response),
            Err(error) => responder.respond_with_error(error),
        }
    })
}

/// Answers `session/new` or `session/load` from a task of its own, then tells the editor
/// the session's commands and asks the project's trust when it awaits the user; prompts
/// wait until then.
fn open_session<T, P>(
    connection: &ConnectionTo<Client>,
    responder: Responder<T, P>,
    pending: Arc<Pending>,
    work: impl Future<Output = Result<(T, Arc<Server>), Error>> + Send + 'static,
) -> Result<(), Error>
where
    T: JsonRpcResponse + Send + 'static,
    P: Protocol,
{
    connection.spawn(async move {
        let opening = pending.opening().await;
        match work.await {
            Ok((response, server)) => {
                responder.respond(response)?;
                server.announce_commands();
                pending.settle_trust(server).await;
                drop(opening);
                Ok(())
            }
            Err(error) => responder.respond_with_error(error),
        }
    })
}

async fn serve(pending: Arc<Pending>) -> i32 {
    let link = pending.link.clone();
    let served = Agent
        .v1()
        .name("pi")
        .on_receive_request(
            {
                let link = link.clone();
                async move |request: InitializeRequest, responder, connection| {
                    link.connect(&connection);
                    responder.respond(server::initialize(&link, &request))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: AuthenticateRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        // pi's credentials, read again: the login happened in pi itself.
                        let id = request.method_id.0;
                        if &*id != auth::METHOD_ID {
                            return Err(auth::unknown_method(&id));
                        }
                        pending.settled().await?.check_login()?;
                        Ok(AuthenticateResponse::default())
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: NewSessionRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let opening = pending.clone();
                    open_session(&connection, responder, pending.clone(), async move {
                        let server = opening.in_folder(&request.cwd).await?;
                        let response = server.new_session(request).await?;
                        Ok((response, server))
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: LoadSessionRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let opening = pending.clone();
                    open_session(&connection, responder, pending.clone(), async move {
                        let server = opening.in_folder(&request.cwd).await?;
                        let response = server.load_session(request).await?;
                        Ok((response, server))
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: ResumeSessionRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let opening = pending.clone();
                    open_session(&connection, responder, pending.clone(), async move {
                        let server = opening.in_folder(&request.cwd).await?;
                        let response = server.resume_session(request).await?;
                        Ok((response, server))
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: ListSessionsRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        pending.settled().await?.list_sessions(&request)
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: DeleteSessionRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        pending.settled().await?.delete_session(&request)?;
                        Ok(DeleteSessionResponse::new())
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: CloseSessionRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        pending.settled().await?.close_session(request).await?;
                        Ok(CloseSessionResponse::new())
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: PromptRequest, responder, connection| {
                    pending.link.connect(&connection);
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        pending.settled().await?.prompt(request).await
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: SetSessionModeRequest, responder, connection| {
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        let _opening = pending.opening().await;
                        let server = pending.ready()?;
                        server.check_session(&request.session_id)?;
                        pending.set_mode(server, &request.mode_id.0).await?;
                        Ok(SetSessionModeResponse::new())
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let pending = pending.clone();
                async move |request: SetSessionConfigOptionRequest, responder, connection| {
                    let pending = pending.clone();
                    answer(&connection, responder, async move {
                        let _opening = pending.opening().await;
                        let mut server = pending.ready()?;
                        server.check_session(&request.session_id)?;
                        if let Some(mode) = server.mode_option(&request)? {
                            server = pending.set_mode(server, &mode).await?;
                        }
                        server.set_config_option(&request)
                    })
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            {
                let pending = pending.clone();
                async move |notification: CancelNotification, _connection| {
                    if let Ok(server) = pending.ready() {
                        server.cancel(&notification);
                    }
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    match served {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("pi: the ACP connection failed: {}", error.message);
            1
        }
    }
}

/// Stops whatever runs (bounded, so a stuck tool cannot keep pi alive).
async fn shut_down(session: &AgentSession) {
    session.abort_bash();
    session.abort_compaction();
    let _ = tokio::time::timeout(Duration::from_secs(3), session.abort()).await;
    let _ = tokio::time::timeout(Duration::from_secs(3), session.shutdown_extensions()).await;
}
