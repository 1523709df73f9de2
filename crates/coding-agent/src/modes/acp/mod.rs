//! ACP mode (`pi --mode acp`): pi as an Agent Client Protocol agent over stdio, for editors
//! (Zed, JetBrains, Neovim and Emacs plugins). Built on the protocol's own Rust SDK. The
//! editor drives the same session RPC mode drives: one session at a time in the folder pi
//! was started in, `session/new` starting a fresh one, `session/load` reopening a saved one
//! with its history replayed as updates.

mod client_files;
mod commands;
mod config;
mod link;
mod mcp;
mod prompt;
mod replay;
mod server;
mod terminal;
mod ui;
mod updates;

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, InitializeRequest, LoadSessionRequest,
    NewSessionRequest, PromptRequest, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{Agent, Stdio};

use crate::agent_session::AgentSession;
use server::Server;

/// Serves the editor until it closes stdin; returns the exit code.
pub async fn run(session: AgentSession) -> i32 {
    let server = Arc::new(Server::start(session.clone()).await);
    let served = Agent
        .v1()
        .name("pi")
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: InitializeRequest, responder, connection| {
                    server.link.connect(&connection);
                    responder.respond(server.initialize(&request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _connection| {
                // Keys and logins are pi's own (`pi /login`, auth.json, the environment).
                responder.respond(Default::default())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: NewSessionRequest, responder, connection| {
                    server.link.connect(&connection);
                    let server = server.clone();
                    connection.spawn(async move {
                        match server.new_session(request).await {
                            Ok(response) => {
                                responder.respond(response)?;
                                server.announce_commands();
                                Ok(())
                            }
                            Err(error) => responder.respond_with_error(error),
                        }
                    })
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: LoadSessionRequest, responder, connection| {
                    server.link.connect(&connection);
                    let server = server.clone();
                    connection.spawn(async move {
                        match server.load_session(request).await {
                            Ok(response) => {
                                responder.respond(response)?;
                                server.announce_commands();
                                Ok(())
                            }
                            Err(error) => responder.respond_with_error(error),
                        }
                    })
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: PromptRequest, responder, connection| {
                    server.link.connect(&connection);
                    let server = server.clone();
                    connection.spawn(async move {
                        match server.prompt(request).await {
                            Ok(response) => responder.respond(response),
                            Err(error) => responder.respond_with_error(error),
                        }
                    })
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: SetSessionModeRequest, responder, _connection| match server
                    .set_mode(&request)
                {
                    Ok(response) => responder.respond(response),
                    Err(error) => responder.respond_with_error(error),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = server.clone();
                async move |request: SetSessionConfigOptionRequest, responder, _connection| {
                    match server.set_config_option(&request) {
                        Ok(response) => responder.respond(response),
                        Err(error) => responder.respond_with_error(error),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let server = server.clone();
                async move |notification: CancelNotification, _connection| {
                    server.cancel(&notification);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    shut_down(&session).await;
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
