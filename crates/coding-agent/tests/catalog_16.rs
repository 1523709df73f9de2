//! pi 1.6.0's model catalog through the real `pi`: the models `--list-models` shows for a
//! provider's key (context window, max tokens, thinking and image flags), the default model
//! picked with only one provider's key set (every provider of the catalog), and the thinking
//! levels a model offers. Each test checks ours on its own and, when `PI_TS16` names pi 1.6.0's
//! wrapper, runs the same case there and asserts both give the same answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use pi_coding_agent::model_registry::DEFAULT_MODELS;
use support::ts16::ts16;

/// A scratch home with an agent dir and a work dir, nothing configured.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("agent")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Scratch { dir }
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }
}

/// Which `pi` runs a case.
#[derive(Clone, Copy)]
enum Pi<'a> {
    Ours,
    Ts16(&'a Path),
}

/// `pi` in `scratch` with an environment of nothing but `vars` (and PATH): no key of the
/// machine leaks in, and pi 1.6.0 stays offline.
fn command(pi: Pi, scratch: &Scratch, vars: &[(&str, &str)], args: &[&str]) -> Command {
    let mut command = match pi {
        Pi::Ours => Command::new(env!("CARGO_BIN_EXE_pi")),
        Pi::Ts16(wrapper) => Command::new(wrapper),
    };
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", scratch.dir.path())
        .env("PI_CODING_AGENT_DIR", scratch.agent())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .envs(vars.iter().copied())
        .current_dir(scratch.dir.path().join("work"))
        .stdin(Stdio::null());
    command
}

/// The rows of the `--list-models` table (ours writes it to stderr, pi 1.6.0 to stdout), each
/// with its cells joined by one space, sorted (pi sorts with `localeCompare`, ours by bytes).
fn list_rows(pi: Pi, vars: &[(&str, &str)]) -> Vec<String> {
    let scratch = Scratch::new();
    let output = command(pi, &scratch, vars, &["--list-models"])
        .output()
        .expect("pi runs");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut rows: Vec<String> = text
        .lines()
        .skip_while(|line| !(line.starts_with("provider") && line.contains("max-out")))
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|row| row.split(' ').count() == 6)
        .collect();
    rows.sort();
    rows
}

