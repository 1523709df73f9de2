//! The transcript's system messages for models that take them mid-conversation (pi-ai
//! 1.6's `resolveTranscript`): the leading system prompt, the text of a later update, and
//! where each update stands in the conversation once it is transformed for the model.

use crate::transform::transform_messages_placing;
use crate::types::{Context, Message, Model, SystemMessage};

impl SystemMessage {
    /// The whole text (pi-ai's `getSystemMessageText`): the content, then every section
    /// set, the empty ones left out, joined by blank lines.
    pub fn full_text(&self) -> String {
        let parts = std::iter::once(self.content.as_str())
            .chain(self.sections.iter().filter_map(|(_, text)| text.as_deref()))
            .filter(|part| !part.is_empty());
        parts.collect::<Vec<_>>().join("\n\n")
    }

    /// The text of an update (pi-ai's `renderSystemMessageUpdate`): the content, then each
    /// section said to be updated or removed.
    pub fn update_text(&self) -> String {
        let mut parts = Vec::new();
        if !self.content.is_empty() {
            parts.push(self.content.clone());
        }
        for (name, text) in &self.sections {
            parts.push(match text {
                Some(text) => format!("Updated system prompt section \"{name}\":\n\n{text}"),
                None => format!("Removed system prompt section \"{name}\"."),
            });
        }
        parts.join("\n\n")
    }

    /// The names of the tools it withdraws that it does not declare again.
    pub fn withdrawn_tools(&self) -> impl Iterator<Item = &str> {
        self.tools_removed
            .iter()
            .filter(|name| !self.tools_added.iter().any(|tool| &tool.name == *name))
            .map(String::as_str)
    }
}

/// The system prompt `messages` add up to, as a model that folds them gets it (pi-ai's
/// `getCurrentSystemMessage`, then its text): every content, then the sections by name,
/// a section set again keeping its place and one removed and set again going last.
/// `None` when there is no system message.
pub fn folded_prompt(messages: &[SystemMessage]) -> Option<String> {
    if messages.is_empty() {
        return None;
    }
    let mut contents: Vec<&str> = Vec::new();
    let mut sections: Vec<(&str, &str)> = Vec::new();
    for message in messages {
        if !message.content.is_empty() {
            contents.push(&message.content);
        }
        for (name, text) in &message.sections {
            let at = sections.iter().position(|(n, _)| n == name);
            match (at, text.as_deref()) {
                (Some(at), Some(text)) => sections[at].1 = text,
                (None, Some(text)) => sections.push((name, text)),
                (Some(at), None) => {
                    sections.remove(at);
                }
                (None, None) => {}
            }
        }
    }
    let content = contents.join("\n\n");
    let parts = std::iter::once(content.as_str())
        .chain(sections.iter().map(|(_, text)| *text))
        .filter(|part| !part.is_empty());
    Some(parts.collect::<Vec<_>>().join("\n\n"))
}

/// Whether `model` takes system messages after the conversation started
/// (`compat.supportsMidConvoSystemMessages`).
pub fn supports_mid_convo_system_messages(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_mid_convo_system_messages)
        .unwrap_or(false)
}

/// The transcript as a model with mid-conversation system messages gets it.
#[derive(Debug, Clone, Copy)]
pub struct Transcript<'a> {
    /// The system message the transcript opens with: the leading system prompt and tools.
    pub leading: Option<&'a SystemMessage>,
    /// The later ones, in order.
    pub updates: &'a [SystemMessage],
}

impl<'a> Transcript<'a> {
    /// The transcript of `context` for `model`; `None` when the model folds system messages
    /// into the leading prompt or the context carries none (then `system_prompt` and
    /// `tools` are the whole system state).
    pub fn of(model: &Model, context: &'a Context) -> Option<Self> {
        if !supports_mid_convo_system_messages(model) || context.system_messages.is_empty() {
            return None;
        }
        let all = context.system_messages.as_slice();
        Some(match all.split_first() {
            Some((first, rest)) if first.at == 0 => Self {
                leading: Some(first),
                updates: rest,
            },
            _ => Self {
                leading: None,
                updates: all,
            },
        })
    }

