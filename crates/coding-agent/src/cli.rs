//! Command-line arguments, with the TypeScript pi's flag names.

use clap::Parser;

/// Output mode of a non-interactive run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Text,
    Json,
    Rpc,
    /// The Agent Client Protocol over stdio, for editors.
    Acp,
}

impl Mode {
    /// Parses `--mode`; an unknown value is pi 1.5's error.
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value {
            None | Some("text") => Ok(Self::Text),
            Some("json") => Ok(Self::Json),
            Some("rpc") => Ok(Self::Rpc),
            Some("acp") => Ok(Self::Acp),
            Some(other) => Err(format!(
                "Invalid mode \"{other}\". Valid values: text, json, rpc"
            )),
        }
    }
}

/// `pi [options] [--] [@files...] [messages...]`
#[derive(Debug, Clone, Parser, Default)]
#[command(
    name = "pi",
    disable_help_flag = true,
    disable_version_flag = true,
    // A flag given twice takes its last value, as pi's own parser does.
    args_override_self = true
)]
pub struct Args {
    /// Provider to search for `--model` (requires `--model`).
    #[arg(long, allow_hyphen_values = true)]
    pub provider: Option<String>,
    /// Model pattern or id (`provider/id`, optionally `:<thinking>`).
    #[arg(long, allow_hyphen_values = true)]
    pub model: Option<String>,
    /// API key (defaults to auth.json, then environment variables).
    #[arg(long = "api-key", allow_hyphen_values = true)]
    pub api_key: Option<String>,
    /// System prompt replacing the default.
    #[arg(long = "system-prompt", allow_hyphen_values = true)]
    pub system_prompt: Option<String>,
    /// Text or file appended to the system prompt (repeatable).
    #[arg(long = "append-system-prompt", allow_hyphen_values = true)]
    pub append_system_prompt: Vec<String>,
    /// Output mode: text (default), json or rpc.
    #[arg(long)]
    pub mode: Option<String>,
    /// Non-interactive: process the prompt and exit.
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Keep the session in memory only.
    #[arg(long = "no-session")]
    pub no_session: bool,
    /// Continue the most recent session of this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,
    /// List sessions to resume (non-interactive: prints them).
    #[arg(short = 'r', long = "resume")]
    pub resume: bool,
    /// Session file path or id prefix.
    #[arg(long, allow_hyphen_values = true)]
    pub session: Option<String>,
    /// Fork a session file or id prefix into a new session.
    #[arg(long, allow_hyphen_values = true)]
    pub fork: Option<String>,
    /// The cwd's session with this exact id, created when missing.
    #[arg(long = "session-id", allow_hyphen_values = true)]
    pub session_id: Option<String>,
    /// Directory for session storage and lookup.
    #[arg(long = "session-dir", allow_hyphen_values = true)]
    pub session_dir: Option<String>,
    /// Comma-separated allowlist of tool names or `*` patterns, or `+name`/`-name` edits
    /// of the defaults.
    #[arg(short = 't', long, allow_hyphen_values = true)]
    pub tools: Option<String>,
    /// Comma-separated denylist of tool names or `*` patterns, applied last.
    #[arg(long = "exclude-tools", allow_hyphen_values = true)]
    pub exclude_tools: Option<String>,
    /// The session's display name (a `session_info` entry).
    #[arg(short = 'n', long, allow_hyphen_values = true)]
    pub name: Option<String>,
    /// Disable all tools.
    #[arg(long = "no-tools")]
    pub no_tools: bool,
    /// Disable the built-in tools.
    #[arg(long = "no-builtin-tools")]
    pub no_builtin_tools: bool,
    /// Do not load AGENTS.md / CLAUDE.md files.
    #[arg(long = "no-context-files")]
    pub no_context_files: bool,
    /// Built-in MCP off for the run: no servers connect, no MCP tools.
    #[arg(long = "no-mcp")]
    pub no_mcp: bool,
    /// Load an extension file or directory (repeatable).
    #[arg(
        short = 'e',
        long = "extension",
        value_name = "path",
        allow_hyphen_values = true
    )]
    pub extension: Vec<String>,
    /// Do not discover extensions (`-e` paths still load).
    #[arg(long = "no-extensions")]
    pub no_extensions: bool,
    /// Trust project-local files (`.pi/extensions`, project settings) for this run.
    #[arg(short = 'a', long = "approve")]
    pub approve: bool,
    /// Ignore project-local files for this run.
    #[arg(long = "no-approve")]
    pub no_approve: bool,
    /// Load a skill file or directory (repeatable; also with `--no-skills`).
    #[arg(long = "skill", value_name = "path", allow_hyphen_values = true)]
    pub skill: Vec<String>,
    /// Do not discover skills (`--skill` paths still load).
    #[arg(long = "no-skills")]
    pub no_skills: bool,
    /// Load a prompt template file or directory (repeatable).
    #[arg(
        long = "prompt-template",
        value_name = "path",
        allow_hyphen_values = true
    )]
    pub prompt_template: Vec<String>,
    /// Do not discover prompt templates (`--prompt-template` paths still load).
    #[arg(long = "no-prompt-templates")]
    pub no_prompt_templates: bool,
    /// Load a theme file or directory (repeatable; also with `--no-themes`).
    #[arg(long = "theme", value_name = "path", allow_hyphen_values = true)]
    pub theme: Vec<String>,
    /// Do not discover themes (`--theme` paths still load).
    #[arg(long = "no-themes")]
    pub no_themes: bool,
    /// pi 1.6: the interactive theme of this run (`name` or `dark/light` names).
    #[arg(long = "use-theme", value_name = "name[/name]", num_args = 0..=1, default_missing_value = "")]
    pub use_theme: Option<String>,
    /// pi 1.6: `fullscreen` (default) or `regular` terminal mode for this run.
    #[arg(long = "tui-mode", value_name = "mode", num_args = 0..=1, default_missing_value = "")]
    pub tui_mode: Option<String>,
    /// Comma-separated model patterns for model cycling.
    #[arg(long, value_name = "patterns", allow_hyphen_values = true)]
    pub models: Option<String>,
    /// Export a session file to HTML and exit (the first message names the output file).
    #[arg(long, allow_hyphen_values = true)]
    pub export: Option<String>,
    /// Thinking level: off, minimal, low, medium, high, xhigh, max.
    #[arg(long, allow_hyphen_values = true)]
    pub thinking: Option<String>,
    /// List models (with optional fuzzy search).
    #[arg(long = "list-models", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,
    /// Disable startup network operations.
    #[arg(long)]
    pub offline: bool,
    /// Confine the built-in tools: writes only below the cwd, the temp dir and the paths of
    /// settings `sandbox.writePaths` (Landlock; refused where the kernel lacks it).
    #[arg(long)]
    pub sandbox: bool,
    /// Force verbose startup.
    #[arg(long)]
    pub verbose: bool,
    /// ACP's terminal login: pi's terminal UI whatever the mode, which an editor runs (its
    /// agent command with this flag added) for the user to sign in with /login.
    #[arg(long = "terminal-login", hide = true)]
    pub terminal_login: bool,
    /// Show help.
    #[arg(short = 'h', long)]
    pub help: bool,
    /// Show the version.
    #[arg(short = 'v', long)]
    pub version: bool,
    /// Messages to send (each further message is sent after the previous reply).
    pub messages: Vec<String>,
    /// Options pi does not know: flags an extension may register (`--plan`, `--name x`),
    /// checked once extensions are loaded.
    #[arg(skip)]
    pub extension_flags: Vec<(String, Option<String>)>,
}

