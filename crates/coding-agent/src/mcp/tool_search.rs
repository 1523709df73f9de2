//! `tool_search`: finds MCP tools with `deferred` exposure that are not declared yet, ranked
//! by BM25 over their names, descriptions and parameter names, and loads the best matches so
//! they are declared from the model's next call (and stay declared in the session).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const TOOL_SEARCH: &str = "tool_search";
const DEFAULT_LIMIT: usize = 8;

/// What the tool searches, and how it loads what it found.
pub trait SearchScope: Send + Sync {
    /// The tools it may load: deferred and not active yet, once the servers that may have
    /// such tools are connected (or gave up).
    fn candidates(&self) -> BoxFuture<'_, Vec<Arc<dyn AgentTool>>>;
    /// Activates these tools from the next model call on.
    fn load(&self, names: &[String]);
}

/// The `tool_search` tool.
pub struct ToolSearch {
    scope: Arc<dyn SearchScope>,
    parameters: Value,
}

impl ToolSearch {
    pub fn new(scope: Arc<dyn SearchScope>) -> Self {
        Self {
            scope,
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words describing the tool you need."},
                    "limit": {"type": "number", "description": format!("How many tools to load at most (default {DEFAULT_LIMIT}).")}
                },
                "required": ["query"]
            }),
        }
    }
}

impl AgentTool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> &str {
        "Finds tools that were not given to you at the start, such as the tools of MCP servers, and makes the best matches available from your next call. Describe what you need to do; use this before concluding that no tool can do it."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let scope = self.scope.clone();
        Box::pin(async move {
            let query = args["query"].as_str().unwrap_or_default().trim().to_owned();
            if query.is_empty() {
                return Err(ToolError::new("query must not be empty"));
            }
            let limit = match args.get("limit").and_then(Value::as_f64) {
                None => DEFAULT_LIMIT,
                Some(n) if n.fract() == 0.0 && n >= 1.0 => n as usize,
                Some(_) => return Err(ToolError::new("limit must be a positive integer")),
            };
            let candidates = scope.candidates().await;
            let documents: Vec<Document> = candidates
                .iter()
                .map(|t| document(t.as_ref(), None))
                .collect();
            let found: Vec<&Arc<dyn AgentTool>> = rank(&query, &documents, limit)
                .into_iter()
                .map(|i| &candidates[i])
                .collect();
            let names: Vec<String> = found.iter().map(|t| t.name().to_owned()).collect();
            if !names.is_empty() {
                scope.load(&names);
            }
            let text = if found.is_empty() {
                "No matching tools found.".to_owned()
            } else {
                let lines: Vec<String> = found
                    .iter()
                    .map(|t| {
                        let first = t
                            .description()
                            .trim()
                            .lines()
                            .next()
                            .unwrap_or("")
                            .to_owned();
                        format!("- {}: {first}", t.name())
                    })
                    .collect();
                format!(
                    "Loaded {} tool{}. They are available from your next call:\n{}",
                    found.len(),
                    if found.len() == 1 { "" } else { "s" },
                    lines.join("\n")
                )
            };
            let mut result = AgentToolResult::text(text);
            result.details = Some(json!({"loaded": names}));
            Ok(result)
        })
    }
}

/// The searchable text of a tool.
struct Document {
    name_terms: HashSet<String>,
    /// Words of the tool's namespace (an MCP server's name, description, instructions).
    namespace_terms: HashSet<String>,
    local_terms: Vec<String>,
    counts: HashMap<String, usize>,
    length: usize,
    name: String,
}

fn document(tool: &dyn AgentTool, namespace: Option<&str>) -> Document {
    let mut text = vec![tool.description().to_owned()];
    schema_text(tool.parameters(), &mut text, 0);
    let mut counts = HashMap::new();
    for term in tokenize(&text.join(" ")) {
        *counts.entry(term).or_insert(0) += 1;
    }
    let name = tool.name().to_owned();
    let local = name.rsplit("__").next().unwrap_or(&name).to_owned();
    let mut local_terms = tokenize(&local);
    local_terms.dedup();
    Document {
        name_terms: tokenize(&name).into_iter().collect(),
        namespace_terms: namespace
            .map(tokenize)
            .unwrap_or_default()
            .into_iter()
            .collect(),
        local_terms,
        length: counts.values().sum(),
        counts,
        name,
    }
}

