//! How `pi mcp login` identifies pi to the authorization server, through ours and pi 1.6.0
//! (`PI_TS16`) against the test authorization server (`tests/fixtures/mcp/oauth_server.py`):
//! pi's Client ID Metadata Document when the server takes documents from public clients
//! (`oauth.clientRegistration` "auto" and "cimd"), dynamic registration under
//! `oauth.clientName` or with "dcr", the scope of a step-up sign-in after
//! `insufficient_scope`, `--timeout` over a stalled authorization server, and the page the
//! browser is shown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::mcp::{text, write_config};
use support::oauth::{Login, OAuthServer, login_visiting};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// One pi's run of a case: a fresh agent dir and authorization server.
struct Case {
    env: Env,
    oauth: OAuthServer,
    _mock: MockServer,
    _runtime: tokio::runtime::Runtime,
}

impl Case {
    fn new(faults: &[(&str, &str)], token_seconds: u32) -> Self {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let mock = runtime.block_on(MockServer::start()).unwrap();
        let env = Env::new(&mock, 128_000, json!({}));
        let oauth = OAuthServer::start_with(env.dir.path(), token_seconds, faults);
        Self {
            env,
            oauth,
            _mock: mock,
            _runtime: runtime,
        }
    }

    /// Configures the server "secure" with these `oauth` settings.
    fn configure(&self, oauth: Value) {
        let mut entry = json!({"url": self.oauth.url()});
        if oauth != Value::Null {
            entry["oauth"] = oauth;
        }
        write_config(&self.env, json!({ "secure": entry }));
    }

    fn login(&self, program: &Path, seconds: u32) -> Login {
        login_visiting(program, &self.env, "secure", seconds)
    }

    /// `pi mcp <args>` of `program`: the exit code and stdout.
    fn mcp(&self, program: &Path, args: &[&str]) -> (Option<i32>, String) {
        let command = if program == ours_path() {
            ours()
        } else {
            ts16_pi(&program.to_path_buf())
        };
        let mut all = vec!["mcp"];
        all.extend_from_slice(args);
        let out = run(&self.env, command, &all);
        (out.status.code(), text(&out.stdout))
    }

    /// The stored state of "secure".
    fn stored(&self) -> Value {
        let all: Value = std::fs::read_to_string(self.env.agent.join("mcp-auth.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null);
        all[format!("mcp__secure|{}", self.oauth.url())].clone()
    }

    /// The server's record of registrations and authorization requests, with the ids that
    /// differ between runs (the callback id of the server URL) named by what they are.
    fn record(&self) -> Value {
        let state = self.oauth.get("/_state");
        let id = callback_id(&self.oauth.url());
        let names: Vec<Value> = state["registrations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["client_name"].clone())
            .collect();
        let authorizations: Vec<Value> = state["authorizations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                json!({
                    "client_id": a["client_id"].as_str().unwrap().replace(&id, "<id>"),
                    "redirect_path": a["redirect_path"].as_str().unwrap().replace(&id, "<id>"),
                    "scope": a["scope"],
                })
            })
            .collect();
        json!({"registered": names, "authorizations": authorizations})
    }
}

fn ours_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pi"))
}

/// The id pi's server-specific document and callback path carry, computed as the test
/// server checks it (`callback_id` of the fixture).
fn callback_id(server_url: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys,hashlib,base64;print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()[:9]).decode())",
            server_url,
        ])
        .output()
        .unwrap();
    text(&out.stdout).trim().to_owned()
}

/// Ours, and pi 1.6.0 when `PI_TS16` names it.
fn pis() -> Vec<PathBuf> {
    let mut all = vec![ours_path()];
    all.extend(ts16());
    all
}

/// Runs `case` through every pi and checks that each saw the same.
fn same_for_all<T: PartialEq + std::fmt::Debug>(case: impl Fn(&Path) -> T) -> T {
    let mut outcomes = pis().into_iter().map(|pi| (case(&pi), pi));
    let (first, _) = outcomes.next().unwrap();
    for (other, pi) in outcomes {
        assert_eq!(first, other, "ours, then {}", pi.display());
    }
    first
}

/// The heading, line and logo of a callback page.
fn page_parts(page: &str) -> (String, String, bool) {
    let between = |open: &str, close: &str| {
        page.split_once(open)
            .and_then(|(_, rest)| rest.split_once(close))
            .map(|(inner, _)| inner.trim().to_owned())
            .unwrap_or_default()
    };
    let logo = between("<div class=\"logo\">", "</div>");
    let colours = ["#F09082", "#4D9ABF", "#F1BE58"];
    let has_logo = logo.starts_with("<svg") && colours.iter().all(|c| logo.contains(c));
    (between("<h1>", "</h1>"), between("<p>", "</p>"), has_logo)
}

