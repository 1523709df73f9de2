//! Hugging Face for `/llama`'s "Download model…": searching GGUF repositories and reading a
//! repository's quantizations and access rules. The router does the download itself.
//!
//! The hub is `https://huggingface.co`, or `HF_ENDPOINT` when set (Hugging Face's own
//! variable for mirrors; pi 1.6.0 does not read it).

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::LlamaError;

const DEFAULT_HUB: &str = "https://huggingface.co";

/// The quantization at the end of a GGUF file name (`…-Q4_K_M`, `….IQ3_XXS`, `…-BF16`).
static QUANTIZATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[-_.])((?:UD-)?(?:IQ\d(?:_[A-Z0-9]+)+|Q\d(?:_[A-Z0-9]+)+|BF16|F16|F32|MXFP\d(?:_[A-Z0-9]+)*))$",
    )
    .ok()
});
/// The `-00001-of-00003` of a split file.
static SHARD_SUFFIX: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"-\d{5}-of-\d{5}$").ok());

/// A search result.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    pub id: String,
    pub downloads: u64,
}

/// A quantization a repository offers and its total size, when every file's is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantization {
    pub name: String,
    pub size: Option<u64>,
}

/// What a repository needs before downloading.
#[derive(Debug, Clone, PartialEq)]
pub struct RepositoryDetails {
    pub id: String,
    /// `auto` or `manual` when access must be requested.
    pub gated: Option<String>,
    /// Q4_K_M first, then by size.
    pub quantizations: Vec<Quantization>,
}

/// The token for Hugging Face: `HF_TOKEN`, else the first token file of `HF_TOKEN_PATH`,
/// `$HF_HOME/token`, `$XDG_CACHE_HOME/huggingface/token`, `~/.cache/huggingface/token`.
pub fn find_token() -> Option<String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    if let Some(token) = var("HF_TOKEN") {
        return Some(token.trim().to_owned());
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(path) = var("HF_TOKEN_PATH") {
        paths.push(path.into());
    }
    if let Some(home) = var("HF_HOME") {
        paths.push(PathBuf::from(home).join("token"));
    }
    if let Some(cache) = var("XDG_CACHE_HOME") {
        paths.push(PathBuf::from(cache).join("huggingface").join("token"));
    }
    if let Some(home) = var("HOME") {
        paths.push(PathBuf::from(home).join(".cache/huggingface/token"));
    }
    paths.iter().find_map(|path| {
        std::fs::read_to_string(path)
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    })
}

/// Splits `owner/repo:quant` into the repository and the quantization.
pub fn parse_model_name(value: &str) -> (String, Option<String>) {
    let after_slash = value.find('/').map_or(0, |i| i + 1);
    match value[after_slash..].find(':') {
        Some(at) => {
            let colon = after_slash + at;
            (
                value[..colon].to_owned(),
                Some(value[colon + 1..].to_owned()),
            )
        }
        None => (value.to_owned(), None),
    }
}

/// Whether typed text is an exact `owner/repo[:quant]` (Enter takes it as it is).
pub fn is_exact_name(value: &str) -> bool {
    static EXACT: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^[^/\s]+/[^:\s]+(?::[^\s:]+)?$").ok());
    EXACT.as_ref().is_some_and(|re| re.is_match(value))
}

/// The quantization named by a GGUF file path; `None` for projectors and other files.
fn file_quantization(path: &str) -> Option<String> {
    if !path.to_lowercase().ends_with(".gguf") {
        return None;
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    if file.to_lowercase().starts_with("mmproj") {
        return None;
    }
    let stem = &file[..file.len() - 5];
    let stem = match SHARD_SUFFIX.as_ref() {
        Some(re) => re.replace(stem, "").into_owned(),
        None => stem.to_owned(),
    };
    let captures = QUANTIZATION.as_ref()?.captures(&stem)?;
    Some(captures.get(1)?.as_str().to_uppercase())
}

/// The quantizations of a repository's files, summed over shards.
pub fn quantizations(siblings: &[Value]) -> Vec<Quantization> {
    let mut sizes: Vec<(String, u64, bool)> = Vec::new();
    for file in siblings {
        let Some(name) = file
            .get("rfilename")
            .and_then(Value::as_str)
            .and_then(file_quantization)
        else {
            continue;
        };
        let at = match sizes.iter().position(|(n, _, _)| *n == name) {
            Some(at) => at,
            None => {
                sizes.push((name, 0, true));
                sizes.len() - 1
            }
        };
        match file.get("size").and_then(Value::as_u64) {
            Some(size) => sizes[at].1 += size,
            None => sizes[at].2 = false,
        }
    }
    let mut list: Vec<Quantization> = sizes
        .into_iter()
        .map(|(name, total, complete)| Quantization {
            name,
            size: complete.then_some(total),
        })
        .collect();
    list.sort_by(|a, b| {
        let recommended = |q: &Quantization| q.name != "Q4_K_M";
        recommended(a)
            .cmp(&recommended(b))
            .then(a.size.unwrap_or(u64::MAX).cmp(&b.size.unwrap_or(u64::MAX)))
            .then(a.name.cmp(&b.name))
    });
    list
}

/// A Hugging Face client.
#[derive(Clone)]
pub struct HuggingFace {
    hub: String,
    token: Option<String>,
}

impl std::fmt::Debug for HuggingFace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token stays out of every log line.
        f.debug_struct("HuggingFace")
            .field("hub", &self.hub)
            .finish_non_exhaustive()
    }
}

