//! Tests of the whole pipeline: all seven layers together, with fakes.

use serde_json::json;

use super::*;
use crate::pipeline::test_support::{FakeSandbox, FakeTool, NullHost, names, no_updates, strings};

fn model(api: &str, provider: &str) -> pi_ai::Model {
    serde_json::from_value(json!({
        "id": "test-model", "name": "Test", "api": api, "provider": provider,
        "baseUrl": "http://localhost", "reasoning": false, "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 1000, "maxTokens": 100
    }))
    .unwrap()
}

fn full_input(lifecycle: CancellationToken) -> PipelineInput {
    let mut input = PipelineInput::new(
        std::env::temp_dir(),
        &model("google-generative-ai", "google"),
        lifecycle,
    );
    input.custom_tools = vec![FakeTool::arc("deploy")];
    input
        .custom_tool_scopes
        .insert("deploy".into(), "deploy".into());
    input.sandbox = Some(Arc::new(FakeSandbox));
    input.runtime = Some(RuntimeToolsInput {
        host: Arc::new(NullHost),
        session_id: "s-1".into(),
    });
    let reply: Arc<dyn AgentTool> = Arc::new(FakeTool::with_schema(
        "discord_reply",
        json!({"type": "object", "properties": {"text": {"type": ["string", "null"]}}}),
    ));
    input.channel_tools = vec![
        reply.into(),
        ChannelTool::new(FakeTool::arc("discord_send_file")).with_scope("files"),
    ];
    input.policy = serde_json::from_value(json!({"tools": {"deny": ["edit"]}})).unwrap();
    input.target.scopes = strings(&["sessions"]);
    input
}

#[tokio::test]
async fn all_seven_layers_in_order() {
    let lifecycle = CancellationToken::new();
    let pipeline = build_pipeline(full_input(lifecycle.clone())).unwrap();
    let report = &pipeline.report;
    let layer_names: Vec<&str> = report.layers.iter().map(|l| l.layer.as_str()).collect();
    assert_eq!(layer_names, LAYERS.to_vec());

    let base = strings(&["read", "bash", "edit", "write", "deploy"]);
    assert_eq!(report.tools_after("base"), Some(base.as_slice()));
    assert_eq!(report.tools_after("sandbox"), Some(base.as_slice()));
    assert_eq!(report.sandboxed, strings(&["bash"]));
    let mut runtime = base.clone();
    runtime.extend(strings(&RUNTIME_TOOL_NAMES));
    assert_eq!(report.tools_after("runtime"), Some(runtime.as_slice()));
    let mut channel = runtime.clone();
    channel.extend(strings(&["discord_reply", "discord_send_file"]));
    assert_eq!(report.tools_after("channel"), Some(channel.as_slice()));

    let kept = strings(&[
        "read",
        "bash",
        "write",
        "session_branch",
        "session_navigate",
        "agent_interrupt",
        "discord_reply",
    ]);
    assert_eq!(report.tools_after("policy"), Some(kept.as_slice()));
    assert_eq!(report.tools_after("schema"), Some(kept.as_slice()));
    assert_eq!(report.tools_after("cancel"), Some(kept.as_slice()));
    assert_eq!(names(&pipeline.tools), kept);
    let removed: Vec<(&str, &str)> = report
        .removed
        .iter()
        .map(|r| (r.tool.as_str(), r.step.as_str()))
        .collect();
    assert_eq!(
        removed,
        vec![
            ("deploy", "scopes (requires \"deploy\")"),
            ("gateway_reload", "scopes (requires \"admin\")"),
            ("discord_send_file", "scopes (requires \"files\")"),
            ("edit", "tools.deny"),
        ]
    );
    assert!(report.normalized.contains(&"discord_reply".to_owned()));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);

    // Layer 2 survived the later wrappers; layer 6 reached the definition.
    assert_eq!(pipeline.tools[1].description(), "sandboxed bash");
    assert_eq!(
        pipeline.tools[6].definition().parameters["properties"]["text"],
        json!({"type": "string", "nullable": true})
    );

    // Layer 7: once the session is cancelled, no tool starts.
    lifecycle.cancel();
    let err = pipeline.tools[0]
        .execute("c", json!({}), CancellationToken::new(), no_updates())
        .await
        .err()
        .unwrap();
    assert_eq!(err.0, ABORTED_BEFORE_START);

    // The report serializes for the gateway's clients.
    let value = serde_json::to_value(report).unwrap();
    assert_eq!(
        value["removed"][3],
        json!({"tool": "edit", "step": "tools.deny", "stepNumber": 3})
    );
}

#[test]
fn defaults_give_pis_default_tools() {
    let pipeline = build_pipeline(PipelineInput::new(
        std::env::temp_dir(),
        &model("anthropic-messages", "anthropic"),
        CancellationToken::new(),
    ))
    .unwrap();
    assert_eq!(
        names(&pipeline.tools),
        strings(&["read", "bash", "edit", "write"])
    );
    assert!(pipeline.report.removed.is_empty());
    assert!(pipeline.report.sandboxed.is_empty());
}

#[test]
fn dynamic_groups_name_custom_and_channel_tools() {
    let mut input = full_input(CancellationToken::new());
    input.target.scopes = strings(&["*"]);
    input.policy =
        serde_json::from_value(json!({"tools": {"allow": ["group:custom", "group:channel"]}}))
            .unwrap();
    let pipeline = build_pipeline(input).unwrap();
    assert_eq!(
        names(&pipeline.tools),
        strings(&["deploy", "discord_reply", "discord_send_file"])
    );
}

#[test]
fn name_clashes_between_layers_fail() {
    let mut input = full_input(CancellationToken::new());
    input.custom_tools.push(FakeTool::arc("agent_interrupt"));
    let err = build_pipeline(input).err().unwrap();
    assert!(
        matches!(err, PipelineError::DuplicateTool { ref name, layer: "runtime" } if name == "agent_interrupt"),
        "{err}"
    );

    let mut input = full_input(CancellationToken::new());
    input.channel_tools.push(FakeTool::arc("bash").into());
    let err = build_pipeline(input).err().unwrap();
    assert!(
        matches!(
            err,
            PipelineError::DuplicateTool {
                layer: "channel",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn policy_warnings_reach_the_report() {
    let mut input = full_input(CancellationToken::new());
    input.policy =
        serde_json::from_value(json!({"tools": {"profile": "everything", "allow": ["typo"]}}))
            .unwrap();
    let pipeline = build_pipeline(input).unwrap();
    assert_eq!(
        pipeline.report.warnings.len(),
        2,
        "{:?}",
        pipeline.report.warnings
    );
    assert_eq!(pipeline.tools.len(), 8);
}
