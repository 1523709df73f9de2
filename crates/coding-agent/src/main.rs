//! The `pi` binary.

use std::io::Read;

use anyhow::Result;
use pi_ai::ThinkingLevel;
use pi_coding_agent::cli::{self, Mode};
use pi_coding_agent::config::{paths, settings::Settings};
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::modes::{print::PrintRun, system_prompt};
use pi_coding_agent::output::Output;
use pi_coding_agent::{VERSION, list_models};

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e:#}");
            1
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32> {
    let args = match cli::parse(std::env::args()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("Error: {message}");
            return Ok(1);
        }
    };
    let mode = Mode::parse(args.mode.as_deref());
    let interactive = Output::stdin_is_tty() && !args.print && mode == Mode::Text;
    let output = Output::new(interactive);
    if args.version {
        output.info(VERSION);
        return Ok(0);
    }
    if args.help {
        output.info(&cli::help_text());
        return Ok(0);
    }

    let agent_dir = paths::agent_dir();
    let cwd = std::env::current_dir()?;
    let registry = ModelRegistry::load(&agent_dir);
    if let Some(error) = registry.load_error() {
        eprintln!("Warning: errors loading models.json:\n{error}");
    }
    if let Some(search) = &args.list_models {
        output.info(&list_models::render(
            &registry,
            Some(search.as_str()).filter(|s| !s.is_empty()),
        ));
        return Ok(0);
    }
    if mode != Mode::Text {
        eprintln!(
            "Error: --mode {} is not available in this build yet",
            args.mode.as_deref().unwrap_or("")
        );
        return Ok(1);
    }
    if interactive {
        eprintln!(
            "Error: interactive mode is not available in this build yet; use -p \"<prompt>\""
        );
        return Ok(1);
    }

    let settings = Settings::load(
        &paths::settings_path(&agent_dir),
        &paths::project_settings_path(&cwd),
    );
    let (model, pattern_level) = match &args.model {
        Some(pattern) => match registry.resolve_pattern(pattern, args.provider.as_deref()) {
            Ok(found) => found,
            Err(message) => {
                eprintln!("Error: {message}");
                return Ok(1);
            }
        },
        None => {
            let provider = args
                .provider
                .as_deref()
                .or(settings.default_provider.as_deref());
            match registry.default_model(provider, settings.default_model.as_deref()) {
                Some(model) => (model, None),
                None => {
                    eprintln!(
                        "No models available. Set an API key environment variable (for example \
ANTHROPIC_API_KEY or OPENAI_API_KEY) or add a provider to {}",
                        paths::models_path(&agent_dir).display()
                    );
                    return Ok(1);
                }
            }
        }
    };
    let thinking = match args
        .thinking
        .as_deref()
        .or(settings.default_thinking_level.as_deref())
    {
        Some(text) => match ThinkingLevel::parse(text) {
            Some(level) => Some(level),
            None => {
                eprintln!(
                    "Error: invalid thinking level \"{text}\" (off, minimal, low, medium, high, xhigh)"
                );
                return Ok(1);
            }
        },
        None => None,
    };
    let thinking =
        pi_ai::clamp_thinking_level(&model, pattern_level.or(thinking).unwrap_or_default());
    let auth = match registry.request_auth(&model, args.api_key.as_deref()) {
        Ok(auth) if auth.api_key.is_some() => auth,
        Ok(_) => {
            eprintln!(
                "No API key found for the selected model ({}). Set the provider's API key \
environment variable, pass --api-key, or configure it in {}",
                model.full_id(),
                paths::auth_path(&agent_dir).display()
            );
            return Ok(1);
        }
        Err(message) => {
            eprintln!("Error: {message}");
            return Ok(1);
        }
    };

    let mut prompts = args.messages.clone();
    if !Output::stdin_is_tty() {
        let mut piped = String::new();
        std::io::stdin().read_to_string(&mut piped)?;
        let piped = piped.trim();
        if !piped.is_empty() {
            match prompts.first_mut() {
                Some(first) => *first = format!("{piped}{first}"),
                None => prompts.push(piped.to_owned()),
            }
        }
    }
    if prompts.is_empty() {
        eprintln!("Error: no prompt given (pi -p \"<prompt>\", or pipe text on stdin)");
        return Ok(1);
    }
    let run = PrintRun {
        model,
        auth,
        thinking,
        system_prompt: system_prompt::build(
            args.system_prompt.as_deref(),
            &args.append_system_prompt,
            &cwd,
        ),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    Ok(runtime.block_on(run.run(prompts)))
}
