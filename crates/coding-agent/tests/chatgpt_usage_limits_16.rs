//! A ChatGPT subscription's spent usage over OpenAI Responses (pi 1.4.0): the error says
//! where to look (the user's usage page, or for a Business workspace member the workspace
//! admin) and is not retried; ours and pi 1.6.0 (`PI_TS16`) run the same failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::{Fault, Script};
use support::errors::{RESPONSES, compare};

/// A 429 whose error object carries `code`.
fn spent(code: &str) -> Script {
    let body = json!({"error": {"message": "You have hit your usage limit.", "type": "usage_limit_reached", "code": code}});
    Script::default().with_fault(Fault::HttpError {
        status: 429,
        retry_after: None,
        retry_after_ms: None,
        body: Some(body.to_string()),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spent_chatgpt_usage_names_where_to_look_and_is_not_retried_as_in_16() {
    for (code, hint) in [
        (
            "subscription_sharing_usage_limit_exceeded",
            "\nCheck your ChatGPT usage: https://chatgpt.com/settings/usage",
        ),
        (
            "subscription_sharing_workplace_individual_usage_limit_exceeded",
            "\nYou've reached your ChatGPT workspace's usage limit. Ask your workspace admin to increase it at admin.openai.com \u{2192} Workspace \u{2192} Usage limits.",
        ),
    ] {
        let outcome = compare(
            &RESPONSES,
            || vec![spent(code), Script::text("never sent")],
            &["hello"],
            false,
        )
        .await;
        assert_eq!(outcome.requests, 1, "{code}: {outcome:#?}");
        assert_eq!(outcome.count("auto_retry_start"), 0, "{code}: {outcome:#?}");
        let error = outcome.last()["errorMessage"].as_str().unwrap();
        assert!(
            error.contains(code) && error.ends_with(hint),
            "{code}: {error}"
        );
    }
}
