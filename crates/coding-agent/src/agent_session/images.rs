//! New images of a session made ready for its model (see [`crate::images`]): the policy of
//! the current model, and the user images of prompts, steering and follow-up messages.

use pi_ai::ImageContent;

use super::Inner;
use crate::images::{ImagePolicy, ResizeOptions, normalize_prompt_images, text_with_hints};

impl Inner {
    /// The image policy of `model` under the session's `images.autoResize` setting.
    pub(super) fn image_policy_for(&self, model: &pi_ai::Model) -> ImagePolicy {
        let auto_resize = self
            .settings
            .get()
            .images
            .and_then(|images| images.auto_resize)
            .unwrap_or(true);
        ImagePolicy {
            auto_resize,
            resize: ResizeOptions::for_model(model),
        }
    }

    /// The image policy of the current model.
    pub(super) fn image_policy(&self) -> ImagePolicy {
        self.image_policy_for(&self.agent.model())
    }

    /// A user's text and images as they enter the conversation: images resized to the
    /// current model's profile, the notes on them appended to the text.
    pub(super) fn prepare_user_images(
        &self,
        text: &str,
        images: &[ImageContent],
    ) -> (String, Vec<ImageContent>) {
        if images.is_empty() {
            return (text.to_owned(), Vec::new());
        }
        let (images, hints) = normalize_prompt_images(images, &self.image_policy());
        (text_with_hints(text, &hints), images)
    }
}
