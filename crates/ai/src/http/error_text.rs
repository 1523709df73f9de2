//! The text of an HTTP error status in each provider SDK's wording (OpenAI, Anthropic, pi's
//! proxy, Mistral, the AWS SDK for Bedrock): below the providers, so sending needs none of them.

use serde_json::Value;

use super::ErrorStyle;

/// The SDK-style message for an error status and its body.
pub fn status_message(status: u16, body: &[u8], style: ErrorStyle) -> String {
    if style == ErrorStyle::Proxy {
        let error = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
        return match error {
            Some(error) => format!("Proxy error: {error}"),
            None => {
                let reason = reqwest::StatusCode::from_u16(status)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .unwrap_or("");
                format!("Proxy error: {status} {reason}")
                    .trim_end()
                    .to_owned()
            }
        };
    }
    if style == ErrorStyle::Bedrock {
        return bedrock_status_message(status, None, body);
    }
    let text = String::from_utf8_lossy(body);
    if style == ErrorStyle::Mistral {
        return mistral_status_message(status, text.trim());
    }
    let detail = match serde_json::from_slice::<Value>(body) {
        Ok(json) => {
            let error = match style {
                ErrorStyle::OpenAi
                | ErrorStyle::Proxy
                | ErrorStyle::Mistral
                | ErrorStyle::Bedrock => json.get("error").cloned(),
                ErrorStyle::Anthropic => Some(json),
            };
            match error {
                Some(Value::Null) | None => String::new(),
                Some(error) => match error.get("message") {
                    Some(Value::String(m)) if !m.is_empty() => m.clone(),
                    Some(m) if !m.is_null() && m != &Value::Bool(false) => m.to_string(),
                    _ => error.to_string(),
                },
            }
        }
        Err(_) => text.trim().to_owned(),
    };
    if detail.is_empty() {
        format!("{status} status code (no body)")
    } else {
        format!("{status} {detail}")
    }
}

/// An HTTP error status as pi 1.6.0 words it (`formatProviderError`): the SDK's message,
/// unless the body's `error` object says more and the message does not carry it; then
/// `<status>: <that object's JSON>`. `detail` is what follows the status when a provider
/// puts its own prefix first (`OpenAI API error (429): …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusText {
    pub message: String,
    pub detail: String,
    /// The SDK's own message (`429 Rate limited`), which other texts quote.
    pub sdk: String,
}

/// [`StatusText`] for `status` and `body` in `style`; only the OpenAI SDK's errors carry
/// their body's `error` object, the others keep the SDK's message.
pub fn status_text(status: u16, body: &[u8], style: ErrorStyle) -> StatusText {
    let message = match style {
        ErrorStyle::Bedrock => bedrock_status_message(status, None, body),
        _ => status_message(status, body, style),
    };
    let carried = match style {
        ErrorStyle::OpenAi => serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|json| match json.get("error") {
                Some(Value::Object(error)) if !error.is_empty() => {
                    Some(truncated(Value::Object(error.clone()).to_string().trim()))
                }
                _ => None,
            })
            .filter(|error| !message.contains(error.as_str())),
        _ => None,
    };
    match carried {
        Some(error) => StatusText {
            message: format!("{status}: {error}"),
            detail: error,
            sdk: message,
        },
        None => StatusText {
            detail: message.clone(),
            sdk: message.clone(),
            message,
        },
    }
}

/// pi's cut of a long error body: 4000 characters and a note of how many more there were.
fn truncated(text: &str) -> String {
    const MAX_CHARS: usize = 4000;
    let total = text.chars().count();
    if total <= MAX_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(MAX_CHARS).collect();
    format!("{head}... [truncated {} chars]", total - MAX_CHARS)
}

/// The Mistral SDK's error text as pi words it: the raw body (trimmed, at most 4000
/// characters), or the SDK's own sentence when the body is empty.
fn mistral_status_message(status: u16, body: &str) -> String {
    const MAX_CHARS: usize = 4000;
    if body.is_empty() {
        return format!(
            "Mistral API error ({status}): API error occurred: Status {status}. Body: \"\""
        );
    }
    let total = body.chars().count();
    if total <= MAX_CHARS {
        return format!("Mistral API error ({status}): {body}");
    }
    let head: String = body.chars().take(MAX_CHARS).collect();
    format!(
        "Mistral API error ({status}): {head}... [truncated {} chars]",
        total - MAX_CHARS
    )
}

/// The AWS SDK's error for an HTTP error status, with pi's readable prefix: the error code
/// comes from `x-amzn-errortype`, else the body's `code` / `__type`; the message from the
/// body's `message` / `Message`.
pub fn bedrock_status_message(status: u16, error_type: Option<&str>, body: &[u8]) -> String {
    let (name, message) = bedrock_error_parts(status, error_type, body);
    format!("{}: {message}", bedrock_exception_prefix(&name))
}

/// The AWS exception name of an HTTP error status (`ValidationException`), as the SDK names
/// the error it throws.
pub fn bedrock_error_name(status: u16, error_type: Option<&str>, body: &[u8]) -> String {
    bedrock_error_parts(status, error_type, body).0
}