impl HuggingFace {
    /// A client for the hub (`HF_ENDPOINT` or huggingface.co) with the user's token.
    pub fn from_env() -> Self {
        let hub = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_HUB.to_owned());
        HuggingFace {
            hub: hub.trim().trim_end_matches('/').to_owned(),
            token: find_token(),
        }
    }

    async fn get(
        &self,
        url: reqwest::Url,
        cancel: &CancellationToken,
    ) -> Result<Value, LlamaError> {
        let client = pi_ai::http::shared_client().map_err(LlamaError::Hub)?;
        let mut request = client.get(url);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let exchange = async {
            let response = request
                .send()
                .await
                .map_err(|_| LlamaError::HubUnreachable)?;
            let status = response.status();
            let headers = response.headers().clone();
            let text = response.text().await.unwrap_or_default();
            let payload = serde_json::from_str::<Value>(&text).unwrap_or(Value::Null);
            if status.as_u16() == 429 {
                let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
                let delay = header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .filter(|d| *d > 0)
                    .or_else(|| {
                        let limit = header("ratelimit")?;
                        let re = Regex::new(r"(?:^|;)t=(\d+)").ok()?;
                        re.captures(limit)?.get(1)?.as_str().parse().ok()
                    });
                return Err(LlamaError::Hub(match delay {
                    Some(delay) => format!("Hugging Face rate limit reached; retry in {delay}s"),
                    None => "Hugging Face rate limit reached".to_owned(),
                }));
            }
            if !status.is_success() {
                let message = payload
                    .get("error")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("Hugging Face returned HTTP {}", status.as_u16()));
                return Err(LlamaError::Hub(message));
            }
            Ok(payload)
        };
        tokio::select! {
            result = tokio::time::timeout(Duration::from_secs(15), exchange) => {
                result.unwrap_or(Err(LlamaError::Timeout))
            }
            () = cancel.cancelled() => Err(LlamaError::Cancelled),
        }
    }

    /// The 20 most downloaded GGUF repositories matching `query`.
    pub async fn search(
        &self,
        query: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<SearchResult>, LlamaError> {
        let mut url = reqwest::Url::parse(&format!("{}/api/models", self.hub))
            .map_err(|_| LlamaError::InvalidUrl)?;
        url.query_pairs_mut().extend_pairs([
            ("search", query),
            ("filter", "gguf"),
            ("sort", "downloads"),
            ("direction", "-1"),
            ("limit", "20"),
        ]);
        let payload = self.get(url, cancel).await?;
        let Some(list) = payload.as_array() else {
            return Err(LlamaError::Hub(
                "Hugging Face returned invalid search results".into(),
            ));
        };
        Ok(list
            .iter()
            .filter_map(|entry| {
                Some(SearchResult {
                    id: entry.get("id")?.as_str()?.to_owned(),
                    downloads: entry.get("downloads").and_then(Value::as_u64).unwrap_or(0),
                })
            })
            .collect())
    }

    /// A repository's access rule and quantizations.
    pub async fn details(
        &self,
        id: &str,
        cancel: &CancellationToken,
    ) -> Result<RepositoryDetails, LlamaError> {
        let mut url = reqwest::Url::parse(&format!("{}/api/models/", self.hub))
            .map_err(|_| LlamaError::InvalidUrl)?;
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(id.split('/'));
        }
        url.set_query(Some("blobs=true"));
        let payload = self.get(url, cancel).await?;
        if !payload.is_object() {
            return Err(LlamaError::Hub(
                "Hugging Face returned invalid model details".into(),
            ));
        }
        let gated = payload
            .get("gated")
            .and_then(Value::as_str)
            .filter(|g| matches!(*g, "auto" | "manual"))
            .map(str::to_owned);
        let siblings = payload
            .get("siblings")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(RepositoryDetails {
            id: payload
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or(id)
                .to_owned(),
            gated,
            quantizations: quantizations(&siblings),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_names() {
        assert_eq!(
            parse_model_name("ggml-org/gemma-3-GGUF:Q4_K_M"),
            ("ggml-org/gemma-3-GGUF".into(), Some("Q4_K_M".into()))
        );
        assert_eq!(
            parse_model_name("ggml-org/gemma-3-GGUF"),
            ("ggml-org/gemma-3-GGUF".into(), None)
        );
        assert!(is_exact_name("a/b"));
        assert!(is_exact_name("a/b:Q8_0"));
        assert!(!is_exact_name("gemma"));
        assert!(!is_exact_name("a/b:c:d"));
        assert!(!is_exact_name("a/b c"));
    }

    #[test]
    fn quantizations_of_a_repository() {
        let files = json!([
            {"rfilename": "model-Q8_0.gguf", "size": 8000},
            {"rfilename": "model-Q4_K_M.gguf", "size": 4000},
            {"rfilename": "big/model-UD-IQ2_XXS-00001-of-00002.gguf", "size": 100},
            {"rfilename": "big/model-UD-IQ2_XXS-00002-of-00002.gguf", "size": 50},
            {"rfilename": "model.bf16.gguf"},
            {"rfilename": "mmproj-F16.gguf", "size": 1},
            {"rfilename": "README.md", "size": 1}
        ]);
        let list = quantizations(files.as_array().unwrap());
        let names: Vec<(&str, Option<u64>)> =
            list.iter().map(|q| (q.name.as_str(), q.size)).collect();
        assert_eq!(
            names,
            vec![
                ("Q4_K_M", Some(4000)),
                ("UD-IQ2_XXS", Some(150)),
                ("Q8_0", Some(8000)),
                ("BF16", None)
            ]
        );
    }
}