    /// The leading system prompt: the opening message's whole text.
    pub fn leading_prompt(&self) -> Option<String> {
        self.leading
            .map(SystemMessage::full_text)
            .filter(|text| !text.is_empty())
    }

    /// Where each update stands (`at`), in order.
    pub fn update_positions(&self) -> Vec<usize> {
        self.updates.iter().map(|update| update.at).collect()
    }
}

/// `context`'s conversation transformed for `model` (see [`transform_messages_placing`]),
/// with `frame`'s system messages moved to where they land in it; a model that folds them
/// into the leading prompt gets none.
pub fn transform_placing(
    model: &Model,
    context: &Context,
    frame: &mut Context,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<Message> {
    if Transcript::of(model, context).is_none() {
        frame.system_messages.clear();
        return crate::transform::transform_messages(&context.messages, model, normalize_id);
    }
    let marks: Vec<usize> = context.system_messages.iter().map(|m| m.at).collect();
    let (messages, placed) =
        transform_messages_placing(&context.messages, model, normalize_id, &marks);
    frame.system_messages = context.system_messages.clone();
    for (message, at) in frame.system_messages.iter_mut().zip(placed) {
        message.at = at;
    }
    messages
}

/// Updates placed into a transformed conversation: `positions[i]` is the index of the
/// message `updates[i]` goes before (the conversation's length: after the last).
pub struct Placed<'a> {
    updates: &'a [SystemMessage],
    positions: Vec<usize>,
    next: usize,
}

impl<'a> Placed<'a> {
    pub fn new(updates: &'a [SystemMessage], positions: Vec<usize>) -> Self {
        Self {
            updates,
            positions,
            next: 0,
        }
    }

    /// The updates that go before message `index` (and any left behind before it), each
    /// once.
    pub fn before(&mut self, index: usize) -> &'a [SystemMessage] {
        let start = self.next;
        while self.next < self.updates.len()
            && self.positions.get(self.next).is_some_and(|&at| at <= index)
        {
            self.next += 1;
        }
        &self.updates[start..self.next]
    }

    /// The updates not placed yet: those after the last message.
    pub fn rest(&mut self) -> &'a [SystemMessage] {
        let start = self.next;
        self.next = self.updates.len();
        &self.updates[start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(sections: &[(&str, Option<&str>)]) -> SystemMessage {
        SystemMessage {
            sections: sections
                .iter()
                .map(|(n, t)| ((*n).to_owned(), t.map(str::to_owned)))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn texts_are_pi_ais() {
        let message = update(&[("preamble", Some("Be brief.")), ("cwd", None)]);
        assert_eq!(message.full_text(), "Be brief.");
        assert_eq!(
            message.update_text(),
            "Updated system prompt section \"preamble\":\n\nBe brief.\n\n\
             Removed system prompt section \"cwd\"."
        );
    }

    #[test]
    fn a_folded_prompt_keeps_pi_ais_section_order() {
        let messages = [
            update(&[("preamble", Some("A")), ("cwd", Some("C"))]),
            update(&[("addendum", Some("D")), ("preamble", Some("B"))]),
        ];
        assert_eq!(folded_prompt(&messages).as_deref(), Some("B\n\nC\n\nD"));
        let removed = [
            messages[0].clone(),
            update(&[("preamble", None)]),
            update(&[("preamble", Some("E"))]),
        ];
        assert_eq!(folded_prompt(&removed).as_deref(), Some("C\n\nE"));
        assert_eq!(folded_prompt(&[]), None);
    }

    #[test]
    fn updates_are_placed_once_in_order() {
        let updates = [update(&[]), update(&[]), update(&[])];
        let mut placed = Placed::new(&updates, vec![1, 1, 4]);
        assert!(placed.before(0).is_empty());
        assert_eq!(placed.before(1).len(), 2);
        assert!(placed.before(2).is_empty());
        assert_eq!(placed.rest().len(), 1);
    }
}
