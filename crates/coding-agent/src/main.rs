//! The `pi` binary.

use anyhow::Result;
use pi_coding_agent::cli::{self, Mode};
use pi_coding_agent::config::paths;
use pi_coding_agent::launch;
use pi_coding_agent::modes::run::{self, Output as RunOutput, RunPrompt};
use pi_coding_agent::output::Output;
use pi_coding_agent::tool_selection::ToolsFlag;
use pi_coding_agent::{PI_VERSION, sandbox};

fn main() {
    // `pi __sandbox …` is the sandbox launcher the sandboxed bash runs through.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == sandbox::cli::LAUNCHER_ARG)
    {
        let code = sandbox::launcher::run(std::env::args_os().skip(2));
        std::process::exit(i32::from(code));
    }
    // The model catalog parses beside start-up (it is most of a start's work).
    std::thread::spawn(pi_ai::models::warm_catalog);
    // `httpProxy` is in place before the HTTP client is built.
    pi_coding_agent::config::http_proxy::apply(&paths::agent_dir());
    pi_coding_agent::timing::start();
    // What a killed pi left in the temp dir (extension host sockets, editor hand-offs).
    pi_coding_agent::temp_files::sweep_stale();
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
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if let Some(code) = pi_coding_agent::packages::cli::handle(&argv)
        .or_else(|| pi_coding_agent::modes::config::handle(&argv))
        .or_else(|| pi_coding_agent::modes::auth::handle(&argv))
        .or_else(|| pi_coding_agent::mcp::command::handle(&argv))
    {
        return Ok(code);
    }
    let args = match cli::parse(cli::expand_subcommand(std::env::args().collect())) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("Error: {message}");
            return Ok(1);
        }
    };
    if args.offline {
        pi_coding_agent::packages::manager::force_offline();
    }
    let mode = match Mode::parse(args.mode.as_deref()) {
        // An editor's login for pi in ACP mode: the terminal UI, where /login signs in.
        Ok(_) if args.terminal_login => Mode::Text,
        Ok(mode) => mode,
        Err(message) => {
            eprintln!("Error: {message}");
            return Ok(1);
        }
    };
    // pi 1.6's layout and theme flags: a missing value (or another flag) is an error.
    let tui_mode = match args.tui_mode.as_deref() {
        None => None,
        Some(value) => {
            let value = (!value.is_empty()).then_some(value);
            match pi_coding_agent::config::tui_settings::TuiMode::parse_flag(value) {
                Ok(mode) => Some(mode),
                Err(message) => {
                    eprintln!("Error: {message}");
                    return Ok(1);
                }
            }
        }
    };
    if args.use_theme.as_deref() == Some("") {
        eprintln!("Error: --use-theme requires a theme name");
        return Ok(1);
    }
    if args.provider.is_some()
        && args.model.is_none()
        && args.list_models.is_none()
        && !args.help
        && !args.version
    {
        eprintln!(
            "Error: --provider requires --model (for example: --provider {} --model <pattern>)",
            args.provider.as_deref().unwrap_or_default()
        );
        return Ok(1);
    }
    let tools_flag = match args.tools.as_deref().map(ToolsFlag::parse).transpose() {
        Ok(flag) => flag,
        Err(message) => {
            eprintln!("Error: {message}");
            return Ok(1);
        }
    };
    let interactive = Output::stdin_is_tty() && !args.print && mode == Mode::Text;
    // pi 1.5 prints --version, --help and the export path on stdout.
    if args.version {
        println!("{PI_VERSION}");
        return Ok(0);
    }
    if let Some(file) = &args.export {
        let cwd = std::env::current_dir()?;
        let out = args.messages.first().map(std::path::Path::new);
        return Ok(pi_coding_agent::export::export_command(
            std::path::Path::new(file),
            out,
            &cwd,
        ));
    }

    let agent_dir = paths::agent_dir();
    if let Err(e) = pi_coding_agent::config::auth::ensure_auth_file(&paths::auth_path(&agent_dir)) {
        eprintln!(
            "Warning: could not create {}: {e}",
            paths::auth_path(&agent_dir).display()
        );
    }
    let Some(cwd) = paths::startup_cwd()? else {
        return Ok(1);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let _guard = runtime.enter();
    // ACP answers the editor's `initialize` at once and builds the session meanwhile.
    let acp = (mode == Mode::Acp).then(|| pi_coding_agent::modes::acp::Starting::begin(&args));
    let launched = match launch::launch(
        runtime.handle(),
        &launch::LaunchOptions {
            args: &args,
            cwd,
            mode,
            interactive,
            tools_flag,
        },
    ) {
        Ok(launched) => launched,
        Err(code) => return Ok(code),
    };
    let launch::Launched {
        session: agent_session,
        agent_dir,
        prompts,
        images,
        startup_warnings,
        package_themes,
        project_trusted,
        trust_unasked,
        no_model,
        sandbox_label,
    } = launched;
    let rpc = matches!(mode, Mode::Rpc | Mode::Acp);
    if rpc {
        let transcript = agent_session.clone();
        let code = if let Some(acp) = acp {
            runtime.block_on(acp.run(pi_coding_agent::modes::acp::Opened {
                session: agent_session,
                trust_unasked,
                project_trusted,
                sandboxed: sandbox_label.is_some(),
            }))
        } else {
            runtime.block_on(pi_coding_agent::modes::rpc::run(agent_session))
        };
        runtime.block_on(transcript.close_mcp());
        runtime.block_on(pi_coding_agent::config::oauth_refresh::settle());
        std::mem::forget(transcript);
        // The stdin reader may still wait on a read (an extension ended pi while stdin is
        // open): the process exits without waiting for it.
        runtime.shutdown_background();
        return Ok(code);
    }
    if interactive {
        let mut initial_prompts: Vec<RunPrompt> = prompts
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|text| RunPrompt {
                text,
                images: Vec::new(),
            })
            .collect();
        if let Some(first) = initial_prompts.first_mut() {
            first.images = images;
        }
        let options = pi_coding_agent::modes::interactive::InteractiveOptions {
            agent_dir,
            initial_prompts,
            open_resume_picker: args.resume,
            warnings: startup_warnings,
            version: PI_VERSION.to_owned(),
            theme_paths: args.theme.clone(),
            no_themes: args.no_themes,
            package_themes,
            project_trusted,
            no_model,
            sandbox_label,
            tui_mode,
            use_theme: args.use_theme.clone(),
            keyboard: Default::default(),
        };
        let closing = agent_session.clone();
        let code = runtime.block_on(pi_coding_agent::modes::interactive::run(
            agent_session,
            options,
        ));
        runtime.block_on(closing.close_mcp());
        runtime.block_on(pi_coding_agent::config::oauth_refresh::settle());
        return Ok(code);
    }
    let mut inputs: Vec<RunPrompt> = prompts
        .into_iter()
        .map(|text| RunPrompt {
            text,
            images: Vec::new(),
        })
        .collect();
    if let Some(first) = inputs.first_mut() {
        first.images = images;
    }
    let output = if mode == Mode::Json {
        RunOutput::Json
    } else {
        RunOutput::Text
    };
    pi_coding_agent::timing::mark("agent session ready");
    let transcript = agent_session.clone();
    let code = runtime.block_on(run::run(agent_session, inputs, output));
    runtime.block_on(transcript.close_mcp());
    // A token refresh still running is saved before pi exits (its old refresh token is spent).
    runtime.block_on(pi_coding_agent::config::oauth_refresh::settle());
    pi_coding_agent::timing::mark("run finished");
    // The process exits next: freeing a large transcript entry by entry would only cost time.
    std::mem::forget(transcript);
    Ok(code)
}
