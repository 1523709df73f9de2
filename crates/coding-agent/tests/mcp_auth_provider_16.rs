//! HTTP MCP servers with `"auth": {"provider": …}` in `pi mcp list` (pi 1.5.1): the
//! provider's `/login` token is sent, so a signed-in provider lists the server as
//! connected (in ours and pi 1.6.0, `PI_TS16`), and an expired login is refreshed first, at
//! mock-llm's stand-in for Kimi Code's sign-in server (`KIMI_CODE_OAUTH_HOST`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::logins::{configure, now_ms, oauth_status};
use support::mcp::{text, write_config};
use support::oauth::OAuthServer;
use support::rpc::Env;
use support::ts16::{pis, program, run};

fn list(
    env: &Env,
    wrapper: &Option<std::path::PathBuf>,
    vars: &[(&str, &str)],
) -> (Option<i32>, String) {
    let mut command = program(wrapper);
    command.envs(vars.iter().copied());
    let out = run(env, command, &["mcp", "list"]);
    (out.status.code(), text(&out.stdout))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_provider_lists_its_server_as_connected() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let oauth = OAuthServer::start(env.dir.path(), 3600);
        oauth.get("/_grant?token=provider-key-1");
        write_config(
            &env,
            json!({"viaLogin": {"url": oauth.url(), "auth": {"provider": "my-provider"}}}),
        );
        // pi 1.6.0 reads logins of the providers its model registry knows.
        let models = json!({"providers": {"my-provider": {"baseUrl": server.openai_base_url(),
            "api": "openai-completions", "models": [{"id": "m1"}]}}});
        std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(
            env.agent.join("auth.json"),
            json!({"my-provider": {"type": "api_key", "key": "provider-key-1"}}).to_string(),
        )
        .unwrap();
        let (code, listed) = list(&env, &wrapper, &[]);
        assert_eq!(code, Some(0), "{who}: {listed}");
        assert!(
            listed.contains("viaLogin: connected, 1 tool (direct, global)"),
            "{who}: {listed}"
        );
        assert!(!listed.contains("sign in with"), "{who}: {listed}");
    }
}

/// Ours only: pi 1.6.0 refreshes the login at the stand-in here too (it stores the new
/// token), but its `pi mcp list` then sends the server no token at all, so the case cannot
/// be compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_provider_login_is_refreshed_for_the_server() {
    {
        let wrapper = None;
        let server = MockServer::start().await.unwrap();
        configure(&server, json!({"seedRefreshTokens": ["kimi-seed-refresh"]}));
        let env = Env::new(&server, 128_000, json!({}));
        let oauth = OAuthServer::start(env.dir.path(), 3600);
        // Only tokens the stand-in issues are accepted: not the expired one.
        oauth.get("/_grant?prefix=kimi-mock-access-");
        write_config(
            &env,
            json!({"kimi": {"url": oauth.url(), "auth": {"provider": "kimi-coding"}}}),
        );
        let login = json!({"kimi-coding": {"type": "oauth", "access": "kimi-expired-access",
            "refresh": "kimi-seed-refresh", "expires": now_ms() - 60_000}});
        std::fs::write(env.agent.join("auth.json"), login.to_string()).unwrap();
        let host = format!("{}/auth.kimi.com", server.url());
        let (code, listed) = list(&env, &wrapper, &[("KIMI_CODE_OAUTH_HOST", host.as_str())]);
        let status = oauth_status(&server);
        assert_eq!(
            code,
            Some(0),
            "{listed}\n{status}\n{}",
            oauth.get("/_state")
        );
        assert!(listed.contains("kimi: connected, 1 tool"), "{listed}");
        assert_eq!(status["refreshes"], json!(1), "{status}");
        let stored: Value =
            serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
                .unwrap();
        let access = stored["kimi-coding"]["access"].as_str().unwrap();
        assert!(access.starts_with("kimi-mock-access-"), "{stored}");
    }
}