/// The TypeScript pi's multi-letter short flags, as their long forms.
fn expand_short_flags(arg: String) -> String {
    match arg.as_str() {
        "-nt" => "--no-tools".into(),
        "-nbt" => "--no-builtin-tools".into(),
        "-nc" => "--no-context-files".into(),
        "-ne" => "--no-extensions".into(),
        "-ns" => "--no-skills".into(),
        "-np" => "--no-prompt-templates".into(),
        "-na" => "--no-approve".into(),
        "-xt" => "--exclude-tools".into(),
        _ => arg,
    }
}

/// Takes out the `--name` options pi does not know, as the TypeScript pi does: `--x=v`
/// and `--x v` (when `v` starts with neither `-` nor `@`) carry a value, else the flag
/// stands alone. The multi-letter short flags become their long forms; the value of an
/// option that takes one is passed on untouched, even when it starts with `-`
/// (`--tools -bash,+grep`), as the TypeScript pi reads it.
fn split_unknown_flags(args: Vec<String>) -> (Vec<String>, Vec<(String, Option<String>)>) {
    use clap::CommandFactory;
    let command = Args::command();
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    let known: Vec<(String, bool)> = command
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| (l.to_owned(), takes_value(a))))
        .collect();
    let short_with_value: Vec<String> = command
        .get_arguments()
        .filter(|a| takes_value(a))
        .filter_map(|a| a.get_short().map(|c| format!("-{c}")))
        .collect();
    let mut kept = Vec::with_capacity(args.len());
    let mut unknown = Vec::new();
    let mut iter = args.into_iter().enumerate().peekable();
    while let Some((index, arg)) = iter.next() {
        if index == 0 {
            kept.push(arg);
            continue;
        }
        if arg == "--" {
            // Everything after `--` is a message or a file.
            kept.push(arg);
            kept.extend(iter.map(|(_, rest)| rest));
            break;
        }
        let arg = expand_short_flags(arg);
        if short_with_value.contains(&arg) {
            kept.push(arg);
            if let Some((_, value)) = iter.next() {
                kept.push(value);
            }
            continue;
        }
        let Some(long) = arg.strip_prefix("--").filter(|l| !l.is_empty()) else {
            kept.push(arg);
            continue;
        };
        let name = long.split('=').next().unwrap_or(long).to_owned();
        if let Some((_, takes_value)) = known.iter().find(|(k, _)| *k == name) {
            let inline = long.contains('=');
            kept.push(arg);
            if *takes_value
                && !inline
                && let Some((_, value)) = iter.next()
            {
                kept.push(value);
            }
            continue;
        }
        if let Some((flag, value)) = long.split_once('=') {
            unknown.push((flag.to_owned(), Some(value.to_owned())));
            continue;
        }
        let takes_next = iter
            .peek()
            .is_some_and(|(_, next)| !next.starts_with('-') && !next.starts_with('@'));
        let value = if takes_next {
            iter.next().map(|(_, v)| v)
        } else {
            None
        };
        unknown.push((name, value));
    }
    (kept, unknown)
}

