//! codemode's `models.classify()` with the llama.cpp provider's classifiers, against pi
//! 1.6.0: a saved router catalog with a chat model (classified through next-token label
//! probabilities) and a decision model (System One API), served by mock-llm's stand-in.
//! The same scripts run through ours and pi 1.6.0 (`PI_TS16`) in print mode; the tool
//! results, the session entries and the requests the router got must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use mock_llm::{ClassifyRule, LlamaSettings, MockServer, RankedToken, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// The saved catalog: a chat model's classifier and a decision model, as pi 1.6.0 saves
/// them after asking the router.
fn save_catalog(agent: &Path, server: &MockServer) {
    let url = server.url();
    let entry = |id: &str, api: &str, base: String| {
        json!({"type": "classifier", "id": id, "name": id, "api": api, "provider": "llama.cpp",
            "baseUrl": base, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 8192})
    };
    // A decision model that reads images (llama.cpp reports its `mmproj`): images go as
    // data URLs.
    let mut vision = entry("clef-vision", "typesafe-system-one", format!("{url}/v1"));
    vision["input"] = json!(["text", "image"]);
    vision["compat"] = json!({"imageInput": "images", "sendImageOptInHeader": false});
    let store = json!({"llama.cpp": {"models": [
        entry("qwen-small", "llama-cpp-classify", url.clone()),
        entry("julia-decision", "typesafe-system-one", format!("{url}/v1")),
        vision,
    ], "checkedAt": 1_700_000_000_000u64}});
    std::fs::write(agent.join("models-store.json"), store.to_string()).unwrap();
}

fn ranked(token: &str, logprob: f64, rank: u64) -> RankedToken {
    RankedToken {
        token: token.into(),
        logprob,
        rank,
    }
}

/// The router's next-token ranks: a choice answered A, a score whose likely levels rank
/// below the first read-out depth (so pi looks deeper), yes/no, and a question whose
/// "No" is never ranked.
fn router(server: &MockServer) {
    let rule = |when: &str, tokens: Vec<RankedToken>| ClassifyRule {
        when: when.into(),
        tokens,
    };
    server.set_llama(LlamaSettings {
        classify: vec![
            rule("Yes means: something is missing", vec![ranked("Yes", -0.5, 0)]),
            rule(
                "Answer with one letter.",
                vec![ranked("A", -0.2, 0), ranked("B", -1.9, 1), ranked("C", -4.0, 7)],
            ),
            rule(
                "Answer with one level number.",
                vec![ranked("0", -3.0, 2), ranked("1", -0.4, 300), ranked("2", -1.2, 301)],
            ),
            rule("Answer Yes or No.", vec![ranked("No", -0.1, 0), ranked("Yes", -2.5, 1)]),
        ],
        system_one: Some(json!({"answers": {
            "pick": {"type": "choice", "choice": "b", "probabilities": {"a": 0.1, "b": 0.9}, "confidence": 0.8},
            "ok": {"type": "noul", "noul": 0.75}
        }})),
        ..Default::default()
    });
}

/// What one run left: the tool results the model saw, the session entries (ids, times
/// and usage left out) and the router's classification requests, sorted.
#[derive(Debug, PartialEq)]
struct Outcome {
    results: Vec<String>,
    entries: Vec<Value>,
    requests: Vec<String>,
}

