//! The built-in slash commands of interactive mode and how a typed line is read as one.

/// Built-in commands with the descriptions the autocomplete list shows.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("settings", "Open settings menu"),
    ("model", "Select model (opens selector UI)"),
    ("tree", "Navigate session tree (switch branches)"),
    ("thinking", "Set thinking level"),
    ("scoped-models", "Enable/disable models for Ctrl+P cycling"),
    (
        "export",
        "Export session (HTML default, or specify path: .html/.jsonl)",
    ),
    (
        "import",
        "Import a JSONL session, preserving its ID and working directory",
    ),
    (
        "share",
        "Share session via a Radius artifact or a GitHub gist",
    ),
    ("bug", "Report a bug to the Pi developers"),
    ("copy", "Copy last agent message to clipboard"),
    ("name", "Set session display name"),
    ("session", "Show session info and stats"),
    ("changelog", "Show changelog entries"),
    ("hotkeys", "Show all keyboard shortcuts"),
    ("fork", "Create a new fork from a previous user message"),
    (
        "clone",
        "Duplicate the current session at the current position",
    ),
    ("trust", "Save project trust decision for future sessions"),
    ("login", "Configure provider authentication"),
    ("logout", "Remove provider authentication"),
    ("new", "Start a new session"),
    ("compact", "Manually compact the session context"),
    ("resume", "Resume another session"),
    (
        "reload",
        "Reload keybindings, extensions, skills, prompts, themes, and context files",
    ),
    ("quit", "Quit pi"),
    (
        "mcp",
        "Show MCP servers, their state and tools (reconnect <server>)",
    ),
    (
        "local-llm",
        "Install and start a small local model (no API key needed)",
    ),
];

/// A built-in command with its argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Settings,
    ScopedModels,
    Trust,
    Import(Option<String>),
    /// `/share`.
    Share,
    /// `/bug [description]`: the rest of the line, trimmed, as the description to start with.
    Bug(Option<String>),
    Model(Option<String>),
    Thinking(Option<String>),
    Export(Option<String>),
    Copy,
    Name(String),
    Session,
    Changelog,
    /// `/debug` (hidden): writes the rendered screen and the messages to `pi-debug.log`.
    Debug,
    Hotkeys,
    Fork,
    Clone,
    Tree,
    New,
    Compact(Option<String>),
    Resume,
    Reload,
    Login(Option<String>),
    Logout,
    Mcp(Option<String>),
    /// `/llama` (the built-in llama.cpp extension's; arguments are ignored, as there).
    Llama,
    LocalLlm,
    Quit,
}

/// Reads `text` as a built-in command; anything else (prompt templates, skills, plain
/// text) is `None` and goes to the model.
pub fn parse(text: &str) -> Option<Command> {
    let rest = text.strip_prefix('/')?;
    let (name, arg) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let arg_opt = || (!arg.is_empty()).then(|| arg.to_owned());
    Some(match name {
        "settings" if arg.is_empty() => Command::Settings,
        "trust" if arg.is_empty() => Command::Trust,
        "scoped-models" if arg.is_empty() => Command::ScopedModels,
        "import" => Command::Import(path_argument(arg)),
        "share" if arg.is_empty() => Command::Share,
        "bug" => Command::Bug(arg_opt()),
        "model" => Command::Model(arg_opt()),
        "thinking" => Command::Thinking(arg_opt()),
        "export" => Command::Export(path_argument(arg)),
        "copy" if arg.is_empty() => Command::Copy,
        "name" => Command::Name(arg.to_owned()),
        "session" if arg.is_empty() => Command::Session,
        "changelog" if arg.is_empty() => Command::Changelog,
        "debug" if arg.is_empty() => Command::Debug,
        "hotkeys" if arg.is_empty() => Command::Hotkeys,
        "fork" if arg.is_empty() => Command::Fork,
        "clone" if arg.is_empty() => Command::Clone,
        "tree" if arg.is_empty() => Command::Tree,
        "new" if arg.is_empty() => Command::New,
        "compact" => Command::Compact(arg_opt()),
        "resume" if arg.is_empty() => Command::Resume,
        "reload" if arg.is_empty() => Command::Reload,
        "login" => Command::Login(arg_opt()),
        "mcp" => Command::Mcp(arg_opt()),
        "llama" => Command::Llama,
        "logout" if arg.is_empty() => Command::Logout,
        "local-llm" if arg.is_empty() => Command::LocalLlm,
        "quit" | "exit" if arg.is_empty() => Command::Quit,
        _ => return None,
    })
}

/// The first argument as a path: quoted (`"my file.html"`) or up to the first space.
fn path_argument(arg: &str) -> Option<String> {
    let mut chars = arg.chars();
    match chars.next()? {
        quote @ ('"' | '\'') => {
            let inner = &arg[1..];
            inner.find(quote).map(|end| inner[..end].to_owned())
        }
        _ => Some(arg.split_whitespace().next()?.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_commands_and_arguments() {
        assert_eq!(parse("/model"), Some(Command::Model(None)));
        assert_eq!(
            parse("/model sonnet"),
            Some(Command::Model(Some("sonnet".into())))
        );
        assert_eq!(
            parse("/compact keep the plan"),
            Some(Command::Compact(Some("keep the plan".into())))
        );
        assert_eq!(
            parse("/export \"a b.html\" x"),
            Some(Command::Export(Some("a b.html".into())))
        );
        assert_eq!(
            parse("/export out.html"),
            Some(Command::Export(Some("out.html".into())))
        );
        assert_eq!(
            parse("/name  My work "),
            Some(Command::Name("My work".into()))
        );
        assert_eq!(parse("/quit"), Some(Command::Quit));
        assert_eq!(parse("/llama"), Some(Command::Llama));
        assert_eq!(parse("/review this"), None);
        assert_eq!(parse("/new please"), None);
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn share_is_exact_and_bug_takes_the_rest_of_the_line() {
        assert_eq!(parse("/share"), Some(Command::Share));
        assert_eq!(parse("/share now"), None);
        assert_eq!(parse("/bug"), Some(Command::Bug(None)));
        assert_eq!(
            parse("/bug   the link  was wrong "),
            Some(Command::Bug(Some("the link  was wrong".into())))
        );
        let names: Vec<&str> = BUILTIN_COMMANDS.iter().map(|(n, _)| *n).collect();
        let at = names.iter().position(|n| *n == "import").unwrap();
        assert_eq!(&names[at..at + 3], ["import", "share", "bug"]);
    }
}
