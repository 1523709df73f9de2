//! The resize profile images are held to (pi 1.6's `inputLimits.images.resize`, with its
//! defaults), and the policy a session applies: the profile plus `images.autoResize`.

use std::sync::{LazyLock, RwLock};

use pi_ai::{ImageResize, Model};

/// Largest base64 payload by default: 4.5 MiB, headroom below Anthropic's 5 MB limit.
pub const DEFAULT_MAX_BYTES: usize = 4_718_592;
/// Largest width and height by default, in pixels.
pub const DEFAULT_MAX_DIMENSION: u32 = 2000;
/// JPEG quality tried first by default.
pub const DEFAULT_JPEG_QUALITY: u8 = 80;

/// The limits one image is resized to fit (every field filled in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeOptions {
    pub max_width: u32,
    pub max_height: u32,
    /// Largest base64 payload, in bytes (the encoded size must stay below it).
    pub max_bytes: usize,
    pub jpeg_quality: u8,
}

impl Default for ResizeOptions {
    fn default() -> Self {
        ResizeOptions {
            max_width: DEFAULT_MAX_DIMENSION,
            max_height: DEFAULT_MAX_DIMENSION,
            max_bytes: DEFAULT_MAX_BYTES,
            jpeg_quality: DEFAULT_JPEG_QUALITY,
        }
    }
}

impl ResizeOptions {
    /// A model's profile from `models.json`; omitted fields keep the defaults, and values
    /// out of range are clamped (a width of 0 becomes 1, a quality over 100 becomes 100).
    pub fn from_profile(profile: Option<&ImageResize>) -> Self {
        let defaults = ResizeOptions::default();
        let Some(profile) = profile else {
            return defaults;
        };
        let dimension = |value: Option<u64>, default: u32| {
            value.map_or(default, |v| u32::try_from(v).unwrap_or(u32::MAX).max(1))
        };
        ResizeOptions {
            max_width: dimension(profile.max_width, defaults.max_width),
            max_height: dimension(profile.max_height, defaults.max_height),
            max_bytes: profile.max_bytes.map_or(defaults.max_bytes, |v| {
                usize::try_from(v).unwrap_or(usize::MAX)
            }),
            jpeg_quality: profile
                .jpeg_quality
                .map_or(defaults.jpeg_quality, |q| q.clamp(1, 100) as u8),
        }
    }

    /// The profile `model` declares (`inputLimits.images.resize`), else the defaults.
    pub fn for_model(model: &Model) -> Self {
        let profile = model
            .extras
            .input_limits
            .as_ref()
            .and_then(|limits| limits.images.as_ref())
            .and_then(|images| images.resize.as_ref());
        Self::from_profile(profile)
    }
}

/// How new images are treated: resized to `resize` (when `auto_resize`, the
/// `images.autoResize` setting, default on) or only converted to a format models take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImagePolicy {
    pub auto_resize: bool,
    pub resize: ResizeOptions,
}

impl Default for ImagePolicy {
    fn default() -> Self {
        ImagePolicy {
            auto_resize: true,
            resize: ResizeOptions::default(),
        }
    }
}

/// The policy of the model the running session last sent a request to. The `read` tool
/// has no model of its own, so the session records it here before each request (pi 1.6's
/// `ctx.model.inputLimits`); one process runs one session at a time in this respect.
static ACTIVE: LazyLock<RwLock<ImagePolicy>> =
    LazyLock::new(|| RwLock::new(ImagePolicy::default()));

/// Records the policy images read from now on are held to.
pub fn set_active(policy: ImagePolicy) {
    let mut active = ACTIVE.write().unwrap_or_else(|p| p.into_inner());
    *active = policy;
}

/// The policy last recorded with [`set_active`] (the defaults before any).
pub fn active() -> ImagePolicy {
    *ACTIVE.read().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_fields_keep_the_defaults() {
        let profile = ImageResize {
            max_width: Some(1568),
            jpeg_quality: Some(75),
            ..ImageResize::default()
        };
        let options = ResizeOptions::from_profile(Some(&profile));
        assert_eq!(options.max_width, 1568);
        assert_eq!(options.max_height, 2000);
        assert_eq!(options.max_bytes, 4_718_592);
        assert_eq!(options.jpeg_quality, 75);
    }
}