fn normalize(text: &str) -> String {
    let wall = regex::Regex::new(r"Wall time [0-9.]+ seconds").unwrap();
    let stamp = regex::Regex::new(r#""timestamp":\s*[0-9]+"#).unwrap();
    // pi 1.6.0 names its installed docs, ours the same file in pi's repository.
    let docs = regex::Regex::new(r#"in [^ ]+/docs/codemode\.md"#).unwrap();
    let text = wall.replace_all(text, "Wall time T seconds");
    let text = docs.replace_all(&text, "in <docs>/codemode.md");
    stamp.replace_all(&text, "\"timestamp\":0").into_owned()
}

fn entry_shape(entry: &Value) -> Option<Value> {
    let message = &entry["message"];
    if message["role"] != "toolResult" && message["role"] != "user" {
        return None;
    }
    let mut shape = json!({"role": message["role"], "content": message["content"]});
    if message["role"] == "toolResult" {
        shape["isError"] = message["isError"].clone();
        shape["toolName"] = message["toolName"].clone();
        shape["nestedCalls"] = message["nestedCalls"].clone();
    }
    Some(serde_json::from_str(&normalize(&shape.to_string())).unwrap())
}

fn run_scripts(
    wrapper: &Option<PathBuf>,
    scripts: &[&str],
    setup: impl Fn(&MockServer),
) -> Outcome {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    router(&server);
    setup(&server);
    for code in scripts {
        server.push(Script::tool_call("codemode", json!({ "code": code })));
    }
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    save_catalog(&env.agent, &server);
    let mut command = program(wrapper);
    command.env("LLAMA_BASE_URL", server.url());
    let output = run(&env, command, &["--tools", "+codemode", "-p", "Go."]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    let results = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| normalize(m["content"].as_str().unwrap_or_default()))
        .collect();
    let files = env.session_files();
    let entries = read_jsonl(&files[0])
        .iter()
        .filter_map(entry_shape)
        .collect();
    let mut requests: Vec<String> = server
        .llama_requests()
        .iter()
        .map(Value::to_string)
        .collect();
    requests.sort();
    Outcome {
        results,
        entries,
        requests,
    }
}

/// Ours and pi 1.6.0 on the same scripts; they must agree. Ours's outcome.
fn compare(scripts: &[&str], setup: impl Fn(&MockServer)) -> Outcome {
    let mut outcomes = Vec::new();
    for (who, wrapper) in pis() {
        outcomes.push((who, run_scripts(&wrapper, scripts, &setup)));
    }
    let (_, ours) = &outcomes[0];
    for (who, theirs) in &outcomes[1..] {
        assert_eq!(ours.results, theirs.results, "tool results: ours and {who}");
        assert_eq!(
            ours.entries, theirs.entries,
            "session entries: ours and {who}"
        );
        assert_eq!(
            ours.requests, theirs.requests,
            "router requests: ours and {who}"
        );
    }
    outcomes.remove(0).1
}

/// Numbers rounded to six places, so that the last bit of an `exp` does not decide.
const ROUNDED: &str = "(k, v) => (typeof v === \"number\" ? Number(v.toFixed(6)) : v)";

#[test]
fn llama_classifiers_answer_typed_questions_as_16() {
    let classify = format!(
        "const qwen = await models.getModelOfType(\"classifier\", \"llama.cpp\", \"qwen-small\");\n\
         const r = await models.classify(qwen, {{\n\
           state: {{ message: \"The build is red since the last merge\", files: [\"ci.yml\"], retries: 2 }},\n\
           questions: {{\n\
             kind: {{ type: \"choice\", instructions: \"What kind of report is it?\", criteria: {{ bug: \"something broke\", question: \"\", praise: \"thanks\" }} }},\n\
             severity: {{ type: \"score\", instructions: \"How severe is it?\", criteria: [\"cosmetic\", \"annoying\", \"blocking\"] }},\n\
             urgent: {{ type: \"bool\", instructions: \"Must it be fixed today?\", criteria: {{ true: \"yes, today\", false: \"it can wait\" }} }},\n\
           }},\n\
         }});\n\
         return JSON.stringify({{ api: r.api, provider: r.provider, model: r.model, stopReason: r.stopReason, answers: r.answers }}, {ROUNDED});"
    );
    let listed = "const all = await models.getAvailableOfType(\"classifier\", \"llama.cpp\");\n\
         return all.map((m) => `${m.provider}/${m.id} ${m.api} ${m.input}`).join(\"; \");";
    let decision = format!(
        "const r = await models.classify({{ provider: \"llama.cpp\", id: \"julia-decision\" }}, {{\n\
           state: {{ title: \"Fix the login page\" }},\n\
           questions: {{ pick: {{ type: \"choice\", instructions: \"Which?\", criteria: {{ a: \"first\", b: \"second\" }} }}, ok: {{ type: \"bool\", instructions: \"Fine?\", criteria: {{ true: \"yes\", false: \"no\" }} }} }},\n\
         }});\n\
         return JSON.stringify([r.stopReason, r.answers, r.errorMessage], {ROUNDED});"
    );
    let seen = "const r = await models.classify({ provider: \"llama.cpp\", id: \"clef-vision\" }, {\n\
           state: { page: \"settings\" },\n\
           images: [{ type: \"image\", data: \"iVBORw0KGgo=\", mimeType: \"image/png\" }],\n\
           questions: { ok: { type: \"bool\", instructions: \"Fine?\", criteria: { true: \"yes\", false: \"no\" } } },\n\
         });\n\
         return r.stopReason;";
    let outcome = compare(&[listed, &classify, &decision, seen], |_| {});
    assert_eq!(
        outcome.results[0],
        "Script completed\nWall time T seconds\nOutput:\n\nllama.cpp/qwen-small llama-cpp-classify text; llama.cpp/julia-decision typesafe-system-one text; llama.cpp/clef-vision typesafe-system-one text,image"
    );
    let images: Vec<Value> = outcome
        .requests
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["path"] == "/v1/systemone" && r["body"]["model"] == "clef-vision")
        .map(|r| r["body"]["images"].clone())
        .collect();
    assert_eq!(images, [json!(["data:image/png;base64,iVBORw0KGgo="])]);
    let answers: Value =
        serde_json::from_str(outcome.results[1].split_once("\n\n").unwrap().1).unwrap();
    assert_eq!(answers["stopReason"], "stop", "{answers}");
    assert_eq!(answers["answers"]["kind"]["choice"], "bug", "{answers}");
    assert_eq!(answers["answers"]["urgent"]["type"], "bool", "{answers}");
    assert!(
        outcome.results[2].contains("\"stop\""),
        "{}",
        outcome.results[2]
    );
    // The score's levels were found only by looking deeper than the first 256 tokens.
    let depths: Vec<u64> = outcome
        .requests
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["path"] == "/completion")
        .map(|r| r["body"]["n_probs"].as_u64().unwrap())
        .collect();
    assert!(depths.contains(&4096), "{depths:?}");
}

