//! The slash commands an editor offers under ACP: pi's extension commands, prompt templates
//! and skills (run by the prompt as in every mode), and what a terminal user types for the
//! session itself that ACP has no request for: `/compact` and `/name`.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};

use crate::agent_session::AgentSession;

/// Every command, pi's first.
pub fn available(session: &AgentSession) -> Vec<AvailableCommand> {
    let mut commands: Vec<AvailableCommand> = session
        .slash_commands()
        .into_iter()
        .filter_map(|command| {
            let name = command["name"].as_str()?.to_owned();
            let description = command["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Some(AvailableCommand::new(name, description))
        })
        .collect();
    let hint = |text: &str| {
        AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(text.to_owned()))
    };
    commands.push(
        AvailableCommand::new(
            "compact",
            "Summarize the conversation so far to free context",
        )
        .input(hint("optional instructions for the summary")),
    );
    commands.push(AvailableCommand::new("name", "Name this session").input(hint("<name>")));
    commands
}

/// Runs `/compact` or `/name`; `None` when `text` is not one of them (it goes to the
/// model, or to pi's own command handling), else what to tell the user.
pub async fn run(session: &AgentSession, text: &str) -> Option<String> {
    let body = text.strip_prefix('/')?;
    let (name, args) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    let args = args.trim();
    match name {
        "compact" => {
            let instructions = (!args.is_empty()).then_some(args);
            Some(match session.compact(instructions).await {
                Ok(result) => format!(
                    "Compacted the conversation ({} tokens before).",
                    result.tokens_before
                ),
                Err(error) => format!("Compaction failed: {}", error.0),
            })
        }
        "name" if args.is_empty() => Some("Usage: /name <name>".to_owned()),
        "name" => Some(match session.set_session_name(args) {
            Ok(()) => format!("Session named \"{args}\"."),
            Err(error) => error.0,
        }),
        _ => None,
    }
}
