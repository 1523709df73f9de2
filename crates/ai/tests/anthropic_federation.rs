//! The access tokens of Anthropic workload identity federation: one exchange serves every
//! request while the token lasts, and a token the API refused (401) is exchanged again on the
//! next request, as the Anthropic SDK pi-ai 1.6 bundles does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use mock_llm::MockServer;
use pi_ai::providers::anthropic_messages::federation::{Federation, bearer_token, invalidate};

#[tokio::test]
async fn a_refused_token_is_exchanged_again_on_the_next_request() {
    let server = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let identity = dir.path().join("identity.jwt");
    std::fs::write(&identity, "eyJhbGciOiJSUzI1NiJ9.cache.sig").unwrap();
    let scoped = BTreeMap::from([
        (
            "ANTHROPIC_FEDERATION_RULE_ID".to_owned(),
            "fdrl_cache".to_owned(),
        ),
        (
            "ANTHROPIC_ORGANIZATION_ID".to_owned(),
            "org-cache".to_owned(),
        ),
        (
            "ANTHROPIC_IDENTITY_TOKEN_FILE".to_owned(),
            identity.display().to_string(),
        ),
    ]);
    let federation = Federation::from_env(Some(&scoped)).unwrap();
    let base = server.url();
    let exchanges = || {
        server
            .requests()
            .iter()
            .filter(|r| r.path == "/v1/oauth/token")
            .count()
    };
    let first = bearer_token(&federation, &base).await.unwrap();
    assert_eq!(bearer_token(&federation, &base).await.unwrap(), first);
    assert_eq!(exchanges(), 1);
    invalidate(&federation, &base);
    let second = bearer_token(&federation, &base).await.unwrap();
    assert_ne!(second, first);
    assert_eq!(exchanges(), 2);
    assert_eq!(bearer_token(&federation, &base).await.unwrap(), second);
    assert_eq!(exchanges(), 2);
}
