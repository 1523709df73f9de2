//! `images.blockImages`: images kept out of what models are sent (pi 1.6's defence in
//! depth): each image of a user or tool-result message becomes the text "Image reading is
//! disabled.", once per run of consecutive images.

use pi_ai::{InputBlock, Message, SharedVec, UserContent};

/// The text that stands in for a blocked image.
pub const BLOCKED: &str = "Image reading is disabled.";

/// `blocks` with images replaced (`None` when there were none).
fn without_images(blocks: &[InputBlock]) -> Option<SharedVec<InputBlock>> {
    if !blocks.iter().any(|b| matches!(b, InputBlock::Image(_))) {
        return None;
    }
    let mut out: Vec<InputBlock> = Vec::with_capacity(blocks.len());
    let is_blocked =
        |b: &InputBlock| matches!(b, InputBlock::Text(t) if t.text.as_str() == BLOCKED);
    for block in blocks {
        let block = match block {
            InputBlock::Image(_) => InputBlock::text(BLOCKED),
            other => other.clone(),
        };
        if is_blocked(&block) && out.last().is_some_and(is_blocked) {
            continue;
        }
        out.push(block);
    }
    Some(out.into())
}

/// `messages` with the images of user and tool-result messages replaced.
pub fn block_images(messages: &mut [Message]) {
    for message in messages {
        match message {
            Message::User(user) => {
                if let UserContent::Blocks(blocks) = &user.content
                    && let Some(replaced) = without_images(blocks)
                {
                    user.content = UserContent::Blocks(replaced);
                }
            }
            Message::ToolResult(result) => {
                if let Some(replaced) = without_images(&result.content) {
                    std::sync::Arc::make_mut(result).content = replaced;
                }
            }
            _ => {}
        }
    }
}
