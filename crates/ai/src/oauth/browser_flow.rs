//! The part every browser sign-in shares: wait for the localhost callback or for a pasted
//! code / redirect URL, whichever comes first.

use tokio_util::sync::CancellationToken;

use super::OAuthError;
use super::callback::CallbackServer;
use super::interaction::{LoginInteraction, LoginPrompt};

/// Where the code came from.
pub(crate) enum CodeSource {
    Callback(String),
    Manual(String),
}

/// Races the callback server (if it could start) against a pasted answer.
pub(crate) async fn callback_or_manual(
    ui: &dyn LoginInteraction,
    server: Option<&mut CallbackServer>,
    message: &str,
    placeholder: &str,
) -> Result<CodeSource, OAuthError> {
    let prompt_cancel = CancellationToken::new();
    let prompt = ui.prompt(
        LoginPrompt::ManualCode {
            message: message.to_owned(),
            placeholder: Some(placeholder.to_owned()),
        },
        prompt_cancel.clone(),
    );
    let Some(server) = server else {
        return prompt.await.map(CodeSource::Manual);
    };
    let mut prompt = prompt;
    tokio::select! {
        code = server.wait() => {
            // The question is moot: cancel it and let it finish (the UI closes it).
            prompt_cancel.cancel();
            let _ = prompt.await;
            code.map(CodeSource::Callback)
        }
        input = &mut prompt => input.map(CodeSource::Manual),
    }
}

/// A pasted answer: a redirect URL, `code#state`, a query string, or the bare code.
pub(crate) fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    if let Ok(url) = reqwest::Url::parse(value)
        && url.has_host()
    {
        let get = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        return (get("code"), get("state"));
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=") {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(value.as_bytes())
            .into_owned()
            .collect();
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        return (get("code"), get("state"));
    }
    (Some(value.to_owned()), None)
}

#[cfg(test)]
mod tests {
    use super::parse_authorization_input as parse;

    #[test]
    fn pasted_forms() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            parse("http://localhost:53692/callback?code=c1&state=s1"),
            (some("c1"), some("s1"))
        );
        assert_eq!(parse("c2#s2"), (some("c2"), some("s2")));
        assert_eq!(parse("code=c3&state=s3"), (some("c3"), some("s3")));
        assert_eq!(parse("  c4 "), (some("c4"), None));
        assert_eq!(parse(""), (None, None));
    }
}
