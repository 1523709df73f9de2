//! An extension that registers `/mcp` replaces the built-in MCP extension, with pi 1.6.0's
//! warning (0.99.0): through ours and pi 1.6.0 (`PI_TS16`), the MCP server configured in
//! `mcp.json` no longer gives the model its tools, and stderr says why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::mcp::{declared, test_server, write_config};
use support::rpc::Env;
use support::ts16::{pis, program, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_registering_mcp_replaces_the_builtin_one() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let (test, _) = test_server(&env, json!({"exposure": "direct"}));
        write_config(&env, json!({ "t": test }));
        let extension = env.work.join("my-mcp.ts");
        std::fs::write(
            &extension,
            "export default function (pi) { pi.registerCommand(\"mcp\", { handler: async () => {} }); }",
        )
        .unwrap();
        let ask = |args: &[&str]| {
            server.clear_queue();
            server.push(Script::text("ok"));
            let before = server.requests().len();
            let mut command = program(&wrapper);
            command.env("PI_EXTENSION_HOST_DIR", &host);
            let out = run(&env, command, args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{who}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let tools = declared(&server.requests()[before].body);
            (String::from_utf8_lossy(&out.stderr).into_owned(), tools)
        };
        // Without the extension the server's tools are offered.
        let (_, tools) = ask(&["-p", "hi"]);
        assert!(
            tools.iter().any(|t| t == "mcp__t__echo"),
            "{who}: {tools:?}"
        );

        let (stderr, tools) = ask(&["-e", extension.to_str().unwrap(), "-p", "hi"]);
        assert!(
            !tools.iter().any(|t| t.starts_with("mcp__")),
            "{who}: {tools:?}"
        );
        let warning = format!(
            "Warning: Extension package \"builtin:mcp\": Extension {} registers command `/mcp`, so built-in extension `mcp` was not loaded. To use `mcp`, run `pi config` and make sure it is enabled under Built-in extensions, then disable or remove the existing extension. We recommend only having one or the other loaded at a time.",
            extension.display()
        );
        assert!(stderr.lines().any(|l| l == warning), "{who}: {stderr}");
    }
}