#[test]
fn classifier_failures_are_results_or_errors_as_16() {
    let unranked = "const r = await models.classify({ provider: \"llama.cpp\", id: \"qwen-small\" }, {\n\
           state: { list: [] },\n\
           questions: { missing: { type: \"bool\", instructions: \"Is anything missing?\", criteria: { true: \"something is missing\", false: \"all there\" } } },\n\
         });\n\
         return [r.stopReason, r.errorMessage, JSON.stringify(r.answers)].join(\" | \");";
    let images = "const r = await models.classify({ provider: \"llama.cpp\", id: \"qwen-small\" }, {\n\
           state: {}, images: [{ type: \"image\", data: \"iVBORw0KGgo=\", mimeType: \"image/png\" }],\n\
           questions: { ok: { type: \"bool\", instructions: \"Fine?\", criteria: { true: \"yes\", false: \"no\" } } },\n\
         });\n\
         return [r.stopReason, r.errorMessage].join(\" | \");";
    let bad_type = "await models.classify({ provider: \"llama.cpp\", id: \"qwen-small\" }, { state: {}, questions: { q: { type: \"rank\", instructions: \"?\" } } });";
    let few = "const r = await models.classify({ provider: \"llama.cpp\", id: \"qwen-small\" }, { state: {}, questions: { q: { type: \"score\", instructions: \"?\", criteria: [\"only\"] } } });\n\
         return [r.stopReason, r.errorMessage].join(\" | \");";
    let refused = "const r = await models.classify({ provider: \"llama.cpp\", id: \"qwen-small\" }, { state: { a: 1 }, questions: { ok: { type: \"bool\", instructions: \"Fine?\", criteria: { true: \"yes\", false: \"no\" } } } });\n\
         return [r.stopReason, r.errorMessage].join(\" | \");";
    let outcome = compare(&[unranked, images, bad_type, few], |_| {});
    assert!(
        outcome.results[0].contains(
            "error | llama.cpp did not rank labels No for missing within the top 32768 tokens | {}"
        ),
        "{}",
        outcome.results[0]
    );
    assert!(
        outcome.results[1]
            .contains("error | Model llama.cpp/qwen-small does not accept image input"),
        "{}",
        outcome.results[1]
    );
    assert!(
        outcome.results[2].contains("context.questions.q.type must be"),
        "{}",
        outcome.results[2]
    );
    assert!(
        outcome.results[3].contains("error | A score question needs 2 to 10 levels, got 1"),
        "{}",
        outcome.results[3]
    );
    // A server error status is the result's error message.
    let outcome = compare(&[refused], |server| {
        let mut settings = LlamaSettings::default();
        router(server);
        settings.classify = Vec::new();
        settings.completion_status = Some(400);
        server.set_llama(settings);
    });
    assert!(
        outcome.results[0].contains("error | llama.cpp error (400): "),
        "{}",
        outcome.results[0]
    );
}