/// A Bedrock HTTP error's exception name (as the AWS SDK names the error it throws: the modeled
/// exception, else the body's code, else the status) and its message.
pub fn bedrock_error_parts(status: u16, error_type: Option<&str>, body: &[u8]) -> (String, String) {
    fn sanitize(raw: &str) -> String {
        let mut code = raw;
        if let Some((head, _)) = code.split_once(',') {
            code = head;
        }
        if let Some((head, _)) = code.split_once(':') {
            code = head;
        }
        if let Some((_, tail)) = code.split_once('#') {
            code = tail;
        }
        code.trim().to_owned()
    }
    let text = String::from_utf8_lossy(body);
    let json: Option<serde_json::Value> = if text.trim().is_empty() {
        Some(serde_json::Value::Object(serde_json::Map::new()))
    } else {
        serde_json::from_str(&text).ok()
    };
    let field = |name: &str| {
        json.as_ref()
            .and_then(|j| j.get(name))
            .and_then(|v| match v {
                serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
    };
    let code = error_type
        .map(sanitize)
        .or_else(|| field("code").map(|c| sanitize(&c)))
        .or_else(|| field("__type").map(|c| sanitize(&c)))
        .filter(|c| !c.is_empty());
    let message = match &json {
        Some(_) => field("message")
            .or_else(|| field("Message"))
            .unwrap_or_else(|| "UnknownError".to_owned()),
        // Not JSON (a proxy's page): its text.
        None => text.trim().to_owned(),
    };
    const MODELED: &[&str] = &[
        "AccessDeniedException",
        "InternalServerException",
        "ModelErrorException",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "ResourceNotFoundException",
        "ServiceQuotaExceededException",
        "ServiceUnavailableException",
        "ThrottlingException",
        "ValidationException",
    ];
    let name = match code {
        Some(code) if MODELED.contains(&code.as_str()) => code,
        code => field("code")
            .or_else(|| field("Code"))
            .or(code)
            .unwrap_or_else(|| status.to_string()),
    };
    (name, message)
}

/// The readable prefix pi puts before a Bedrock exception's message (kept stable because
/// retry and overflow detection match on it); other exceptions keep their name.
pub fn bedrock_exception_prefix(name: &str) -> &str {
    match name {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_status_messages() {
        let body = br#"{"error":{"message":"Rate limit reached","type":"requests"}}"#;
        assert_eq!(
            status_message(429, body, ErrorStyle::OpenAi),
            "429 Rate limit reached"
        );
        assert_eq!(
            status_message(500, b"", ErrorStyle::OpenAi),
            "500 status code (no body)"
        );
        assert_eq!(
            status_message(502, b"Bad gateway", ErrorStyle::OpenAi),
            "502 Bad gateway"
        );
        assert_eq!(
            status_message(400, br#"{"detail":"x"}"#, ErrorStyle::OpenAi),
            "400 status code (no body)"
        );
    }

    #[test]
    fn openai_status_texts_carry_the_error_object_as_pi_16_does() {
        let body = br#"{"error":{"message":"Rate limit reached","type":"requests"}}"#;
        let text = status_text(429, body, ErrorStyle::OpenAi);
        assert_eq!(
            text.message,
            r#"429: {"message":"Rate limit reached","type":"requests"}"#
        );
        assert_eq!(
            text.detail,
            r#"{"message":"Rate limit reached","type":"requests"}"#
        );
        // An error object without a message is in the SDK's message already.
        let text = status_text(400, br#"{"error":{"code":"x"}}"#, ErrorStyle::OpenAi);
        assert_eq!(text.message, r#"400 {"code":"x"}"#);
        assert_eq!(text.detail, text.message);
        for (status, body, message) in [
            (500, &b""[..], "500 status code (no body)"),
            (502, b"Bad gateway", "502 Bad gateway"),
            (400, br#"{"error":"plain"}"#, r#"400 "plain""#),
            (400, br#"{"error":{}}"#, "400 {}"),
        ] {
            assert_eq!(
                status_text(status, body, ErrorStyle::OpenAi).message,
                message
            );
        }
        let long = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let text = status_text(500, long.as_bytes(), ErrorStyle::OpenAi);
        assert!(
            text.message.ends_with("... [truncated 1014 chars]"),
            "{}",
            &text.message[4000..]
        );
        // Other SDKs keep their message.
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let text = status_text(529, body, ErrorStyle::Anthropic);
        assert_eq!(
            text.message,
            status_message(529, body, ErrorStyle::Anthropic)
        );
    }

    #[test]
    fn anthropic_status_message_is_compact_body() {
        let body =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            status_message(529, body, ErrorStyle::Anthropic),
            r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        );
    }

    #[test]
    fn bedrock_errors_read_like_the_aws_sdk() {
        let body = br#"{"message":"Too many requests, please wait before trying again."}"#;
        assert_eq!(
            bedrock_status_message(
                429,
                Some("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
                body
            ),
            "Throttling error: Too many requests, please wait before trying again."
        );
        assert_eq!(
            bedrock_status_message(
                400,
                None,
                br#"{"__type":"com.amazonaws.bedrockruntime#ValidationException","Message":"bad"}"#
            ),
            "Validation error: bad"
        );
        assert_eq!(
            bedrock_status_message(
                403,
                Some("AccessDeniedException"),
                br#"{"message":"denied"}"#
            ),
            "AccessDeniedException: denied"
        );
        assert_eq!(bedrock_status_message(500, None, b""), "500: UnknownError");
        assert_eq!(
            bedrock_status_message(418, Some("TeapotException"), br#"{}"#),
            "TeapotException: UnknownError"
        );
        assert_eq!(
            bedrock_status_message(502, None, b"<html>Bad gateway</html>"),
            "502: <html>Bad gateway</html>"
        );
    }
}
