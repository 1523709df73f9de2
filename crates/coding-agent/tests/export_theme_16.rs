//! The HTML export in the active theme's colours (RPC `export_html`, which exports as
//! `/export` does): ours and pi 1.6.0 write the same theme variables for a custom theme's
//! `colors` and `export` section, and fall back when the configured theme no longer exists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::entries::{assistant, header, user, write};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// A custom theme: the built-in dark theme's tokens with its own accent, user message
/// background, diff colour and `export` section (one entry through a variable).
fn ocean_theme() -> Value {
    let dark = include_str!("../src/modes/interactive/theme/dark.json");
    let mut theme: Value = serde_json::from_str(dark).unwrap();
    theme["name"] = json!("ocean");
    theme["vars"]["sea"] = json!("#103050");
    theme["colors"]["accent"] = json!("#12ab34");
    theme["colors"]["userMessageBg"] = json!("#20304a");
    theme["colors"]["toolDiffAdded"] = json!("#44cc55");
    theme["export"] = json!({"pageBg": "sea", "cardBg": "#123456", "infoBg": "#345678"});
    theme
}

/// The last value of each `--name: value;` declaration in the page (the theme's, which
/// come after any defaults).
fn css_vars(html: &str) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    for line in html.lines() {
        for decl in line.split(';') {
            let decl = decl.trim();
            if let Some(rest) = decl.strip_prefix("--")
                && let Some((name, value)) = rest.split_once(':')
                && !name.contains(' ')
            {
                vars.insert(name.to_owned(), value.trim().to_owned());
            }
        }
    }
    vars
}

/// Exports the session through `--mode rpc --session` with `wrapper`'s pi; the HTML.
fn export(env: &Env, wrapper: &Option<PathBuf>, session: &Path, out: &str) -> String {
    let mut rpc = Rpc::start_program(
        env,
        program(wrapper),
        &["--session", session.to_str().unwrap()],
    );
    let path = env.work.join(out);
    let response = rpc.call(
        "e",
        json!({"type": "export_html", "outputPath": path.to_str().unwrap()}),
    );
    assert_eq!(response["success"], json!(true), "{response}");
    drop(rpc);
    std::fs::read_to_string(&path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_uses_the_active_theme_and_falls_back_when_it_is_gone() {
    let server = MockServer::start().await.unwrap();
    let keys = [
        "exportPageBg",
        "exportCardBg",
        "exportInfoBg",
        "accent",
        "userMessageBg",
        "toolDiffAdded",
    ];
    let mut seen: Vec<(&str, HashMap<String, String>)> = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"theme": "ocean"}));
        let themes = env.agent.join("themes");
        std::fs::create_dir_all(&themes).unwrap();
        std::fs::write(themes.join("ocean.json"), ocean_theme().to_string()).unwrap();
        let session = env.work.join("session.jsonl");
        write(
            &session,
            &[
                header("0190a000-0000-7000-8000-00000000ffff", &env.work),
                user("u1", None, "hello"),
                assistant("a1", "u1", "hi there"),
            ],
        );

        let html = export(&env, &wrapper, &session, "ocean.html");
        let vars = css_vars(&html);
        assert_eq!(vars["exportPageBg"], "#103050", "{name}");
        assert_eq!(vars["exportCardBg"], "#123456", "{name}");
        assert_eq!(vars["exportInfoBg"], "#345678", "{name}");
        assert_eq!(vars["accent"], "#12ab34", "{name}");
        assert_eq!(vars["toolDiffAdded"], "#44cc55", "{name}");
        if wrapper.is_none() {
            // Our page's own palette follows: page, cards, user messages.
            assert_eq!(vars["bg"], "#103050");
            assert_eq!(vars["card"], "#123456");
            assert_eq!(vars["user"], "#20304a");
            assert!(html.contains("<meta name=\"color-scheme\" content=\"dark\">"));
        }
        seen.push((
            name,
            keys.iter()
                .map(|k| (k.to_string(), vars[*k].clone()))
                .collect(),
        ));

        // The theme file is gone: the export still works, in the fallback theme.
        std::fs::remove_file(themes.join("ocean.json")).unwrap();
        let fallback = css_vars(&export(&env, &wrapper, &session, "fallback.html"));
        for key in ["exportPageBg", "exportCardBg", "exportInfoBg", "accent"] {
            assert!(fallback.contains_key(key), "{name}: {key}");
        }
        assert_ne!(fallback["exportPageBg"], "#103050", "{name}");
        assert_ne!(fallback["accent"], "#12ab34", "{name}");
        if wrapper.is_none() {
            // Ours falls back to the default dark theme: the same colours as choosing it.
            std::fs::write(
                env.agent.join("settings.json"),
                json!({"defaultProvider": "mock", "defaultModel": "mock-model", "theme": "dark"})
                    .to_string(),
            )
            .unwrap();
            let dark = css_vars(&export(&env, &wrapper, &session, "dark.html"));
            for key in keys {
                assert_eq!(fallback[key], dark[key], "{key}");
            }
        }
    }
    // Ours writes what pi 1.6.0 writes for the theme.
    if let [(_, ours), (ts_name, ts)] = seen.as_slice() {
        eprintln!("compared with {ts_name}: {ts:?}");
        assert_eq!(ours, ts);
    }
}
