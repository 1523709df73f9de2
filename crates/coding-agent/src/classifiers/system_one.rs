//! Decision models (`typesafe-system-one`, pi 1.6.0's System One API): the state and the
//! questions go to `<baseUrl>/systemone` as they are (a `bool` question as `noul`), and the
//! server answers every question at once, with its token usage.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::Target;
use super::context::{ClassifierContext, Question};
use super::http::{PostError, post_json};

const LABEL: &str = "System One API";
/// How many images the `images` input takes.
const MAX_DATA_URL_IMAGES: usize = 4;

/// The answers and the usage (`input_tokens`/`output_tokens`) when the server gave it.
pub struct Answered {
    pub answers: Map<String, Value>,
    pub usage: Option<(u64, u64)>,
}

fn wire_request(target: &Target, raw_questions: &Value, context: &ClassifierContext) -> Value {
    let questions: Map<String, Value> = raw_questions
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(id, q)| {
                    let mut q = q.clone();
                    if q["type"] == "bool" {
                        q["type"] = json!("noul");
                    }
                    (id.clone(), q)
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"model": target.id, "state": context.state, "questions": questions})
}

/// Images as data URLs in `images` (the only image input a llama.cpp decision model has).
fn add_images(
    target: &Target,
    context: &ClassifierContext,
    request: &mut Value,
) -> Result<(), String> {
    if context.images.len() > MAX_DATA_URL_IMAGES {
        return Err(format!(
            "{LABEL} accepts at most {MAX_DATA_URL_IMAGES} images for {}, got {}",
            target.id,
            context.images.len()
        ));
    }
    let mut urls = Vec::new();
    for image in &context.images {
        if !matches!(
            image.mime_type.as_str(),
            "image/png" | "image/jpeg" | "image/webp"
        ) {
            return Err(format!(
                "{LABEL} accepts PNG, JPEG, and WebP images for {}, got {}",
                target.id, image.mime_type
            ));
        }
        urls.push(json!(format!(
            "data:{};base64,{}",
            image.mime_type, image.data
        )));
    }
    request["images"] = Value::Array(urls);
    Ok(())
}

fn number(value: &Value, field: &str) -> Result<f64, String> {
    value
        .as_f64()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{LABEL} returned an invalid {field}"))
}

fn parse_answers(value: &Value, context: &ClassifierContext) -> Result<Map<String, Value>, String> {
    let answers = value
        .as_object()
        .ok_or_else(|| format!("{LABEL} returned an unexpected response"))?;
    let mut out = Map::new();
    for (id, question) in &context.questions.0 {
        let answer = answers
            .get(id)
            .filter(|a| a.is_object())
            .ok_or_else(|| format!("{LABEL} did not return an answer for {id}"))?;
        let confidence = || {
            number(&answer["confidence"], &format!("confidence for {id}"))
                .map(|_| answer["confidence"].clone())
        };
        let parsed = match question {
            Question::Choice { .. } => {
                let choice = answer["choice"]
                    .as_str()
                    .filter(|_| answer["type"] == "choice");
                let choice = choice
                    .ok_or_else(|| format!("{LABEL} did not return a choice answer for {id}"))?;
                let probabilities = answer["probabilities"]
                    .as_object()
                    .ok_or_else(|| format!("{LABEL} returned invalid probabilities for {id}"))?;
                let mut by_key = Map::new();
                for (key, p) in probabilities {
                    let field = format!("probability for {id}.{key}");
                    number(p, &field)?;
                    by_key.insert(key.clone(), p.clone());
                }
                json!({"type": "choice", "choice": choice, "probabilities": by_key, "confidence": confidence()?})
            }
            Question::Score { .. } => {
                if answer["type"] != "score" {
                    return Err(format!("{LABEL} did not return a score answer for {id}"));
                }
                number(&answer["score"], &format!("score for {id}"))?;
                json!({"type": "score", "score": answer["score"], "confidence": confidence()?})
            }
            Question::Bool { .. } => {
                if answer["type"] != "noul" {
                    return Err(format!("{LABEL} did not return a bool answer for {id}"));
                }
                number(&answer["noul"], &format!("probability for {id}"))?;
                json!({"type": "bool", "probability": answer["noul"]})
            }
        };
        out.insert(id.clone(), parsed);
    }
    Ok(out)
}

fn token_count(value: &Value) -> u64 {
    value
        .as_f64()
        .filter(|v| v.is_finite() && *v > 0.0)
        .map_or(0, |v| v as u64)
}

/// Asks the decision model every question in one request.
pub async fn classify(
    target: &Target,
    raw_questions: &Value,
    context: &ClassifierContext,
    cancel: &CancellationToken,
) -> Result<Answered, String> {
    let fail = |e: PostError| e.message(&format!("{LABEL} error"));
    let mut request = wire_request(target, raw_questions, context);
    if !context.images.is_empty() {
        if !target.input.iter().any(|i| i == "image") {
            return Err(format!(
                "{LABEL} does not support image input for {}",
                target.id
            ));
        }
        add_images(target, context, &mut request)?;
    }
    let Some(key) = target.api_key.as_deref().filter(|k| !k.is_empty()) else {
        return Err(format!("No API key for provider: {}", target.provider));
    };
    let url = format!("{}/systemone", target.base_url.trim_end_matches('/'));
    let body = post_json(LABEL, &url, Some(key), &request, cancel)
        .await
        .map_err(fail)?;
    if !body.is_object() {
        return Err(format!("{LABEL} returned an unexpected response"));
    }
    let usage = body["usage"].as_object().and_then(|u| {
        (u.contains_key("input_tokens") || u.contains_key("output_tokens")).then(|| {
            (
                token_count(&u["input_tokens"]),
                token_count(&u["output_tokens"]),
            )
        })
    });
    let answers = parse_answers(&body["answers"], context)?;
    Ok(Answered { answers, usage })
}