/// `pi acp [options]` is `pi --mode acp [options]`: the subcommand form editors' agent
/// lists use for agents that speak ACP themselves (as `goose acp` and `opencode acp`).
pub fn expand_subcommand(mut argv: Vec<String>) -> Vec<String> {
    if argv.get(1).map(String::as_str) == Some("acp") {
        argv.splice(1..2, ["--mode".to_owned(), "acp".to_owned()]);
    }
    argv
}

/// Parses arguments; an unknown short option is reported as the TypeScript pi words it,
/// unknown long options are kept for extension flags.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let (kept, unknown) = split_unknown_flags(args.into_iter().collect());
    let mut parsed = Args::try_parse_from(kept).map_err(|e| {
        use clap::error::{ContextKind, ErrorKind};
        match e.kind() {
            ErrorKind::UnknownArgument => {
                let arg = e
                    .get(ContextKind::InvalidArg)
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                format!("Unknown option: {arg}")
            }
            _ => e
                .render()
                .to_string()
                .trim()
                .trim_start_matches("error: ")
                .to_owned(),
        }
    })?;
    parsed.extension_flags = unknown;
    Ok(parsed)
}

/// The help lines of extension flags (`--name <value>   description`).
pub fn extension_flags_help(flags: &[crate::extensions::FlagDef]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = flags
        .iter()
        .map(|flag| {
            let value = if flag.kind == crate::extensions::registry::FlagType::String {
                " <value>"
            } else {
                ""
            };
            let description = flag
                .description
                .clone()
                .unwrap_or_else(|| format!("Registered by {}", flag.extension_path));
            format!("{:<30}{description}", format!("  --{}{value}", flag.name))
        })
        .collect();
    format!("\n\nExtension CLI Flags:\n{}", lines.join("\n"))
}

