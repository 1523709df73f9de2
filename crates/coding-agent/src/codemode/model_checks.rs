//! The checks of a script's classifier and image contexts, with pi 1.6.0's messages: a
//! script learns what shape was expected and where it is described.

use serde_json::Value;

use super::models::describe_value;
use crate::auth_guidance::DOCS_URL;

const CLASSIFIER_CONTEXT_SHAPE: &str = r#"{ state: { ... }, images?: [{ type: "image", data: <base64>, mimeType }], questions: { <id>: { type: "choice", instructions, criteria: { <label>: <meaning> } } | { type: "score", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: "bool", instructions, criteria: { true: <meaning>, false: <meaning> } } } }"#;

fn docs() -> String {
    format!("{DOCS_URL}/codemode.md")
}

fn is_image(block: &Value) -> bool {
    block["type"] == "image" && block["data"].is_string() && block["mimeType"].is_string()
}

fn all_strings<'a>(mut values: impl Iterator<Item = &'a Value>) -> bool {
    let mut any = false;
    let all = values.all(|v| {
        any = true;
        v.is_string()
    });
    any && all
}

/// `models.classify()`'s context: an object state, image blocks, and typed questions.
pub(super) fn classifier_context(context: &Value) -> Result<(), String> {
    let fail = |problem: String| {
        format!(
            "models.classify() {problem}. Expected context: {CLASSIFIER_CONTEXT_SHAPE}. See \"Classify\" in {}.",
            docs()
        )
    };
    if !context.is_object() {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    }
    let state = &context["state"];
    if !state.is_object() {
        return Err(fail(format!(
            "context.state must be an object, got {}",
            describe_value(state)
        )));
    }
    if let Some(images) = context.get("images") {
        let Some(images) = images.as_array() else {
            return Err(fail(format!(
                "context.images must be an array, got {}",
                describe_value(images)
            )));
        };
        if let Some((index, image)) = images.iter().enumerate().find(|(_, i)| !is_image(i)) {
            return Err(fail(format!(
                "context.images[{index}] must be an image block, got {}",
                describe_value(image)
            )));
        }
    }
    let questions = &context["questions"];
    let Some(map) = questions.as_object().filter(|m| !m.is_empty()) else {
        return Err(fail(format!(
            "context.questions must map question IDs to questions, got {}",
            describe_value(questions)
        )));
    };
    for (id, question) in map {
        let at = format!("context.questions.{id}");
        if !question.is_object() {
            return Err(fail(format!(
                "{at} must be a question object, got {}",
                describe_value(question)
            )));
        }
        if !question["instructions"].is_string() {
            return Err(fail(format!("{at}.instructions must be a string")));
        }
        let criteria = &question["criteria"];
        match question["type"].as_str() {
            Some("choice") => {
                if !criteria
                    .as_object()
                    .is_some_and(|c| all_strings(c.values()))
                {
                    return Err(fail(format!(
                        "{at} is a \"choice\" question, so criteria must map each label to its meaning"
                    )));
                }
            }
            Some("score") => {
                if !criteria.as_array().is_some_and(|c| all_strings(c.iter())) {
                    return Err(fail(format!(
                        "{at} is a \"score\" question, so criteria must list the levels as strings, lowest first"
                    )));
                }
            }
            Some("bool") => {
                if !(criteria["true"].is_string() && criteria["false"].is_string()) {
                    return Err(fail(format!(
                        "{at} is a \"bool\" question, so criteria must be {{ true: string, false: string }}"
                    )));
                }
            }
            _ => {
                // `JSON.stringify(undefined)` is `undefined`.
                let given = match question.get("type") {
                    None => "undefined".to_owned(),
                    Some(t) => t.to_string(),
                };
                return Err(fail(format!(
                    "{at}.type must be \"choice\", \"score\", or \"bool\", got {given}"
                )));
            }
        }
    }
    Ok(())
}

/// `models.generateImages()`'s context: a non-empty list of text and image blocks.
pub(super) fn images_context(context: &Value) -> Result<(), String> {
    let fail = |problem: String| {
        format!(
            "models.generateImages() {problem}. Expected context: {{ input: [{{ type: \"text\", text: <prompt> }}, ...optional {{ type: \"image\", data: <base64>, mimeType }} references] }}. See \"Generate images\" in {}.",
            docs()
        )
    };
    if !context.is_object() {
        return Err(fail(format!(
            "expects a context object as its second argument, got {}",
            describe_value(context)
        )));
    }
    let input = &context["input"];
    let Some(blocks) = input.as_array().filter(|b| !b.is_empty()) else {
        return Err(fail(format!(
            "context.input must be a non-empty array of blocks, got {}",
            describe_value(input)
        )));
    };
    for (index, block) in blocks.iter().enumerate() {
        let text = block["type"] == "text" && block["text"].is_string();
        if !text && !is_image(block) {
            return Err(fail(format!(
                "context.input[{index}] must be a text or image block, got {}",
                describe_value(block)
            )));
        }
    }
    Ok(())
}
