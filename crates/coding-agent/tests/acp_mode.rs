//! `pi --mode acp`, pi as a native Agent Client Protocol agent, driven by the protocol's
//! official TypeScript SDK (the client of tests/acp/pi-acp-client.mjs, as an editor would
//! drive it), against a scripted model: prompts and their updates, permission requests,
//! cancel, loading and continuing sessions, modes and options. The same conversation also
//! goes through pi-acp (the adapter Zed users put in front of pi) driving pi 1.6.0
//! (`PI_TS16`): the kinds of session updates of each step and the answers must agree, but
//! for the differences `core` leaves out, each with its reason. Skipped when node or the
//! SDK (scripts/install-pi-acp.sh) is missing, unless `PI_TEST_REQUIRE_PI_ACP=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_an_edit_streams_updates_and_a_diff() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}),
    ));
    server.push(Script::text("edited"));
    let steps =
        json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "edit a.txt"}]);
    let (env, lines) = run_native(&server, steps, json!([]));
    assert_eq!(
        std::fs::read_to_string(env.work.join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    let step = updates(&lines, 3);
    assert_eq!(step[0]["sessionUpdate"], "tool_call", "{lines:#?}");
    assert_eq!(step[0]["kind"], "edit");
    let end = step
        .iter()
        .find(|u| u["status"] == "completed")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    let path = env.work.join("a.txt").display().to_string();
    assert_eq!(
        end["content"],
        json!([{"type": "diff", "path": path, "oldText": FILE, "newText": "one\nTWO\nthree\n"}])
    );
    // The answer, then how full the context is.
    let (usage, conversation) = step.split_last().unwrap();
    assert_eq!(usage["sessionUpdate"], "usage_update");
    let last = conversation.last().unwrap();
    assert_eq!(
        (&last["sessionUpdate"], &last["content"]["text"]),
        (&json!("agent_message_chunk"), &json!("edited"))
    );
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_s_question_is_a_permission_request_answered_both_ways() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo allowed"}),
    ));
    server.push(Script::text("ran it"));
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo refused"}),
    ));
    server.push(Script::text("did not run it"));
    let steps = json!([
        {"op": "initialize"}, {"op": "new"},
        {"op": "prompt", "text": "run one"}, {"op": "prompt", "text": "run another"}
    ]);
    let (_env, lines) = run_native(&server, steps, json!(["Yes", "No"]));
    let asked: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("permission").is_some())
        .collect();
    assert_eq!(asked.len(), 2, "{lines:#?}");
    assert_eq!(asked[0]["permission"]["title"], "Run this command?");
    assert_eq!(asked[0]["permission"]["options"], json!(["Yes", "No"]));
    let ended = |step: u64| {
        updates(&lines, step)
            .into_iter()
            .find(|u| u["status"] == "completed" || u["status"] == "failed")
            .cloned()
            .unwrap_or_else(|| panic!("{lines:#?}"))
    };
    assert_eq!(ended(3)["status"], "completed");
    assert!(ended(3)["content"].to_string().contains("allowed"));
    assert_eq!(ended(4)["status"], "failed");
    assert!(ended(4)["content"].to_string().contains("The user said no"));
    assert_eq!(result(&lines, 4)["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_running_command_and_the_prompt_says_cancelled() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo $((6*7))-started; sleep 30"}),
    ));
    server.push(Script::text("after"));
    // Cancelled once the command printed: it runs then, whatever the machine's speed (the
    // command's own text, sent when it starts, does not hold "42-").
    let steps = json!([
        {"op": "initialize"}, {"op": "new"},
        {"op": "prompt", "text": "wait", "cancelOn": "tool_call_update", "cancelOnText": "42-started"},
        {"op": "prompt", "text": "again"}
    ]);
    let (_env, lines) = run_native(&server, steps, json!(["Yes"]));
    assert_eq!(
        result(&lines, 3)["result"]["stopReason"],
        "cancelled",
        "{lines:#?}"
    );
    let ended = updates(&lines, 3)
        .into_iter()
        .find(|u| u["status"] == "failed")
        .cloned()
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(ended["content"].to_string().contains("aborted"), "{ended}");
    // The session goes on.
    assert_eq!(
        result(&lines, 4)["result"]["stopReason"],
        "end_turn",
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_written_by_print_mode_loads_with_its_history() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("read", json!({"path": "a.txt"})));
    server.push(Script::text("It has three lines."));
    let env = fresh_env(&server);
    let printed = support::ts16::run(&env, support::ts16::ours(), &["-p", "What is in a.txt?"]);
    assert!(printed.status.success());
    let file = env.session_files().into_iter().next().unwrap();
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let id = header["id"].as_str().unwrap();
    let steps = json!([{"op": "initialize"}, {"op": "load", "sessionId": id}]);
    let lines = run_in(&env, steps, json!([]));
    assert_eq!(
        result(&lines, 2)["result"]["modes"]["currentModeId"],
        "default",
        "{lines:#?}"
    );
    let kinds: Vec<&str> = updates(&lines, 2)
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ],
        "{lines:#?}"
    );
    assert_eq!(
        updates(&lines, 2)[0]["content"]["text"],
        "What is in a.txt?"
    );
    assert_eq!(
        updates(&lines, 2)[3]["content"]["text"],
        "It has three lines."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_conversation_as_pi_acp_in_front_of_pi_16() {
    if sdk_dir().is_none() {
        return;
    }
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    let script = |server: &MockServer| {
        server.push(Script::tool_call("read", json!({"path": "a.txt"})));
        server.push(Script::tool_call(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}),
        ));
        server.push(Script::text("Done: line two is upper case."));
    };
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "upper-case line two"}]);
    let server = MockServer::start().await.unwrap();
    script(&server);
    let (_env, ours) = run_native(&server, steps.clone(), json!([]));
    script(&server);
    // pi-acp sends its startup notice (pi's version) after answering session/new: it is
    // waited for there, so that it is not taken for part of the answer.
    let mut their_steps = steps;
    their_steps[1]["awaitStartup"] = json!(true);
    let theirs = run_pi_acp(&server, &wrapper, their_steps);
    assert_eq!(
        core(&ours, 3),
        core(&theirs, 3),
        "ours:\n{ours:#?}\npi-acp + pi 1.6.0:\n{theirs:#?}"
    );
    assert_eq!(result(&ours, 3)["result"], result(&theirs, 3)["result"]);
    assert_eq!(core(&ours, 3).1, "Done: line two is upper case.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_mode_and_the_thinking_level_are_set_by_the_editor() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("looked"));
    server.push(Script::text("back"));
    let steps = json!([
        {"op": "initialize"}, {"op": "new"},
        {"op": "setMode", "modeId": "read-only"},
        {"op": "setConfig", "configId": "model", "value": "mock/mock-thinker"},
        {"op": "setConfig", "configId": "thinking", "value": "high"},
        {"op": "prompt", "text": "look"},
        {"op": "setMode", "modeId": "default"},
        {"op": "prompt", "text": "and now"}
    ]);
    let (_env, lines) = run_native(&server, steps, json!([]));
    let created = &result(&lines, 2)["result"];
    assert_eq!(created["modes"]["currentModeId"], "default", "{created}");
    let ids: Vec<&str> = created["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["model", "thinking", "mode"]);
    // The command list: pi's commands, then /compact and /name.
    let names: Vec<&str> = command_lists(&lines)[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.ends_with(&["compact", "name"]), "{names:?}");
    assert_eq!(
        updates(&lines, 3)[0],
        &json!({"sessionUpdate": "current_mode_update", "currentModeId": "read-only"})
    );
    let thinking = result(&lines, 5)["result"]["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "thinking")
        .cloned()
        .unwrap();
    assert_eq!(thinking["currentValue"], "high", "{thinking}");
    let tools = |request: usize| -> Vec<String> {
        server.requests()[request].body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        tools(0),
        ["read"],
        "read-only keeps the active tools that look"
    );
    assert_eq!(tools(1), ["read", "bash", "edit", "write"]);
    assert_eq!(server.requests()[0].body["model"], "mock-thinker");
    assert_eq!(server.requests()[0].body["reasoning_effort"], "high");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_started_in_the_editor_goes_on_with_pi_c() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Noted: the code word is heron."));
    server.push(Script::text("It was heron."));
    let env = fresh_env(&server);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "The code word is heron."}]);
    let lines = run_in(&env, steps, json!([]));
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
    let out = support::ts16::run(
        &env,
        support::ts16::ours(),
        &["-c", "-p", "What was the code word?"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "It was heron.\n");
    // The continued request carries the editor's conversation.
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("The code word is heron.") && sent.contains("Noted: the code word is heron."),
        "{sent}"
    );
    assert_eq!(env.session_files().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_takes_images_embedded_files_and_links() {
    if sdk_dir().is_none() {
        return;
    }
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("seen"));
    let env = fresh_env(&server);
    // A model that reads images.
    let models_path = env.agent.join("models.json");
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["input"] = json!(["text", "image"]);
    std::fs::write(&models_path, models.to_string()).unwrap();
    let notes = env.work.join("notes.md");
    let blocks = json!([
        {"type": "text", "text": "Look at these"},
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "resource", "resource": {"uri": format!("file://{}", notes.display()), "mimeType": "text/markdown", "text": "note body"}},
        {"type": "resource_link", "uri": "file:///src/other.rs", "name": "other.rs"},
    ]);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "blocks": blocks}]);
    let lines = run_in(&env, steps, json!([]));
    assert_eq!(
        result(&lines, 3)["result"]["stopReason"],
        "end_turn",
        "{lines:#?}"
    );
    let body = &server.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let text: String = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert!(
        text.contains(&format!(
            "<file name=\"{}\">\nnote body\n</file>",
            notes.display()
        )),
        "{text}"
    );
    assert!(text.contains("/src/other.rs"), "{text}");
    assert!(text.ends_with("Look at these"), "{text}");
    let image = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "image_url")
        .unwrap_or_else(|| panic!("{user}"));
    assert_eq!(
        image["image_url"]["url"],
        format!("data:image/png;base64,{PNG}")
    );
}
