//! Our `pi` answers as pi 1.6.0, the release it matches, where a user or a tool can see
//! the difference. Each test checks ours on its own and, when `PI_TS16` names pi 1.6.0's
//! wrapper, runs the same case there and asserts both give the same answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{ours, run, ts16, ts16_pi};

/// What `pi <args>` prints: exit code, stdout, stderr.
fn answer(output: std::process::Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_and_help_header_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for flag in ["--version", "-v"] {
        let got = answer(run(&env, ours(), &[flag]));
        // The number lives in PI_VERSION alone, so a release bump changes one line.
        let expected = format!("{}\n", pi_coding_agent::PI_VERSION);
        assert_eq!(got, (Some(0), expected, String::new()), "{flag}");
        if let Some(wrapper) = ts16() {
            assert_eq!(got, answer(run(&env, ts16_pi(&wrapper), &[flag])), "{flag}");
        }
    }
    // pi's help starts with its name and no version.
    let first_line = |out: std::process::Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let ours_help = first_line(run(&env, ours(), &["--help"]));
    assert_eq!(
        ours_help,
        "pi - AI coding assistant with read, bash, edit, write tools"
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(
            ours_help,
            first_line(run(&env, ts16_pi(&wrapper), &["--help"]))
        );
    }
}

/// The package commands' help (pi 0.79.1 simplified it): each equals pi 1.6.0's, byte for
/// byte, trailing empty line included; `config`'s too but for the lines that describe what
/// its resource screen shows, which is ours (both global and project packages at once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_and_config_help_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let Some(wrapper) = ts16() else {
        return;
    };
    for command in ["install", "remove", "uninstall", "update", "list", "config"] {
        for flag in ["--help", "-h"] {
            let ours = answer(run(&env, ours(), &[command, flag]));
            let theirs = answer(run(&env, ts16_pi(&wrapper), &[command, flag]));
            assert_eq!(ours.0, Some(0), "{command} {flag}: {ours:?}");
            assert!(ours.1.ends_with("\n\n"), "{command} {flag}: {ours:?}");
            if command == "config" {
                let differs = |line: &&str| {
                    line.starts_with("Without -l")
                        || line.starts_with("Press Tab")
                        || line.starts_with("  -l, --local")
                };
                let keep = |text: &str| -> Vec<String> {
                    text.lines()
                        .filter(|line| !differs(line))
                        .map(str::to_owned)
                        .collect()
                };
                assert_eq!(keep(&ours.1), keep(&theirs.1), "{command} {flag}");
                assert_eq!((ours.0, &ours.2), (theirs.0, &theirs.2), "{command} {flag}");
            } else {
                assert_eq!(ours, theirs, "{command} {flag}");
            }
        }
    }
}

/// Sends `commands` (each gets the id `c<n>`) to `program` in RPC mode in a fresh `Env`
/// with `settings`, and returns every line it wrote, cut down to what a model or
/// thinking-level change shows (models by id), then the settings file it left.
fn model_switches(
    server: &MockServer,
    settings: &Value,
    program: std::process::Command,
    args: &[&str],
    commands: &[Value],
) -> (Vec<Value>, Value) {
    let env = Env::new(server, 128_000, settings.clone());
    let mut rpc = Rpc::start_program(&env, program, args);
    for (n, command) in commands.iter().enumerate() {
        rpc.call(&format!("c{n}"), command.clone());
    }
    let lines = rpc.seen.iter().map(model_view).collect();
    rpc.finish();
    let settings = std::fs::read_to_string(env.agent.join("settings.json")).unwrap();
    (lines, serde_json::from_str(&settings).unwrap())
}

/// A line with a model object reduced to `provider/id` and a state to its model and level.
fn model_view(line: &Value) -> Value {
    let model_id = |m: &Value| json!(format!("{}/{}", m["provider"], m["id"]).replace('"', ""));
    let data = &line["data"];
    let data = match line["command"].as_str() {
        Some("set_model") if data.is_object() => model_id(data),
        Some("cycle_model") if data.is_object() => json!({
            "model": model_id(&data["model"]),
            "thinkingLevel": data["thinkingLevel"],
            "isScoped": data["isScoped"],
        }),
        Some("get_state") => json!({
            "model": model_id(&data["model"]),
            "thinkingLevel": data["thinkingLevel"],
        }),
        _ => data.clone(),
    };
    let mut line = line.clone();
    if !data.is_null() {
        line["data"] = data;
    }
    line
}

