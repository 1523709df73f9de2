//! Which thinking levels a model supports, and clamping a requested level to them.

use crate::types::{Model, ThinkingLevel};

/// The levels a model supports: `off` only for non-reasoning models; `xhigh` and `max` only
/// when the model maps them; any level mapped to `null` is excluded.
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::ALL
        .into_iter()
        .filter(|&level| match model.thinking_level_value(level) {
            Some(None) => false,
            mapped if matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max) => {
                mapped.is_some()
            }
            _ => true,
        })
        .collect()
}

/// The requested level if supported, else the nearest supported level above it, else below.
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    let available = supported_thinking_levels(model);
    if available.contains(&level) {
        return level;
    }
    let all = ThinkingLevel::ALL;
    let requested = all.iter().position(|&l| l == level).unwrap_or(0);
    all[requested..]
        .iter()
        .chain(all[..requested].iter().rev())
        .find(|l| available.contains(l))
        .copied()
        .unwrap_or(ThinkingLevel::Off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ThinkingLevelMap;

    fn reasoning_model(map: Option<ThinkingLevelMap>) -> Model {
        let mut m = crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap();
        m.reasoning = true;
        m.thinking_level_map = map;
        m
    }

    #[test]
    fn non_reasoning_models_only_support_off() {
        let mut m = reasoning_model(None);
        m.reasoning = false;
        assert_eq!(supported_thinking_levels(&m), vec![ThinkingLevel::Off]);
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::High),
            ThinkingLevel::Off
        );
    }

    #[test]
    fn xhigh_needs_a_mapping_and_clamps_down() {
        let m = reasoning_model(None);
        assert!(!supported_thinking_levels(&m).contains(&ThinkingLevel::Xhigh));
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::Xhigh),
            ThinkingLevel::High
        );
        let map = ThinkingLevelMap::from([(ThinkingLevel::Xhigh, Some("max".to_owned()))]);
        let m = reasoning_model(Some(map));
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::Xhigh),
            ThinkingLevel::Xhigh
        );
    }

    #[test]
    fn unsupported_levels_clamp_upward_first() {
        let map =
            ThinkingLevelMap::from([(ThinkingLevel::Off, None), (ThinkingLevel::Minimal, None)]);
        let m = reasoning_model(Some(map));
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::Off),
            ThinkingLevel::Low
        );
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::Minimal),
            ThinkingLevel::Low
        );
        assert_eq!(
            clamp_thinking_level(&m, ThinkingLevel::Medium),
            ThinkingLevel::Medium
        );
    }
}