/// The `--help` text.
pub fn help_text(extension_flags: &str) -> String {
    format!(
        "pi - AI coding assistant with read, bash, edit, write tools

Usage:
  pi [options] [--] [@files...] [messages...]

Commands:
  pi install <source> [-l]     Install extension source and add to settings
  pi remove <source> [-l]      Remove extension source from settings
  pi uninstall <source> [-l]   Alias for remove
  pi update [source|self|pi]   Update pi or extensions
  pi list                      List installed extensions from settings
  pi config [-l]               Open TUI to enable/disable package resources
  pi auth <command>            Log in or out, print credentials, or check provider readiness
  pi mcp <command>             Manage MCP servers
  pi <command> --help          Show help for install/remove/uninstall/update/list/config/auth/mcp

Options:
  --provider <name>              Provider to search for --model (requires --model)
  --model <pattern>              Model pattern or ID (supports \"provider/id\" and optional \":<thinking>\")
  --models <patterns>            Comma-separated model patterns for model cycling
  --api-key <key>                API key (defaults to auth.json, then env vars)
  --system-prompt <text>         System prompt (default: coding assistant prompt)
  --append-system-prompt <text>  Append text or file contents to the system prompt (repeatable)
  --mode <mode>                  Output mode: text (default), json, or rpc
  --print, -p                    Non-interactive mode: process prompt and exit
  --continue, -c                 Continue the most recent session
  --resume, -r                   List sessions to resume
  --session <path|id>            Use a specific session file or id prefix
  --session-id <id>              Use the current directory's existing session with the ID, creating it otherwise
  --fork <path|id>               Fork a session into a new one
  --session-dir <dir>            Directory for session storage and lookup
  --no-session                   Don't save session (ephemeral)
  --name, -n <name>              Set session display name
  --tools, -t <tools>            Comma-separated allowlist of tool names or patterns (*) to enable
                                 Only +name/-name entries add to or remove from the defaults
  --exclude-tools, -xt <tools>   Comma-separated denylist of tool names or patterns (*) to disable
  --no-tools, -nt                Disable all tools
  --no-builtin-tools, -nbt       Disable the built-in tools
  --no-context-files, -nc        Don't load AGENTS.md / CLAUDE.md
  --no-mcp                       Disable built-in MCP support: no servers connect and no MCP tools
  --extension, -e <path>         Load an extension file or directory (repeatable)
  --no-extensions, -ne           Disable extension discovery and built-in extensions (explicit -e paths still work)
  --approve, -a                  Trust project-local files (.pi/extensions, …) for this run
  --no-approve, -na              Ignore project-local files for this run
  --skill <path>                 Load a skill file or directory (repeatable)
  --no-skills, -ns               Don't discover skills (--skill paths still load)
  --prompt-template <path>       Load a prompt template file or directory (repeatable)
  --no-prompt-templates, -np     Don't discover prompt templates (--prompt-template paths still load)
  --theme <path>                 Load a theme file or directory (repeatable)
  --use-theme <name[/name]>      Set the initial interactive theme for this run
  --no-themes                    Don't discover themes (--theme paths still load)
  --thinking <level>             Set thinking level: off, minimal, low, medium, high, xhigh, max
  --export <file>                Export session file to HTML and exit
  --list-models [search]         List available models (with optional fuzzy search)
  --offline                      Disable startup network operations (same as PI_OFFLINE=1)
  --sandbox                      Confine bash and the file tools: writes only in the cwd,
                                 the temp dir and settings sandbox.writePaths (Landlock)
  --verbose                      Force verbose startup
  --tui-mode <mode>              TUI mode: fullscreen (default) or regular
  --                             End option parsing; treat remaining arguments as messages/files
  --help, -h                     Show this help
  --version, -v                  Show version number

Extensions can register additional flags (e.g., --plan from plan-mode extension).{extension_flags}

Examples:
  pi -p \"List all .rs files in src/\"
  pi --model anthropic/claude-sonnet-4-5:high -p \"Solve this problem\"
  echo \"Summarize this\" | pi -p

Environment Variables:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, GROQ_API_KEY, CEREBRAS_API_KEY, XAI_API_KEY,
  DEEPSEEK_API_KEY, OPENROUTER_API_KEY, MISTRAL_API_KEY, ...  Provider API keys
  PI_CODING_AGENT_DIR   Config directory (default: ~/.pi/agent)
  PI_CACHE_RETENTION    Set to \"long\" for extended prompt caching",
        extension_flags = extension_flags
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        std::iter::once("pi")
            .chain(list.iter().copied())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_repeated_flag_takes_its_last_value_and_lists_keep_every_one() {
        let parsed = parse(args(&[
            "--model", "a/one", "--model", "b/two", "-e", "x.ts", "-e", "y.ts",
        ]))
        .unwrap();
        assert_eq!(parsed.model.as_deref(), Some("b/two"));
        assert_eq!(parsed.extension, ["x.ts", "y.ts"]);
    }

    #[test]
    fn the_acp_subcommand_is_acp_mode_and_a_later_acp_is_a_message() {
        let parsed = parse(expand_subcommand(args(&["acp", "--model", "a/one"]))).unwrap();
        assert_eq!(parsed.mode.as_deref(), Some("acp"));
        assert_eq!(parsed.model.as_deref(), Some("a/one"));
        let parsed = parse(expand_subcommand(args(&["-p", "acp"]))).unwrap();
        assert_eq!(parsed.mode, None);
        assert_eq!(parsed.messages, ["acp"]);
    }

    #[test]
    fn the_terminal_login_flag_is_known_after_the_acp_forms() {
        for argv in [
            &["acp", "--terminal-login"][..],
            &["--mode", "acp", "--terminal-login"],
        ] {
            let parsed = parse(expand_subcommand(args(argv))).unwrap();
            assert!(parsed.terminal_login);
            assert!(parsed.extension_flags.is_empty());
        }
    }
}
