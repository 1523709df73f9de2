//! Classification with any llama.cpp chat model (pi 1.6.0's `llama-cpp-classify`): each
//! question becomes a chat prompt through the server's own template (`/apply-template`),
//! and the answer is read from the next token's probabilities over the answer labels
//! (`/completion` with `n_probs`), looking deeper when a label is not ranked.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use futures_util::future::try_join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Target;
use super::answer::{answer, label_probabilities};
use super::context::ClassifierContext;
use super::http::{PostError, post_json};
use super::prompt::{SYSTEM_PROMPT, render_question};

const LABEL: &str = "llama.cpp";
const MIN_READOUT_DEPTH: u64 = 256;
const READOUT_DEPTH_PER_LABEL: u64 = 16;
const READOUT_ESCALATION: [u64; 2] = [4096, 32768];
const UNDERFLOW_LOGPROB: f64 = -1e30;

/// Label tokens already resolved, by server, model and label.
static LABEL_TOKENS: LazyLock<Mutex<HashMap<String, Option<u64>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The server root: the base URL without a trailing `/v1`.
pub fn server_root(base_url: &str) -> String {
    let trimmed = base_url.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_owned()
}

struct Call<'a> {
    target: &'a Target,
    root: String,
    cancel: &'a CancellationToken,
}

