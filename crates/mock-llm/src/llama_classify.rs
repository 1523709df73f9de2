//! The llama.cpp server endpoints a classifier call uses, answered from the test's rules:
//! `POST /tokenize` (a word-level stand-in tokenizer: each run of letters and digits is
//! one token, any other character is one), `POST /apply-template` (a ChatML prompt that
//! opens a thinking block), `POST /completion` (the next token's ranked log-probabilities)
//! and `POST /v1/systemone` (a decision model's answers). Every body is recorded.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::state::Shared;

/// What the next token may be when the prompt contains `when` (empty: any prompt); the
/// first rule that matches answers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClassifyRule {
    pub when: String,
    pub tokens: Vec<RankedToken>,
}

/// A candidate next token: its text, log-probability and rank (0 is the most likely). A
/// token is listed only when its rank is within the request's `n_probs`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RankedToken {
    pub token: String,
    pub logprob: f64,
    pub rank: u64,
}

/// The pieces of `text`: runs of letters and digits, and every other character alone.
pub fn pieces(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        out.push(c.to_string());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// A piece's token id (FNV-1a, so every run and both pis agree).
pub fn token_id(piece: &str) -> u64 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in piece.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    u64::from(hash % 150_000) + 10
}

fn body_of(bytes: &Bytes) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

async fn tokenize(State(shared): State<Arc<Shared>>, bytes: Bytes) -> Response {
    let body = body_of(&bytes);
    shared.llama.record("/tokenize", body.clone());
    let content = body["content"].as_str().unwrap_or_default();
    let tokens: Vec<u64> = pieces(content).iter().map(|p| token_id(p)).collect();
    Json(json!({ "tokens": tokens })).into_response()
}

async fn apply_template(State(shared): State<Arc<Shared>>, bytes: Bytes) -> Response {
    let body = body_of(&bytes);
    shared.llama.record("/apply-template", body.clone());
    let mut prompt = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        let content = message["content"].as_str().unwrap_or_default();
        prompt.push_str(&format!("<|im_start|>{role}\n{content}<|im_end|>\n"));
    }
    prompt.push_str("<|im_start|>assistant\n<think>");
    Json(json!({ "prompt": prompt })).into_response()
}

async fn completion(State(shared): State<Arc<Shared>>, bytes: Bytes) -> Response {
    let body = body_of(&bytes);
    shared.llama.record("/completion", body.clone());
    let settings = shared.llama.settings();
    if let Some(status) = settings.completion_status {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = json!({"error": {"code": status.as_u16(), "message": "the stand-in refused", "type": "server_error"}});
        return (status, Json(message)).into_response();
    }
    let prompt = body["prompt"].as_str().unwrap_or_default();
    let depth = body["n_probs"].as_u64().unwrap_or(0);
    let rule = settings
        .classify
        .iter()
        .find(|rule| prompt.contains(&rule.when));
    let mut ranked: Vec<&RankedToken> = rule
        .map(|r| r.tokens.iter().filter(|t| t.rank < depth).collect())
        .unwrap_or_default();
    ranked.sort_by_key(|t| t.rank);
    let top: Vec<Value> = ranked
        .iter()
        .map(|t| json!({"id": token_id(&t.token), "token": t.token, "logprob": t.logprob, "bytes": t.token.as_bytes()}))
        .collect();
    let first = top
        .first()
        .cloned()
        .unwrap_or(json!({"id": 0, "token": "", "logprob": 0.0}));
    Json(json!({
        "content": first["token"],
        "completion_probabilities": [{
            "id": first["id"], "token": first["token"], "logprob": first["logprob"],
            "top_logprobs": top,
        }],
    }))
    .into_response()
}

async fn system_one(State(shared): State<Arc<Shared>>, bytes: Bytes) -> Response {
    let body = body_of(&bytes);
    shared.llama.record("/v1/systemone", body);
    match shared.llama.settings().system_one {
        Some(answer) => Json(answer).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": {"message": "no decision model here"}})),
        )
            .into_response(),
    }
}

/// The classification routes.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/tokenize", post(tokenize))
        .route("/apply-template", post(apply_template))
        .route("/completion", post(completion))
        .route("/v1/systemone", post(system_one))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_after_a_newline_is_one_more_token() {
        assert_eq!(pieces("\nYes"), ["\n", "Yes"]);
        assert_eq!(pieces("a, b1"), ["a", ",", " ", "b1"]);
        assert_ne!(token_id("Yes"), token_id("No"));
    }
}