/// Descriptions and property names of a schema, recursively.
fn schema_text(schema: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 16 {
        return;
    }
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        out.push(d.to_owned());
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            out.push(name.clone());
            schema_text(property, out, depth + 1);
        }
    }
    if let Some(items) = schema.get("items") {
        schema_text(items, out, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            for v in variants {
                schema_text(v, out, depth + 1);
            }
        }
    }
}

const STOP_WORDS: [&str; 21] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

/// Lowercase words (split at `camelCase` and non-alphanumerics), without stop words, with a
/// naive singular form.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let lower_to_upper =
            c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit());
        let acronym_end = c.is_uppercase()
            && prev.is_some_and(char::is_uppercase)
            && next.is_some_and(char::is_lowercase);
        if lower_to_upper || acronym_end {
            spaced.push(' ');
        }
        spaced.push(c);
    }
    spaced
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| {
            if w.chars().all(|c| c.is_ascii_alphanumeric()) {
                stem(w)
            } else {
                w.to_owned()
            }
        })
        .collect()
}

fn stem(word: &str) -> String {
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..n - 3]);
    }
    if n > 4
        && ["ches", "shes", "sses", "xes", "zes"]
            .iter()
            .any(|s| word.ends_with(s))
    {
        return word[..n - 2].to_owned();
    }
    if n > 3 && word.ends_with('s') && !word.ends_with("ss") {
        return word[..n - 1].to_owned();
    }
    word.to_owned()
}

/// Indices of the best `limit` of `tools` for `query`, each tool with its namespace's text
/// (codemode's `searchTools`).
pub(crate) fn rank_tools(
    query: &str,
    tools: &[(Arc<dyn AgentTool>, Option<String>)],
    limit: usize,
) -> Vec<usize> {
    let documents: Vec<Document> = tools
        .iter()
        .map(|(tool, namespace)| document(tool.as_ref(), namespace.as_deref()))
        .collect();
    rank(query, &documents, limit)
}

/// Indices of the best `limit` documents: a query that is a tool's name first, then the
/// tools matching more query terms, then BM25 score (a term in the name weighs three times).
fn rank(query: &str, documents: &[Document], limit: usize) -> Vec<usize> {
    let terms: Vec<String> = {
        let mut seen = HashSet::new();
        tokenize(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect()
    };
    if terms.is_empty() || documents.is_empty() {
        return Vec::new();
    }
    let (k1, b) = (1.2_f64, 0.75_f64);
    let total = documents.len() as f64;
    let average = (documents.iter().map(|d| d.length).sum::<usize>() as f64 / total).max(1.0);
    let idf: Vec<f64> = terms
        .iter()
        .map(|t| {
            let n = documents
                .iter()
                .filter(|d| {
                    d.name_terms.contains(t)
                        || d.counts.contains_key(t)
                        || d.namespace_terms.contains(t)
                })
                .count() as f64;
            (1.0 + (total - n + 0.5) / (n + 0.5)).ln()
        })
        .collect();
    let bonus: f64 = idf.iter().sum();
    let exact = query
        .trim()
        .to_lowercase()
        .replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
    let mut matches: Vec<(usize, bool, usize, f64)> = Vec::new();
    for (index, d) in documents.iter().enumerate() {
        let norm = k1 * (1.0 - b + b * d.length as f64 / average);
        let mut score = 0.0;
        let mut covered = 0;
        for (term, weight_idf) in terms.iter().zip(&idf) {
            let count = *d.counts.get(term).unwrap_or(&0) as f64;
            let weight = if d.name_terms.contains(term) {
                3.0
            } else {
                0.0
            } + if d.namespace_terms.contains(term) {
                0.5
            } else {
                0.0
            } + count * (k1 + 1.0) / (count + norm);
            if weight > 0.0 {
                covered += 1;
            }
            score += weight_idf * weight;
        }
        if score == 0.0 {
            continue;
        }
        if !d.local_terms.is_empty() && d.local_terms.iter().all(|t| terms.contains(t)) {
            score += bonus;
        }
        let name = d.name.to_lowercase();
        let is_exact = name == exact || name.ends_with(&format!("__{exact}"));
        matches.push((index, is_exact, covered, score));
    }
    matches.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.2.cmp(&a.2))
            .then(b.3.partial_cmp(&a.3).unwrap_or(std::cmp::Ordering::Equal))
    });
    matches.into_iter().take(limit).map(|m| m.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_and_stem() {
        assert_eq!(
            tokenize("getIssues for the HTTPServer"),
            ["get", "issue", "http", "server"]
        );
        assert_eq!(tokenize("searches, boxes"), ["search", "box"]);
    }
}