/// pi 1.6.0 keeps the session's thinking level on `set_model` and `cycle_model` unless
/// settings name one (`modelThinkingLevels` for the target, then `defaultThinkingLevel`)
/// or the `--models` scope does, clamps it to the model, emits `thinking_level_changed`
/// only when the level changes, and saves nothing to settings over RPC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_model_and_cycle_model_keep_the_thinking_level_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let state = json!({"type": "get_state"});
    let thinker = json!({"type": "set_model", "provider": "mock", "modelId": "mock-thinker"});
    let cycle = json!({"type": "cycle_model"});
    let high = json!({"type": "set_thinking_level", "level": "high"});
    let changed = |level: &str| json!({"type": "thinking_level_changed", "level": level});
    let cases: Vec<(Value, Vec<&str>, Vec<Value>)> = vec![
        (
            json!({}),
            vec![],
            vec![
                state.clone(),
                thinker.clone(),
                state.clone(),
                high.clone(),
                cycle.clone(),
                cycle.clone(),
                thinker.clone(),
                state.clone(),
            ],
        ),
        (
            json!({"modelThinkingLevels": {"mock/mock-thinker": "low"}}),
            vec![],
            vec![thinker.clone(), state.clone(), cycle.clone(), cycle.clone()],
        ),
        (
            json!({"defaultThinkingLevel": "high"}),
            vec![],
            vec![state.clone(), thinker.clone(), state.clone(), cycle.clone()],
        ),
        (
            json!({}),
            vec!["--models", "mock/mock-model,mock/mock-thinker:minimal"],
            vec![cycle.clone(), state.clone(), cycle.clone(), cycle.clone()],
        ),
    ];
    // Off stays off on the thinking model; only an explicit level changes it.
    let expected = [
        vec![changed("high"), changed("off")],
        vec![changed("low"), changed("off"), changed("low")],
        vec![changed("high"), changed("off")],
        vec![changed("minimal"), changed("off"), changed("minimal")],
    ];
    for ((settings, args, commands), expected) in cases.iter().zip(expected) {
        let lines = compare_model_switches(&server, settings, args, commands);
        let changes: Vec<Value> = lines
            .into_iter()
            .filter(|l| l["type"] == "thinking_level_changed")
            .collect();
        assert_eq!(changes, expected, "{settings} {args:?}");
    }
}

/// A new session with a `--models` scope and no `--model` starts on the scope's saved
/// default, else its first model, at the pattern's level unless `--thinking` names one;
/// a thinking model with no level anywhere starts at medium (pi's default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_model_and_thinking_level_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let state = json!({"type": "get_state"});
    let cycle = json!({"type": "cycle_model"});
    let cases: [(&[&str], (&str, &str)); 5] = [
        (&["--models", "*thinker"], ("mock/mock-thinker", "medium")),
        (
            &["--models", "mock-model,mock-thinker:high"],
            ("mock/mock-model", "off"),
        ),
        (
            &["--models", "mock-thinker:high"],
            ("mock/mock-thinker", "high"),
        ),
        (
            &["--models", "mock-thinker:high", "--thinking", "low"],
            ("mock/mock-thinker", "low"),
        ),
        (
            &["--model", "mock-thinker:high", "--thinking", "low"],
            ("mock/mock-thinker", "low"),
        ),
    ];
    for (args, (model, level)) in cases {
        let commands = [state.clone(), cycle.clone(), state.clone()];
        let lines = compare_model_switches(&server, &json!({}), args, &commands);
        assert_eq!(
            lines[0]["data"],
            json!({"model": model, "thinkingLevel": level}),
            "{args:?}"
        );
    }
}

/// Runs one case through ours and, when it is installed, pi 1.6.0; asserts both wrote the
/// same lines and left settings as they were (nothing is saved over RPC). Returns ours.
fn compare_model_switches(
    server: &MockServer,
    settings: &Value,
    args: &[&str],
    commands: &[Value],
) -> Vec<Value> {
    let (ours_lines, ours_settings) = model_switches(server, settings, ours(), args, commands);
    // Settings are as written: nothing was saved over RPC.
    let mut written = json!({"defaultProvider": "mock", "defaultModel": "mock-model"});
    written
        .as_object_mut()
        .unwrap()
        .extend(settings.as_object().unwrap().clone());
    assert_eq!(ours_settings, written, "{settings}");
    if let Some(wrapper) = ts16() {
        let theirs = model_switches(server, settings, ts16_pi(&wrapper), args, commands);
        assert_eq!(
            (&ours_lines, &ours_settings),
            (&theirs.0, &theirs.1),
            "{settings} {args:?}"
        );
    }
    ours_lines
}

