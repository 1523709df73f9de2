//! Building a session from pi's command line: extensions, the model registry, settings,
//! the session file, the model, tools, resources and MCP, as every mode starts. ACP mode
//! also builds one for each folder an editor opens a session in.

use std::io::Read;
use std::path::PathBuf;

use pi_ai::{ImageContent, ThinkingLevel};
use tokio::runtime::Handle;

use crate::agent_session::{AgentSession, AgentSessionConfig, ExtensionSetup, McpToolFilter};
use crate::cli::{self, Args, Mode};
use crate::config::paths;
use crate::config::settings_store::SettingsStore;
use crate::mcp::runtime::McpRuntime;
use crate::model_registry::ModelRegistry;
use crate::modes::interactive::startup_select;
use crate::output::Output;
use crate::packages::resources::ResourceType;
use crate::session::select::{self, SessionChoice};
use crate::tool_selection::{self, ToolRequest, ToolsFlag};
use crate::{extension_loader, list_models, sandbox, scope, tools};

/// What to build: the parsed command line, the folder, the mode.
pub struct LaunchOptions<'a> {
    pub args: &'a Args,
    pub cwd: PathBuf,
    pub mode: Mode,
    /// Interactive mode (stdin a terminal, no `-p`): asks its startup questions.
    pub interactive: bool,
    pub tools_flag: Option<ToolsFlag>,
}

/// A session ready to run, with what the modes show around it.
pub struct Launched {
    pub session: AgentSession,
    pub agent_dir: PathBuf,
    /// The messages to send (the first with piped stdin and `@file` text before it).
    pub prompts: Vec<String>,
    /// The `@file` images, for the first message.
    pub images: Vec<ImageContent>,
    /// Resource diagnostics (interactive mode lists them).
    pub startup_warnings: Vec<String>,
    /// Themes of enabled packages.
    pub package_themes: Vec<PathBuf>,
    pub project_trusted: bool,
    /// The project's trust was the user's to decide, but this mode could not ask.
    pub trust_unasked: bool,
    /// No model had a key: the session runs on a placeholder.
    pub no_model: bool,
    pub sandbox_label: Option<String>,
}