/// What ours must list for `providers`: one row per catalog model.
fn catalog_rows(providers: &[&str]) -> Vec<String> {
    let mut rows: Vec<String> = providers
        .iter()
        .flat_map(|p| pi_ai::get_models(p))
        .map(|m| {
            let yes = |b: bool| if b { "yes" } else { "no" };
            format!(
                "{} {} {} {} {} {}",
                m.provider,
                m.id,
                pi_coding_agent::list_models::format_token_count(m.context_window),
                pi_coding_agent::list_models::format_token_count(m.max_tokens),
                yes(m.reasoning),
                yes(m.supports_images())
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Environment variables set for a case.
type Vars = &'static [(&'static str, &'static str)];

#[test]
fn list_models_shows_each_providers_catalog_as_pi_16() {
    // (variables set, providers whose models they make available)
    let cases: &[(Vars, &[&str])] = &[
        (&[("OPENAI_API_KEY", "k")], &["openai"]),
        (&[("ANTHROPIC_API_KEY", "k")], &["anthropic"]),
        (&[("AZURE_OPENAI_API_KEY", "k")], &["azure"]),
        (&[("GEMINI_API_KEY", "k")], &["google"]),
        (&[("COPILOT_GITHUB_TOKEN", "k")], &["github-copilot"]),
        (&[("NVIDIA_API_KEY", "k")], &["nvidia"]),
        (&[("TOGETHER_API_KEY", "k")], &["together"]),
        (&[("BASETEN_API_KEY", "k")], &["baseten"]),
        (&[("ANT_LING_API_KEY", "k")], &["ant-ling"]),
        (&[("META_API_KEY", "k")], &["meta"]),
        (&[("RADIUS_API_KEY", "k")], &["radius"]),
        (&[("ZAI_CODING_CN_API_KEY", "k")], &["zai-coding-cn"]),
        (
            &[("XIAOMI_TOKEN_PLAN_SGP_API_KEY", "k")],
            &["xiaomi-token-plan-sgp"],
        ),
        // The region variable both Qwen plans shared serves both.
        (
            &[("QWEN_TOKEN_PLAN_API_KEY", "k")],
            &["qwen-token-plan", "qwen-token-plan-individual"],
        ),
        (
            &[("QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "k")],
            &["qwen-token-plan-individual-cn"],
        ),
        (
            &[("MOONSHOT_API_KEY", "k")],
            &["moonshotai", "moonshotai-cn"],
        ),
        // Cloudflare needs the account id (and the gateway its id) besides the key.
        (&[("CLOUDFLARE_API_KEY", "k")], &[]),
        (
            &[("CLOUDFLARE_API_KEY", "k"), ("CLOUDFLARE_ACCOUNT_ID", "a")],
            &["cloudflare-workers-ai"],
        ),
        (
            &[
                ("CLOUDFLARE_API_KEY", "k"),
                ("CLOUDFLARE_ACCOUNT_ID", "a"),
                ("CLOUDFLARE_GATEWAY_ID", "g"),
            ],
            &["cloudflare-ai-gateway", "cloudflare-workers-ai"],
        ),
        // Before pi 1.6 GH_TOKEN also served Copilot; 1.6 reads COPILOT_GITHUB_TOKEN only.
        (&[("GH_TOKEN", "k"), ("GITHUB_TOKEN", "k")], &[]),
    ];
    let wrapper = ts16();
    for (vars, providers) in cases {
        let ours = list_rows(Pi::Ours, vars);
        assert_eq!(ours, catalog_rows(providers), "{vars:?}");
        if let Some(wrapper) = &wrapper {
            assert_eq!(ours, list_rows(Pi::Ts16(wrapper), vars), "{vars:?}");
        }
    }
    // A few rows as a user reads them.
    let openai = list_rows(Pi::Ours, &[("OPENAI_API_KEY", "k")]);
    assert!(openai.contains(&"openai gpt-6.2-sol 272K 128K yes yes".to_owned()));
    let anthropic = list_rows(Pi::Ours, &[("ANTHROPIC_API_KEY", "k")]);
    assert!(anthropic.contains(&"anthropic claude-opus-5-5 1M 128K yes yes".to_owned()));
}

/// Sends `commands` (ids `c0`, `c1`, …) to `pi --mode rpc <args>` with stdin closed after
/// them, and returns the `data` of each response, in order (`null` for a failed one).
fn rpc(
    pi: Pi,
    scratch: &Scratch,
    vars: &[(&str, &str)],
    args: &[&str],
    commands: &[Value],
) -> Vec<Value> {
    let mut all_args = vec!["--mode", "rpc"];
    all_args.extend_from_slice(args);
    let mut child = command(pi, scratch, vars, &all_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("pi starts");
    {
        let mut stdin = child.stdin.take().unwrap();
        for (n, command) in commands.iter().enumerate() {
            let mut command = command.clone();
            command["id"] = json!(format!("c{n}"));
            writeln!(stdin, "{command}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    (0..commands.len())
        .map(|n| {
            let id = format!("c{n}");
            let response = lines
                .iter()
                .find(|l| l["id"] == id.as_str() && l["type"] == "response")
                .unwrap_or_else(|| panic!("no response to {id}: {lines:?}"));
            response.get("data").cloned().unwrap_or(Value::Null)
        })
        .collect()
}

/// `provider/id` of the model `get_state` reports.
fn state_model(state: &Value) -> String {
    let model = &state["model"];
    format!(
        "{}/{}",
        model["provider"].as_str().unwrap_or("-"),
        model["id"].as_str().unwrap_or("-")
    )
}

/// The variables that make `provider` usable on their own (its first key variable, and what
/// else pi 1.6 requires), and for Codex, which has none, a login in `auth.json`.
fn key_for(provider: &str) -> (Vec<(&'static str, &'static str)>, Option<Value>) {
    let mut vars: Vec<(&'static str, &'static str)> = pi_ai::env_keys::api_key_env_vars(provider)
        .first()
        .map(|v| vec![(*v, "k")])
        .unwrap_or_default();
    match provider {
        "cloudflare-workers-ai" => vars.push(("CLOUDFLARE_ACCOUNT_ID", "a")),
        "cloudflare-ai-gateway" => {
            vars.push(("CLOUDFLARE_ACCOUNT_ID", "a"));
            vars.push(("CLOUDFLARE_GATEWAY_ID", "g"));
        }
        "amazon-bedrock" => {
            vars.push(("AWS_ACCESS_KEY_ID", "k"));
            vars.push(("AWS_SECRET_ACCESS_KEY", "s"));
        }
        _ => {}
    }
    // A ChatGPT login whose token carries an account id, valid until 2100.
    let codex = json!({"openai-codex": {"type": "oauth", "refresh": "r", "expires": 4_102_444_800_000_u64,
        "accountId": "acct-123",
        "access": "eyJhbGciOiJub25lIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjdC0xMjMifX0.sig"}});
    (vars, (provider == "openai-codex").then_some(codex))
}

/// The model pi should start on with only `provider`'s key: the default of the first
/// provider of [`DEFAULT_MODELS`] that key serves (Moonshot's key serves `moonshotai` and
/// `moonshotai-cn`, the AI Gateway's variables Workers AI too), else none.
fn expected_default(provider: &str) -> String {
    let (vars, auth) = key_for(provider);
    DEFAULT_MODELS
        .iter()
        .find(|(p, _)| {
            let (needed, login) = key_for(p);
            (login.is_some() && *p == provider && auth.is_some())
                || (!needed.is_empty() && needed.iter().all(|v| vars.contains(v)))
        })
        .map_or("unknown/unknown".to_owned(), |(p, id)| format!("{p}/{id}"))
}

/// The model `pi --mode rpc` starts on with only `provider`'s key.
fn default_with_key_of(pi: Pi, provider: &str) -> String {
    let scratch = Scratch::new();
    let (vars, auth) = key_for(provider);
    if let Some(auth) = auth {
        std::fs::write(scratch.agent().join("auth.json"), auth.to_string()).unwrap();
    }
    let data = rpc(pi, &scratch, &vars, &[], &[json!({"type": "get_state"})]);
    state_model(&data[0])
}

#[test]
fn default_model_with_one_providers_key_is_pi_16s_for_every_provider() {
    let wrapper = ts16();
    let providers = pi_ai::get_providers();
    assert_eq!(providers.len(), 43);
    for provider in &providers {
        let ours = default_with_key_of(Pi::Ours, provider);
        assert_eq!(ours, expected_default(provider), "{provider}");
        if let Some(wrapper) = &wrapper {
            assert_eq!(
                ours,
                default_with_key_of(Pi::Ts16(wrapper), provider),
                "{provider}"
            );
        }
    }
}

#[test]
fn gpt_6_2_sol_offers_pi_16s_thinking_levels() {
    let commands = [
        json!({"type": "get_available_thinking_levels"}),
        json!({"type": "set_thinking_level", "level": "off"}),
        json!({"type": "get_state"}),
        json!({"type": "set_thinking_level", "level": "minimal"}),
        json!({"type": "get_state"}),
        json!({"type": "set_thinking_level", "level": "max"}),
        json!({"type": "get_state"}),
    ];
    let run = |pi: Pi| {
        let scratch = Scratch::new();
        let data = rpc(
            pi,
            &scratch,
            &[("OPENAI_API_KEY", "k")],
            &["--model", "openai/gpt-6.2-sol"],
            &commands,
        );
        let levels = data[0]["levels"].clone();
        let chosen: Vec<Value> = [2, 4, 6]
            .iter()
            .map(|&n| json!([state_model(&data[n]), data[n]["thinkingLevel"]]))
            .collect();
        (levels, chosen)
    };
    let ours = run(Pi::Ours);
    // `none` and `minimal` are rejected by GPT-6.2: off and minimal clamp up to low.
    assert_eq!(ours.0, json!(["low", "medium", "high", "xhigh", "max"]));
    assert_eq!(
        ours.1,
        vec![
            json!(["openai/gpt-6.2-sol", "low"]),
            json!(["openai/gpt-6.2-sol", "low"]),
            json!(["openai/gpt-6.2-sol", "max"]),
        ]
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(ours, run(Pi::Ts16(&wrapper)));
    }
}

#[test]
fn the_azure_provider_is_azure_and_its_old_name_still_works() {
    let settings = json!({"defaultProvider": "azure-openai-responses", "defaultModel": "gpt-5.4"});
    let run = |pi: Pi| {
        let scratch = Scratch::new();
        std::fs::write(scratch.agent().join("settings.json"), settings.to_string()).unwrap();
        let data = rpc(
            pi,
            &scratch,
            &[("AZURE_OPENAI_API_KEY", "k")],
            &[],
            &[json!({"type": "get_state"})],
        );
        state_model(&data[0])
    };
    // pi 1.6 renamed the provider; ours still reads settings naming the old one.
    assert_eq!(run(Pi::Ours), "azure/gpt-5.4");
    // A key stored under the old name still serves the provider.
    let scratch = Scratch::new();
    let auth = json!({"azure-openai-responses": {"type": "api_key", "key": "k"}});
    std::fs::write(scratch.agent().join("auth.json"), auth.to_string()).unwrap();
    let data = rpc(
        Pi::Ours,
        &scratch,
        &[],
        &[],
        &[json!({"type": "get_state"})],
    );
    assert_eq!(state_model(&data[0]), "azure/gpt-6.2-sol");
}

#[test]
fn thinking_levels_named_on_the_command_line_clamp_as_pi_16() {
    // (arguments, model and level pi starts on)
    let cases: [(&[&str], &str); 4] = [
        (
            &["--model", "openai/gpt-6.2-sol:off"],
            "openai/gpt-6.2-sol low",
        ),
        (
            &["--model", "openai/gpt-6.2-sol", "--thinking", "minimal"],
            "openai/gpt-6.2-sol low",
        ),
        // Codex maps minimal (to low), so it stays.
        (
            &["--model", "openai-codex/gpt-6.2-sol:minimal"],
            "openai-codex/gpt-6.2-sol minimal",
        ),
        // Opus 4.6 maps max but not xhigh: up to max.
        (
            &["--model", "anthropic/claude-opus-4-6:xhigh"],
            "anthropic/claude-opus-4-6 max",
        ),
    ];
    let run = |pi: Pi, args: &[&str]| {
        let scratch = Scratch::new();
        if let (_, Some(login)) = key_for("openai-codex") {
            std::fs::write(scratch.agent().join("auth.json"), login.to_string()).unwrap();
        }
        let vars = [("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")];
        let data = rpc(pi, &scratch, &vars, args, &[json!({"type": "get_state"})]);
        let level = data[0]["thinkingLevel"].as_str().unwrap_or("-").to_owned();
        format!("{} {level}", state_model(&data[0]))
    };
    let wrapper = ts16();
    for (args, expected) in cases {
        let ours = run(Pi::Ours, args);
        assert_eq!(ours, expected, "{args:?}");
        if let Some(wrapper) = &wrapper {
            assert_eq!(ours, run(Pi::Ts16(wrapper), args), "{args:?}");
        }
    }
}

/// Every key variable of every provider (and Cloudflare's ids, AWS credentials), so that
/// every catalog model is available.
fn every_key() -> Vec<(&'static str, &'static str)> {
    let mut vars: Vec<(&'static str, &'static str)> = Vec::new();
    for provider in pi_ai::get_providers() {
        for var in key_for(&provider).0 {
            if !vars.contains(&var) {
                vars.push(var);
            }
        }
    }
    vars
}

/// The models `get_available_models` lists with every provider usable, each in full.
fn available_models(pi: Pi) -> Vec<Value> {
    let scratch = Scratch::new();
    let (_, codex) = key_for("openai-codex");
    std::fs::write(
        scratch.agent().join("auth.json"),
        codex.unwrap().to_string(),
    )
    .unwrap();
    let data = rpc(
        pi,
        &scratch,
        &every_key(),
        &["--no-session"],
        &[json!({"type": "get_available_models"})],
    );
    data[0]["models"].as_array().cloned().unwrap_or_default()
}

#[test]
fn every_catalog_model_over_rpc_is_pi_16s_field_for_field() {
    let ours = available_models(Pi::Ours);
    // The catalog as pi-ai 1.6.0 generated it (scripts/refresh-models.sh), in its order.
    let catalog: serde_json::Map<String, Value> =
        serde_json::from_str(include_str!("../../ai/src/models/catalog.json")).unwrap();
    let expected: Vec<Value> = catalog
        .values()
        .flat_map(|models| models.as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(expected.len(), 1_698);
    assert_eq!(ours.len(), expected.len());
    for (our, catalogs) in ours.iter().zip(&expected) {
        assert_eq!(our, catalogs, "{}/{}", catalogs["provider"], catalogs["id"]);
    }
    if let Some(wrapper) = ts16() {
        let theirs = available_models(Pi::Ts16(&wrapper));
        assert_eq!(ours.len(), theirs.len());
        for (our, their) in ours.iter().zip(&theirs) {
            assert_eq!(our, their, "{}/{}", their["provider"], their["id"]);
        }
    }
}