#[test]
fn a_server_taking_documents_signs_pi_in_with_its_document_and_refreshes_with_it() {
    // With RFC 9207 `iss`: pi's document for every server, on /callback.
    let with_iss = [
        ("OAUTH_CIMD", "1"),
        ("OAUTH_PROMISE_ISS", "1"),
        ("OAUTH_REDIRECT_ISS", "issuer"),
    ];
    let outcome = same_for_all(|pi| {
        // Access tokens live 2 s: `pi mcp list` refreshes them, with the document as client.
        let case = Case::new(&with_iss, 2);
        case.configure(Value::Null);
        let login = case.login(pi, 60);
        let stored = case.stored();
        let (listed, list) = case.mcp(pi, &["list"]);
        let refreshed = case.oauth.get("/_state")["refreshed"].as_u64().unwrap();
        (
            login.code,
            login
                .said
                .contains("Signed in to MCP server \"secure\" (1 tools)."),
            case.record(),
            stored.get("clientInformation").is_some(),
            listed,
            list.contains("secure: connected, 1 tool"),
            refreshed >= 1,
            page_parts(&login.page),
        )
    });
    assert_eq!(outcome.0, Some(0), "{outcome:?}");
    assert!(outcome.1);
    assert_eq!(
        outcome.2,
        json!({"registered": [], "authorizations": [{
            "client_id": "https://pi.dev/oauth/client.json",
            "redirect_path": "/callback",
            "scope": "mcp.read"
        }]})
    );
    assert!(!outcome.3, "a document client is not stored");
    assert_eq!((outcome.4, outcome.5, outcome.6), (Some(0), true, true));
    assert_eq!(
        outcome.7,
        (
            "Authentication successful".to_owned(),
            "Signed in to the MCP server. You may now close this page.".to_owned(),
            true
        )
    );

    // Without `iss`: the document and callback path of this server, by default and with
    // `clientRegistration: "cimd"`.
    for oauth in [Value::Null, json!({"clientRegistration": "cimd"})] {
        let outcome = same_for_all(|pi| {
            let case = Case::new(&[("OAUTH_CIMD", "1")], 3600);
            case.configure(oauth.clone());
            let login = case.login(pi, 60);
            (login.code, case.record())
        });
        assert_eq!(
            outcome,
            (
                Some(0),
                json!({"registered": [], "authorizations": [{
                    "client_id": "https://pi.dev/oauth/<id>/client.json",
                    "redirect_path": "/callback/<id>",
                    "scope": "mcp.read"
                }]})
            ),
            "{oauth}"
        );
    }
}

#[test]
fn a_client_name_or_dcr_registers_and_cimd_needs_a_server_taking_documents() {
    // `pi mcp add --oauth-client-name`: registered under that name, though documents are
    // taken; "dcr" registers as pi.
    for (option, registered) in [
        (["--oauth-client-name", "Claude Code"], "Claude Code"),
        (["--oauth-client-registration", "dcr"], "pi"),
    ] {
        let outcome = same_for_all(|pi| {
            let case = Case::new(&[("OAUTH_CIMD", "1")], 3600);
            let url = case.oauth.url();
            let mut add = vec!["add", "secure", "--url", url.as_str()];
            add.extend_from_slice(&option);
            assert_eq!(case.mcp(pi, &add).0, Some(0));
            let login = case.login(pi, 60);
            let client = case.stored()["clientInformation"]["client_name"].clone();
            (login.code, case.record(), client)
        });
        assert_eq!(
            outcome,
            (
                Some(0),
                json!({"registered": [registered], "authorizations": [{
                    "client_id": "client-1",
                    "redirect_path": "/callback",
                    "scope": "mcp.read"
                }]}),
                json!(registered)
            ),
            "{option:?}"
        );
    }

    // "cimd" with a server that only registers: refused before the browser.
    let outcome = same_for_all(|pi| {
        let case = Case::new(&[], 3600);
        case.configure(json!({"clientRegistration": "cimd"}));
        let login = case.login(pi, 60);
        (login.code, login.errors, case.record())
    });
    assert_eq!(outcome.0, Some(1));
    assert_eq!(
        outcome.1,
        "Sign-in to MCP server \"secure\" failed: The authorization server does not support Client ID Metadata Documents for public clients; remove oauth.clientRegistration \"cimd\"\n"
    );
    assert_eq!(outcome.2, json!({"registered": [], "authorizations": []}));
}

#[test]
fn a_step_up_sign_in_keeps_the_granted_scope() {
    let outcome = same_for_all(|pi| {
        let case = Case::new(&[], 3600);
        case.configure(Value::Null);
        assert_eq!(case.login(pi, 60).code, Some(0));
        // The server now wants mcp.write too, and names only what is missing.
        case.oauth.get("/_require?scope=mcp.read%20mcp.write");
        let (code, list) = case.mcp(pi, &["list"]);
        let needs = (code, list.contains("secure: needs sign-in"));
        let login = case.login(pi, 60);
        let (code, list) = case.mcp(pi, &["list"]);
        let scope = case.stored()["tokens"]["scope"].clone();
        (
            needs,
            login.code,
            login
                .said
                .contains("Signed in to MCP server \"secure\" (1 tools)."),
            case.record(),
            (code, list.contains("secure: connected, 1 tool")),
            scope,
        )
    });
    assert_eq!(outcome.0, (Some(1), true));
    assert_eq!((outcome.1, outcome.2), (Some(0), true));
    let scopes: Vec<&Value> = outcome.3["authorizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["scope"])
        .collect();
    assert_eq!(scopes, [&json!("mcp.read"), &json!("mcp.read mcp.write")]);
    // The client registered at the first sign-in serves the second.
    assert_eq!(outcome.3["registered"], json!(["pi"]));
    assert_eq!(outcome.4, (Some(0), true));
    assert_eq!(outcome.5, json!("mcp.read mcp.write"));
}

#[test]
fn the_timeout_covers_a_stalled_authorization_server() {
    for stalled in ["/.well-known/oauth-authorization-server", "/register"] {
        let outcome = same_for_all(|pi| {
            let case = Case::new(&[("OAUTH_STALL", stalled)], 3600);
            case.configure(Value::Null);
            let started = Instant::now();
            let login = case.login(pi, 2);
            // Each request alone may take 15 s: the sign-in must end well before that.
            let quick = started.elapsed() < Duration::from_secs(12);
            (login.code, login.errors, quick)
        });
        assert_eq!(
            outcome,
            (
                Some(1),
                "Sign-in to MCP server \"secure\" was cancelled or not completed within 2 seconds.\n"
                    .to_owned(),
                true
            ),
            "{stalled}"
        );
    }
}