impl Call<'_> {
    async fn post(&self, path: &str, body: Value) -> Result<Value, PostError> {
        let url = format!("{}{path}", self.root);
        let key = self.target.api_key.as_deref().filter(|k| !k.is_empty());
        post_json(LABEL, &url, key, &body, self.cancel).await
    }

    async fn tokenize(&self, content: &str) -> Result<Vec<u64>, PostError> {
        let body = json!({"model": self.target.id, "content": content, "add_special": false, "parse_special": false});
        let answer = self.post("/tokenize", body).await?;
        let unexpected =
            || PostError::Other(format!("{LABEL} returned an unexpected tokenization"));
        answer["tokens"]
            .as_array()
            .ok_or_else(unexpected)?
            .iter()
            .map(|token| {
                token
                    .get("id")
                    .unwrap_or(token)
                    .as_u64()
                    .ok_or_else(unexpected)
            })
            .collect()
    }

    /// The one token a label is after a newline, else on its own; `None` when it takes more.
    async fn resolve_label(&self, label: &str) -> Result<Option<u64>, PostError> {
        let after_newline = format!("\n{label}");
        let (newline, with_label) =
            futures_util::try_join!(self.tokenize("\n"), self.tokenize(&after_newline))?;
        if with_label.len() == newline.len() + 1 && with_label.starts_with(&newline) {
            return Ok(with_label.last().copied());
        }
        let alone = self.tokenize(label).await?;
        Ok((alone.len() == 1).then(|| alone[0]))
    }

    async fn label_token(&self, label: &str) -> Result<Option<u64>, PostError> {
        let key = format!("{}\0{}\0{label}", self.root, self.target.id);
        let cached = LABEL_TOKENS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .copied();
        if let Some(found) = cached {
            return Ok(found);
        }
        let found = self.resolve_label(label).await?;
        LABEL_TOKENS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, found);
        Ok(found)
    }

    async fn label_tokens(&self, labels: &[String]) -> Result<Vec<u64>, PostError> {
        let ids = try_join_all(labels.iter().map(|l| self.label_token(l))).await?;
        let model = &self.target.id;
        let mut tokens = Vec::with_capacity(ids.len());
        for (label, id) in labels.iter().zip(ids) {
            let Some(id) = id else {
                return Err(PostError::Other(format!(
                    "Label \"{label}\" is not a single token for {model}"
                )));
            };
            if tokens.contains(&id) {
                return Err(PostError::Other(format!(
                    "Labels share a token for {model}: {}",
                    labels.join(", ")
                )));
            }
            tokens.push(id);
        }
        Ok(tokens)
    }

    /// The chat prompt through the model's template, thinking closed if the template opened it.
    async fn render_prompt(&self, content: &str) -> Result<String, PostError> {
        let body = json!({
            "model": self.target.id,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}],
            "chat_template_kwargs": {"enable_thinking": false},
        });
        let answer = self.post("/apply-template", body).await?;
        let prompt = answer["prompt"]
            .as_str()
            .ok_or_else(|| PostError::Other(format!("{LABEL} did not return a prompt")))?;
        Ok(if prompt.ends_with("<think>") {
            format!("{prompt}</think>")
        } else {
            prompt.to_owned()
        })
    }

    /// Each token's log-probability as the next token, if ranked within `depth`.
    async fn next_token_logprobs(
        &self,
        prompt: &str,
        tokens: &[u64],
        depth: u64,
    ) -> Result<Vec<Option<f64>>, PostError> {
        let body = json!({
            "model": self.target.id, "prompt": prompt, "n_predict": 1, "n_probs": depth,
            "post_sampling_probs": false, "cache_prompt": true, "temperature": 0,
        });
        let answer = self.post("/completion", body).await?;
        let ranked = answer["completion_probabilities"][0]["top_logprobs"]
            .as_array()
            .ok_or_else(|| {
                PostError::Other(format!("{LABEL} did not return token probabilities"))
            })?;
        let by_token: HashMap<u64, f64> = ranked
            .iter()
            .filter_map(|entry| Some((entry["id"].as_u64()?, entry["logprob"].as_f64()?)))
            .collect();
        Ok(tokens.iter().map(|t| by_token.get(t).copied()).collect())
    }

    async fn question(
        &self,
        context: &ClassifierContext,
        id: &str,
        temperature: f64,
    ) -> Result<Value, PostError> {
        let rendered = render_question(context, id).map_err(PostError::Other)?;
        let (tokens, prompt) = futures_util::try_join!(
            self.label_tokens(&rendered.labels),
            self.render_prompt(&rendered.content)
        )?;
        let first = MIN_READOUT_DEPTH.max(READOUT_DEPTH_PER_LABEL * tokens.len() as u64);
        let depths = std::iter::once(first).chain(READOUT_ESCALATION);
        let mut logprobs = Vec::new();
        for depth in depths {
            logprobs = self.next_token_logprobs(&prompt, &tokens, depth).await?;
            if logprobs.iter().all(Option::is_some) {
                break;
            }
        }
        let missing: Vec<&str> = rendered
            .labels
            .iter()
            .zip(&logprobs)
            .filter(|(_, l)| l.is_none())
            .map(|(label, _)| label.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(PostError::Other(format!(
                "{LABEL} did not rank labels {} for {id} within the top {} tokens",
                missing.join(", "),
                READOUT_ESCALATION[1]
            )));
        }
        let values: Vec<f64> = logprobs.into_iter().flatten().collect();
        if values.iter().all(|l| *l <= UNDERFLOW_LOGPROB) {
            return Err(PostError::Other(format!(
                "{} gave no probability to any answer label for {id}",
                self.target.id
            )));
        }
        let question = context
            .questions
            .get(id)
            .ok_or_else(|| PostError::Other(format!("Unknown question: {id}")))?;
        Ok(answer(
            question,
            &rendered.keys,
            &label_probabilities(&values, temperature),
        ))
    }
}

/// The answers to every question, one after another; the first failure ends the call.
pub async fn classify(
    target: &Target,
    context: &ClassifierContext,
    cancel: &CancellationToken,
) -> Result<serde_json::Map<String, Value>, String> {
    let fail = |e: PostError| e.message(&format!("{LABEL} error"));
    if !context.images.is_empty() {
        return Err(format!(
            "{LABEL} classification does not support image input"
        ));
    }
    for (id, _) in &context.questions.0 {
        render_question(context, id)?;
    }
    let call = Call {
        target,
        root: server_root(&target.base_url),
        cancel,
    };
    let mut answers = serde_json::Map::new();
    for (id, _) in &context.questions.0 {
        answers.insert(
            id.clone(),
            call.question(context, id, 1.0).await.map_err(fail)?,
        );
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_drops_v1() {
        assert_eq!(server_root("http://h:1/v1/"), "http://h:1");
        assert_eq!(server_root("http://h:1"), "http://h:1");
    }
}