/// Builds the session the command line asks for. `Err` is the exit code of a run that
/// ends here (an error said on stderr, or `--help`, `--list-models`, `--resume` listed).
/// Blocks on `handle`: call it outside async code (or from a blocking task).
pub fn launch(handle: &Handle, options: &LaunchOptions) -> Result<Launched, i32> {
    let LaunchOptions {
        args,
        cwd,
        mode,
        interactive,
        tools_flag,
    } = options;
    let (cwd, mode, interactive, tools_flag) =
        (cwd.clone(), *mode, *interactive, tools_flag.clone());
    let agent_dir = paths::agent_dir();
    let output = Output::new(interactive);
    let rpc = matches!(mode, Mode::Rpc | Mode::Acp);
    // Extensions see ACP mode as RPC mode: dialogs reach a client that answers them.
    let mode_name = if matches!(mode, Mode::Rpc | Mode::Acp) {
        "rpc"
    } else if mode == Mode::Json {
        "json"
    } else if interactive {
        "interactive"
    } else {
        "print"
    };
    // The model catalog parses while node loads the extensions (it needs nothing of theirs:
    // the providers they register are added below).
    let registry_loading = std::thread::spawn({
        let agent_dir = agent_dir.clone();
        move || ModelRegistry::load(&agent_dir)
    });
    let loaded = handle.block_on(extension_loader::load(
        extension_loader::LoadOptions {
            cwd: cwd.clone(),
            agent_dir: agent_dir.clone(),
            mode: mode_name.to_owned(),
            cli_paths: args.extension.clone(),
            no_extensions: args.no_extensions,
            approve: if args.approve {
                Some(true)
            } else if args.no_approve {
                Some(false)
            } else {
                None
            },
            ask_trust: interactive.then(|| {
                let agent_dir = agent_dir.clone();
                Box::new(move |cwd: &std::path::Path| {
                    let options = crate::trust::prompt_options(cwd);
                    let labels: Vec<String> = options.iter().map(|o| o.label.clone()).collect();
                    let title = crate::trust::prompt_title(cwd);
                    let index = startup_select::select(&agent_dir, cwd, &title, &labels)?;
                    options.into_iter().nth(index)
                }) as extension_loader::AskTrust
            }),
            theme: "dark".to_owned(),
        },
        Vec::new(),
    ));
    for warning in &loaded.warnings {
        eprintln!("{warning}");
    }
    if let Some(fatal) = &loaded.fatal {
        eprintln!("{fatal}");
        handle.block_on(loaded.runtime.shutdown());
        return Err(1);
    }
    let extensions = loaded.runtime;
    let loaded_trusted = loaded.project_trusted;
    let trust_unasked = loaded.trust_unasked;
    let packages = loaded.packages;
    let resolved_packages = loaded.resolved_packages;
    if args.help {
        println!(
            "{}",
            cli::help_text(&cli::extension_flags_help(&extensions.flags()))
        );
        handle.block_on(extensions.shutdown());
        return Err(0);
    }
    match extension_loader::resolve_flags(&extensions, &args.extension_flags) {
        Ok(values) => extensions.set_flags(&values),
        Err(message) => {
            eprintln!("Error: {message}");
            handle.block_on(extensions.shutdown());
            return Err(1);
        }
    }
    let mut registry = registry_loading
        .join()
        .unwrap_or_else(|_| ModelRegistry::load(&agent_dir));
    // pi 1.6.0's built-in extensions: settings `-builtin:<name>`, `--no-extensions`, `-e`.
    let builtins = crate::builtins::BuiltinSettings::load(
        &paths::settings_path(&agent_dir),
        &paths::project_settings_path(&cwd),
        loaded_trusted,
        &args.extension,
        args.no_extensions,
    );
    if !builtins.enabled(crate::llama::PROVIDER_ID) {
        registry.disable_llama();
    }
    // Providers extensions registered while loading (the TypeScript pi queues them until
    // the session exists; calls made later are not applied yet).
    for provider in extensions.providers() {
        let registered = crate::extensions::provider_stream::register_stream_provider(
            &extensions,
            &provider.name,
            &provider.config,
        )
        .and_then(|()| registry.register_provider(&provider.name, &provider.config));
        if let Err(e) = registered {
            eprintln!(
                "Warning: extension {} could not register provider {}: {e}",
                provider.extension_path, provider.name
            );
        }
    }
    for def in extensions.virtual_models() {
        if let Err(e) = registry.register_virtual_model(&def) {
            eprintln!("Warning: extension {} error: {e}", def.extension_path);
        }
    }
    if let Some(error) = registry.load_error() {
        eprintln!("Warning: errors loading models.json:\n{error}");
    }
    if let Some(search) = &args.list_models {
        output.info(&list_models::render(
            &registry,
            Some(search.as_str()).filter(|s| !s.is_empty()),
        ));
        return Err(0);
    }

    let settings_store = std::sync::Arc::new(SettingsStore::load_for_trust(
        &paths::settings_path(&agent_dir),
        &paths::project_settings_path(&cwd),
        loaded_trusted,
    ));
    let settings = settings_store.get();
    // As pi 1.6.0, the project's `sessionDir` is read before (and whatever) its trust.
    let session_dir_setting = crate::config::settings::Settings::load(
        &paths::settings_path(&agent_dir),
        &paths::project_settings_path(&cwd),
    )
    .session_dir;
    crate::client_identity::install(&settings);
    if args.session_id.is_some() {
        let conflict = if args.session.is_some() {
            Some("--session")
        } else if args.continue_session {
            Some("--continue")
        } else if args.resume {
            Some("--resume")
        } else {
            None
        };
        if let Some(flag) = conflict {
            eprintln!("Error: --session-id cannot be combined with {flag}");
            return Err(1);
        }
    }
    let choice = SessionChoice {
        no_session: args.no_session,
        continue_recent: args.continue_session,
        session: args.session.as_deref(),
        fork: args.fork.as_deref(),
        session_id: args.session_id.as_deref(),
        session_dir: args.session_dir.as_deref(),
        settings_dir: session_dir_setting.as_deref(),
    };
    if args.resume && !rpc && !interactive {
        let dir = select::session_dir(&choice, &agent_dir, &cwd);
        for line in select::list(&dir) {
            println!("{line}");
        }
        return Err(0);
    }

    let (file_paths, mut prompts): (Vec<String>, Vec<String>) = args
        .messages
        .iter()
        .cloned()
        .partition(|m| m.starts_with('@') && m.len() > 1);
    if rpc && !file_paths.is_empty() {
        eprintln!("Error: @file arguments are not supported in RPC mode");
        return Err(1);
    }
    crate::timing::mark("opening the session");
    // Built beside session loading, ready when the first request goes out.
    let _ = pi_ai::http::warm_shared_client();
    let session = match select::choose(&choice, &agent_dir, &cwd) {
        Ok(session) => session,
        Err(message) => {
            eprintln!("Error: {message}");
            return Err(1);
        }
    };
    let (mut session, session_cwd) = crate::session::missing_cwd::resolve(
        session,
        &cwd,
        interactive,
        || select::session_dir(&choice, &agent_dir, &cwd),
        Box::new(|title: &str, options: &[String]| {
            startup_select::select(&agent_dir, &cwd, title, options)
        }),
    )?;
    // `--name`: in a new session this is the root entry, before the model change (pi 1.5).
    if let Some(name) = args.name.as_deref().filter(|n| !n.trim().is_empty())
        && let Err(e) = session.append_session_info(name.trim())
    {
        eprintln!("Warning: {e}");
    }
    for warning in session.warnings() {
        eprintln!(
            "Warning: session {}: {warning}",
            session
                .session_file()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    crate::timing::mark("session opened");
    let mut restored = session.branch_settings();
    // A routed response names its physical model; a still-registered virtual model stays
    // the selection (pi 1.6.0's getBranchSelection).
    restored.model = crate::virtual_models::branch_selection(&session.branch_entries(), |p, i| {
        registry.find(p, i).cloned()
    })
    .or(restored.model);
    let resuming = restored.has_messages;
    let has_thinking_entry = session.branch_entries().iter().any(|e| {
        matches!(
            e.kind,
            crate::session::EntryKind::ThinkingLevelChange { .. }
        )
    });

    let scoped_models = match args.models.as_deref() {
        Some(patterns) => scope::resolve(&registry, patterns.split(',')),
        None => match &settings.enabled_models {
            Some(patterns) => scope::resolve(&registry, patterns.iter().map(String::as_str)),
            None => Vec::new(),
        },
    };
    // A new session without --model starts on the scope's saved default or first model.
    let from_scope = (!resuming)
        .then(|| {
            scope::startup_model(
                &scoped_models,
                settings.default_provider.as_deref(),
                settings.default_model.as_deref(),
            )
        })
        .flatten();
    let mut no_model = false;
    let (model, pattern_level) = match (&args.model, from_scope) {
        (Some(pattern), _) => match registry.resolve_cli(
            pattern,
            args.provider.as_deref(),
            args.thinking.as_deref().and_then(ThinkingLevel::parse),
        ) {
            Ok((model, level, warning)) => {
                if let Some(warning) = warning {
                    eprintln!("Warning: {warning}");
                }
                (model, level)
            }
            Err(message) => {
                eprintln!("Error: {message}");
                return Err(1);
            }
        },
        (None, Some(scoped)) => (scoped.model.clone(), scoped.thinking_level),
        (None, None) => {
            let from_session = restored
                .model
                .as_ref()
                .filter(|_| resuming)
                .and_then(|(provider, id)| registry.find(provider, id))
                .filter(|m| registry.has_auth(&m.provider))
                .cloned();
            let provider = args
                .provider
                .as_deref()
                .or(settings.default_provider.as_deref());
            let lost = restored
                .model
                .as_ref()
                .filter(|_| resuming && from_session.is_none());
            match from_session
                .or_else(|| registry.default_model(provider, settings.default_model.as_deref()))
            {
                Some(model) => {
                    // pi 1.6 says so in every mode (interactive shows its startup notes).
                    if let Some((provider, id)) = lost
                        && !interactive
                    {
                        eprintln!(
                            "Warning: Could not restore model {provider}/{id}. Using {}/{}",
                            model.provider, model.id
                        );
                    }
                    (model, None)
                }
                // A first run: the UI opens and says how to go on, with a placeholder model
                // that has no key until the user picks one.
                None if interactive && !registry.all().is_empty() => {
                    no_model = true;
                    let placeholder = registry
                        .find("anthropic", "claude-opus-4-7")
                        .unwrap_or(&registry.all()[0]);
                    (placeholder.clone(), None)
                }
                // The other modes start too (pi 1.6.0), on a placeholder model: RPC clients
                // can still ask for state and models and have the user sign in, and a prompt
                // says that no key was found.
                None => {
                    eprintln!("Warning: {}", crate::auth_guidance::no_models_available());
                    no_model = true;
                    (crate::auth_guidance::unknown_model(), None)
                }
            }
        }
    };
    let cli_thinking = match args.thinking.as_deref() {
        Some(text) => match ThinkingLevel::parse(text) {
            Some(level) => Some(level),
            None => {
                eprintln!(
                    "Error: invalid thinking level \"{text}\" (off, minimal, low, medium, high, xhigh, max)"
                );
                return Err(1);
            }
        },
        None => None,
    };
    let settings_thinking = settings
        .model_thinking_levels
        .as_ref()
        .and_then(|levels| levels.get(&model.full_id()))
        .or(settings.default_thinking_level.as_ref())
        .and_then(|level| ThinkingLevel::parse(level));
    let session_thinking = (resuming && has_thinking_entry)
        .then(|| ThinkingLevel::parse(&restored.thinking_level))
        .flatten();
    // --thinking wins over a pattern's `:level`, as in pi (dist/main.js buildSessionOptions).
    let thinking = cli_thinking
        .or(pattern_level)
        .or(session_thinking)
        .or(settings_thinking)
        // pi's DEFAULT_THINKING_LEVEL (dist/core/defaults.js), clamped to the model later.
        .unwrap_or(ThinkingLevel::Medium);
    // A model without a key starts too (pi 1.6.0): its first prompt reports that no key
    // was found, and RPC clients or /model can switch to a provider that has one.
    if let Err(message) = registry.request_auth(&model, args.api_key.as_deref()) {
        eprintln!("Error: {message}");
        return Err(1);
    }

    let files = match crate::file_args::process(
        &file_paths
            .iter()
            .map(|p| p[1..].to_owned())
            .collect::<Vec<_>>(),
        &cwd,
    ) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("Error: {message}");
            return Err(1);
        }
    };
    let mut piped = String::new();
    if !rpc
        && !interactive
        && !Output::stdin_is_tty()
        && let Err(e) = std::io::stdin().read_to_string(&mut piped)
    {
        eprintln!("Error: could not read stdin: {e}");
        return Err(1);
    }
    // The first prompt is piped stdin + @file text + the first message, with no separator.
    let head = format!("{}{}", piped.trim(), files.text);
    if !head.is_empty() || !files.images.is_empty() {
        match prompts.first_mut() {
            Some(first) => *first = format!("{head}{first}"),
            None => prompts.push(head),
        }
    }
    if prompts.is_empty() && !rpc && !interactive {
        eprintln!("Error: no prompt given (pi -p \"<prompt>\", or pipe text on stdin)");
        return Err(1);
    }
    let extension_tools = extensions.tools();
    let default_tools =
        tool_selection::default_tools(settings.default_tools.as_deref(), &tools::DEFAULT_TOOLS);
    let tool_request = ToolRequest {
        tools: tools_flag,
        exclude: args
            .exclude_tools
            .as_deref()
            .map(tool_selection::parse_list)
            .unwrap_or_default(),
        no_tools: args.no_tools,
        no_builtin_tools: args.no_builtin_tools,
    };
    let tool_names = tool_selection::select(
        &tool_request,
        &tools::SELECTABLE_TOOLS,
        &default_tools.iter().map(String::as_str).collect::<Vec<_>>(),
        &extension_tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>(),
        &extensions.inactive_tools(),
    );
    // Built-ins an extension overrides are built too, so the override takes their place.
    let builtin_names: Vec<String> = tool_names
        .iter()
        .filter(|name| {
            tools::SELECTABLE_TOOLS.contains(&name.as_str())
                || !extension_tools.iter().any(|t| t.name() == name.as_str())
        })
        .cloned()
        .collect();
    let sandbox = match sandbox::cli::CliSandbox::for_run(&agent_dir, &session_cwd, args.sandbox) {
        Ok(sandbox) => sandbox,
        Err(message) => {
            eprintln!("Error: {message}");
            return Err(1);
        }
    };
    let session_env = tools::bash_env::SessionEnv::default();
    #[cfg(feature = "codemode")]
    let codemode_link = crate::codemode::Link::default();
    let build_tools = |names: &[String]| -> Result<_, String> {
        let bash = tools::bash::BashOptions {
            session_env: session_env.clone(),
            ..tools::bash::BashOptions::from_settings(&settings)
        };
        // codemode is no machine tool: the sandbox confines the calls its scripts make.
        let (machine, others): (Vec<String>, Vec<String>) =
            names.iter().cloned().partition(|n| n != "codemode");
        let built = tools::build_tools(&machine, &session_cwd, bash.clone())?;
        let mut built = sandbox
            .confine_tools(built, &session_cwd, bash)
            .map_err(|e| format!("--sandbox: {e}"))?;
        #[cfg(feature = "codemode")]
        if let Some(at) = names.iter().position(|n| n == "codemode") {
            let tool = crate::codemode::codemode_tool(codemode_link.clone());
            built.insert(at.min(built.len()), tool);
        }
        let _ = others;
        Ok(built)
    };
    let mut active_tools = match build_tools(&builtin_names) {
        Ok(active) => active,
        Err(message) => {
            eprintln!("Error: {message}");
            return Err(1);
        }
    };
    // Extension tools are active when the selection kept them.
    for tool in &extension_tools {
        if tool_names.iter().any(|n| n == tool.name()) {
            // An override takes the built-in's place in the list.
            match active_tools.iter().position(|t| t.name() == tool.name()) {
                Some(at) => active_tools[at] = tool.clone(),
                None => active_tools.push(tool.clone()),
            }
        }
    }
    let all_tools: Vec<String> = tools::SELECTABLE_TOOLS
        .iter()
        .map(|t| (*t).to_owned())
        .collect();
    let mut tool_registry = build_tools(&all_tools).unwrap_or_default();
    for tool in &extension_tools {
        match tool_registry.iter().position(|t| t.name() == tool.name()) {
            Some(at) => tool_registry[at] = tool.clone(),
            None => tool_registry.push(tool.clone()),
        }
    }
    // The prompt names the tools declared to the model (codemode's `only` mode hides the
    // ones it lists).
    #[cfg(feature = "codemode")]
    let tool_names = crate::codemode::loadout::declared_names(&crate::codemode::loadout::prepare(
        active_tools.clone(),
        &tool_registry,
        crate::codemode::loadout::Presentation::from_settings(&settings_store),
    ));
    #[cfg(not(feature = "codemode"))]
    let tool_names: Vec<String> = active_tools.iter().map(|t| t.name().to_owned()).collect();
    let resource_sources = crate::session_resources::ResourceSources {
        agent_dir: agent_dir.clone(),
        cwd: session_cwd.clone(),
        project_trusted: loaded_trusted,
        cli_skills: args.skill.clone(),
        cli_prompts: args.prompt_template.clone(),
        no_skills: args.no_skills,
        no_prompt_templates: args.no_prompt_templates,
        no_context_files: args.no_context_files,
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        packages: packages.clone(),
        resolved_packages: resolved_packages.clone(),
    };
    let resources = resource_sources.load();
    // Like the TypeScript pi, only interactive mode lists resource diagnostics.
    let startup_warnings = resources.warnings;
    let skills = resources.skills;
    let prompt_templates = resources.prompt_templates;
    let recipe = resources.recipe;
    let (snippets, guidelines) = extensions.prompt_additions(&tool_names);
    let prompt = recipe.build(&tool_names, &skills, &snippets, &guidelines, &session_cwd);
    let agent_session = AgentSession::new(AgentSessionConfig {
        cwd: session_cwd,
        registry: std::sync::Arc::new(registry),
        settings: settings_store,
        session,
        model,
        thinking_level: thinking,
        scoped_models,
        tools: active_tools,
        system_prompt: prompt,
        prompt_templates,
        skills,
        api_key: args.api_key.clone(),
        extensions: ExtensionSetup {
            runtime: extensions.clone(),
            tool_registry,
            prompt_recipe: Some(recipe),
            restore_tools: tool_request.default_edits(),
            resource_sources: Some(resource_sources),
        },
    });
    #[cfg(feature = "codemode")]
    agent_session.bind_codemode(&codemode_link);
    let weak_session = agent_session.downgrade();
    session_env.bind(move || {
        weak_session
            .upgrade()
            .map(|session| session.bash_env())
            .unwrap_or_default()
    });
    // MCP is one of pi 1.6.0's built-in extensions: `--no-extensions`, `-builtin:mcp` and an
    // extension registering `/mcp` itself turn it off.
    if !args.no_mcp && builtins.mcp_enabled(&extensions.extensions()) {
        // Attached even without servers, so `/reload` picks up an mcp.json written later.
        let mcp = McpRuntime::load(&agent_dir, agent_session.cwd(), loaded_trusted);
        mcp.start();
        agent_session.attach_mcp(
            std::sync::Arc::new(mcp),
            McpToolFilter::from_request(&tool_request),
        );
    }
    // As pi 1.6.0, RPC and interactive mode ask the llama.cpp router for its models in the
    // background; print mode and `--list-models` use the saved catalog.
    if rpc || interactive {
        agent_session.refresh_llama_models_later();
        extensions.refresh_catalogs();
    }
    Ok(Launched {
        session: agent_session,
        agent_dir,
        prompts,
        images: files.images,
        startup_warnings,
        package_themes: resolved_packages
            .enabled(ResourceType::Themes)
            .into_iter()
            .map(|r| r.path.clone())
            .collect(),
        project_trusted: loaded_trusted,
        trust_unasked,
        no_model,
        sandbox_label: sandbox.label(),
    })
}
