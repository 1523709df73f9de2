//! When extension modules are evaluated again, through ours and pi 1.6.0 (`PI_TS16`) side
//! by side: a session replaced in the same folder reuses the imported modules (module state
//! survives) while the factories run again and hear `session_start`; `/reload` evaluates
//! the modules afresh.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program_with_host};

/// Counts its factory runs in module state and says so at each `session_start`; `/again`
/// reloads.
const EXTENSION: &str = r#"let loads = 0;
export default function (pi) {
  loads++;
  pi.on("session_start", async (event, ctx) => ctx.ui.notify(`start ${event.reason} ${loads}`, "info"));
  pi.registerCommand("again", { handler: async (args, ctx) => { await ctx.reload(); } });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_sessions_reuse_modules_and_reload_evaluates_them_again() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let path = env.work.join("counter.ts");
        std::fs::write(&path, EXTENSION).unwrap();
        let mut rpc = Rpc::start_program(
            &env,
            program_with_host(&wrapper),
            &["-e", path.to_str().unwrap()],
        );
        let next_start = |rpc: &mut Rpc, expected: &str| {
            let lines = rpc.until(expected, |l| {
                l["method"] == "notify"
                    && l["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("start "))
            });
            assert_eq!(lines.last().unwrap()["message"], expected, "{who}");
        };
        next_start(&mut rpc, "start startup 1");
        rpc.send(json!({"id": "n1", "type": "new_session"}));
        next_start(&mut rpc, "start new 2");
        rpc.send(json!({"id": "r", "type": "prompt", "message": "/again"}));
        next_start(&mut rpc, "start reload 1");
        rpc.send(json!({"id": "n2", "type": "new_session"}));
        next_start(&mut rpc, "start new 2");
        rpc.finish();
    }
}
