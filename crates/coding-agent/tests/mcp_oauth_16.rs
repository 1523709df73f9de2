//! MCP OAuth sign-in hardening of pi 1.x, through `pi mcp login` of ours and of pi 1.6.0
//! (`PI_TS16`) against the test authorization server with a fault turned on: the RFC 9207
//! `iss` of the authorization response, token responses with empty optional fields, and
//! metadata naming a non-HTTP authorization endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use mock_llm::MockServer;
use serde_json::json;
use support::mcp::write_config;
use support::oauth::{OAuthServer, login_by_visiting_full};
use support::rpc::Env;
use support::ts16::ts16;

/// How one sign-in ended: its exit code, whether it said it signed in, and the line that
/// names what went wrong (with the server's port left out).
fn sign_in(program: &Path, faults: &[(&str, &str)]) -> (Option<i32>, bool, Option<String>) {
    sign_in_with(program, faults, false)
}

/// The same; `metadata_url` configures `oauth.authServerMetadataUrl` with the server's own
/// metadata document.
fn sign_in_with(
    program: &Path,
    faults: &[(&str, &str)],
    metadata_url: bool,
) -> (Option<i32>, bool, Option<String>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let oauth = OAuthServer::start_with(env.dir.path(), 3600, faults);
    let mut config = json!({"url": oauth.url()});
    if metadata_url {
        let document = oauth
            .url()
            .replace("/mcp", "/.well-known/oauth-authorization-server");
        config["oauth"] = json!({ "authServerMetadataUrl": document });
    }
    write_config(&env, json!({ "secure": config }));
    let (code, said, errors) = login_by_visiting_full(program, &env);
    let port = oauth.url().replace("/mcp", "");
    let signed_in = said.contains("Signed in to MCP server \"secure\"");
    let problem = format!("{said}\n{errors}")
        .lines()
        .find(|l| l.contains("failed") || l.contains("Invalid") || l.contains("mismatch"))
        .map(|l| l.replace(&port, "<server>"));
    (code, signed_in, problem)
}

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pi"))
}

/// Runs the case through ours, checks it, and compares with pi 1.6.0.
fn compare(faults: &[(&str, &str)], check: impl Fn(&(Option<i32>, bool, Option<String>))) {
    let outcome = sign_in(&ours(), faults);
    check(&outcome);
    if let Some(wrapper) = ts16() {
        let theirs = sign_in(&wrapper, faults);
        assert_eq!(outcome, theirs, "{faults:?}: ours, then pi 1.6.0");
    }
}

#[test]
fn an_iss_naming_the_server_is_accepted() {
    compare(
        &[("OAUTH_REDIRECT_ISS", "issuer")],
        |(code, signed_in, _)| {
            assert_eq!(*code, Some(0));
            assert!(signed_in);
        },
    );
}

#[test]
fn an_iss_naming_another_server_is_refused() {
    compare(
        &[("OAUTH_REDIRECT_ISS", "https://evil.example/")],
        |(code, signed_in, problem)| {
            assert_ne!(*code, Some(0));
            assert!(!signed_in);
            let problem = problem.as_deref().unwrap_or_default();
            assert!(
                problem.contains(
                    r#"OAuth issuer mismatch: expected "<server>/", received "https://evil.example/""#
                ),
                "{problem}"
            );
        },
    );
}

#[test]
fn a_promised_iss_that_is_missing_is_refused() {
    compare(
        &[("OAUTH_PROMISE_ISS", "1")],
        |(code, signed_in, problem)| {
            assert_ne!(*code, Some(0));
            assert!(!signed_in);
            let problem = problem.as_deref().unwrap_or_default();
            assert!(problem.contains("received none"), "{problem}");
        },
    );
}

#[test]
fn a_token_response_with_empty_optional_fields_signs_in() {
    compare(&[("OAUTH_EMPTY_SCOPE", "1")], |(code, signed_in, _)| {
        assert_eq!(*code, Some(0));
        assert!(signed_in);
    });
}

#[test]
fn a_non_http_authorization_endpoint_is_refused() {
    compare(
        &[("OAUTH_AUTHORIZE_ENDPOINT", "javascript:alert(1)")],
        |(code, signed_in, _)| {
            assert_ne!(*code, Some(0));
            assert!(!signed_in);
        },
    );
}

#[test]
fn auth_server_metadata_url_overrides_a_wrong_advertised_server() {
    let wrong = [("OAUTH_RESOURCE_AS", "http://127.0.0.1:9/")];
    let ours_outcome = sign_in_with(&ours(), &wrong, true);
    assert_eq!(ours_outcome.0, Some(0), "{ours_outcome:?}");
    assert!(ours_outcome.1, "{ours_outcome:?}");
    // Without the setting the advertised server is asked, and nobody answers there.
    let without = sign_in_with(&ours(), &wrong, false);
    assert_ne!(without.0, Some(0), "{without:?}");
    if let Some(wrapper) = ts16() {
        assert_eq!(ours_outcome, sign_in_with(&wrapper, &wrong, true));
        assert_eq!(without.0, sign_in_with(&wrapper, &wrong, false).0);
    }
}
