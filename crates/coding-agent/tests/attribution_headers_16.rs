//! Provider attribution headers come from pi-ai's client identity (pi 1.4.0): an
//! extension's `before_provider_headers` handler does not see OpenRouter's attribution
//! headers, and setting one to `null` still removes it from the request. The same
//! OpenRouter model, routed to a capturing mock, through ours and pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program_with_host, run};

/// Writes the header names its handler saw to `$HEADERS_OUT`; with `DROP_TITLE` set it
/// deletes `X-OpenRouter-Title`.
const EXTENSION: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("before_provider_headers", (event) => {
    writeFileSync(process.env.HEADERS_OUT, JSON.stringify(Object.keys(event.headers).map((k) => k.toLowerCase()).sort()));
    if (process.env.DROP_TITLE) event.headers["X-OpenRouter-Title"] = null;
  });
}
"#;

/// What one prompt shows: the header names the handler saw, and the attribution headers
/// the mock received.
async fn attribution(wrapper: &Option<std::path::PathBuf>, drop_title: bool) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(
        env.agent.join("models.json"),
        json!({"providers": {"openrouter": {"baseUrl": server.openai_base_url()}}}).to_string(),
    )
    .unwrap();
    let extension = env.work.join("headers.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    let out = env.dir.path().join("headers.json");
    let mut program = program_with_host(wrapper);
    program
        .env("HEADERS_OUT", &out)
        .env("OPENROUTER_API_KEY", "sk-or-test");
    if drop_title {
        program.env("DROP_TITLE", "1");
    }
    let extension = extension.display().to_string();
    let output = tokio::task::block_in_place(|| {
        run(
            &env,
            program,
            &[
                "-e",
                &extension,
                "--model",
                "openrouter/~deepseek/deepseek-flash-latest",
                "-p",
                "Hi.",
            ],
        )
    });
    assert!(output.status.success(), "{output:?}");
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let requests = server.requests();
    let sent: BTreeMap<String, String> = requests[0]
        .headers
        .iter()
        .filter(|(k, _)| k.starts_with("x-openrouter") || *k == "http-referer")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    json!({"seen": seen, "sent": sent})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_do_not_see_attribution_headers_but_can_remove_them_as_pi_16() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let kept = attribution(&wrapper, false).await;
        let dropped = attribution(&wrapper, true).await;
        seen.push((name, json!({"kept": kept, "dropped": dropped})));
    }
    let ours = &seen[0].1;
    let hidden = ours["kept"]["seen"].as_array().unwrap();
    assert!(
        !hidden
            .iter()
            .any(|k| k == "x-openrouter-title" || k == "http-referer"),
        "{ours}"
    );
    assert!(
        ours["kept"]["sent"]["x-openrouter-title"].is_string(),
        "{ours}"
    );
    assert!(
        ours["dropped"]["sent"]["x-openrouter-title"].is_null(),
        "{ours}"
    );
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} (left) differs from ours");
    }
}