/// What `get_commands` answers in a fresh agent dir, run with `args` (and `vars`).
fn commands(
    env: &Env,
    program: std::process::Command,
    args: &[&str],
    vars: &[(&str, &std::path::Path)],
) -> Vec<Value> {
    let mut program = program;
    for (key, value) in vars {
        program.env(key, value);
    }
    let mut rpc = Rpc::start_program(env, program, args);
    let answer = rpc.call("c", json!({"type": "get_commands"}));
    rpc.finish();
    answer["data"]["commands"].as_array().unwrap().clone()
}

/// pi 1.6.0 lists its built-in extensions' commands, `llama` (llama.cpp router models) and
/// `mcp`, after the loaded extensions' ones; `--no-mcp` drops `mcp`, `--no-extensions` both,
/// and `-e builtin:<name>` brings one back. Every field must be equal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_commands_lists_the_builtin_commands_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mcp = json!({
        "name": "mcp",
        "description": "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
        "source": "extension",
        "sourceInfo": {"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"},
    });
    let llama = json!({
        "name": "llama",
        "description": "Manage llama.cpp router models",
        "source": "extension",
        "sourceInfo": {"path": "builtin:llama.cpp", "source": "builtin", "scope": "temporary", "origin": "top-level"},
    });
    let host = support::ext_host::host_dir();
    let extension = env.work.join("hello.ts");
    std::fs::write(
        &extension,
        r#"export default function (pi) { pi.registerCommand("hello", { description: "Say hello", handler: async () => {} }); }"#,
    )
    .unwrap();
    let extension = extension.to_str().unwrap().to_owned();
    let mut cases: Vec<(Vec<&str>, Option<Vec<&str>>)> = vec![
        (vec![], Some(vec!["llama", "mcp"])),
        (vec!["--no-mcp"], Some(vec!["llama"])),
        (vec!["--no-extensions"], Some(vec![])),
        (
            vec!["--no-extensions", "-e", "builtin:llama.cpp"],
            Some(vec!["llama"]),
        ),
        (
            vec!["--no-extensions", "-e", "builtin:mcp"],
            Some(vec!["mcp"]),
        ),
    ];
    if host.is_some() {
        cases.push((vec!["-e", &extension], Some(vec!["hello", "llama", "mcp"])));
        cases.push((
            vec!["--no-extensions", "-e", &extension],
            Some(vec!["hello"]),
        ));
    }
    for (args, names) in cases {
        let vars: Vec<(&str, &std::path::Path)> = host
            .as_deref()
            .map(|dir| vec![("PI_EXTENSION_HOST_DIR", dir)])
            .unwrap_or_default();
        let ours_commands = commands(&env, ours(), &args, &vars);
        let ours_names: Vec<&str> = ours_commands
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(Some(ours_names), names, "{args:?}");
        if let Some(entry) = ours_commands.iter().find(|c| c["name"] == "mcp") {
            assert_eq!(entry, &mcp);
        }
        if let Some(entry) = ours_commands.iter().find(|c| c["name"] == "llama") {
            assert_eq!(entry, &llama);
        }
        if let Some(wrapper) = ts16() {
            let theirs = commands(&env, ts16_pi(&wrapper), &args, &[]);
            assert_eq!(ours_commands, theirs, "{args:?}");
        }
    }
    // The settings turn a built-in extension off with `-builtin:<name>`.
    for (off, left) in [("mcp", "llama"), ("llama.cpp", "mcp")] {
        let env = Env::new(
            &server,
            128_000,
            json!({"extensions": [format!("-builtin:{off}")]}),
        );
        let ours_commands = commands(&env, ours(), &[], &[]);
        let names: Vec<&str> = ours_commands
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, [left], "-builtin:{off}");
        if let Some(wrapper) = ts16() {
            let theirs = commands(&env, ts16_pi(&wrapper), &[], &[]);
            assert_eq!(ours_commands, theirs, "-builtin:{off}");
        }
    }
}
