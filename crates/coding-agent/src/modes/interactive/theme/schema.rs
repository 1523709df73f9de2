//! The theme file format (the TypeScript pi's `theme-schema.json`) and the color keys.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A color as written in a theme file: `#rrggbb`, a var name, a palette index or `""`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColorValue {
    /// `""`: the terminal's default color.
    Default,
    /// A 256-color palette index.
    Index(u8),
    /// A string starting with `#`; checked to be `#rrggbb` (or `#rgb`) when resolved.
    Hex(String),
    /// `oklch(…)` or `okhsl(…)` (pi 1.6's color functions); checked when resolved.
    Function(String),
    /// A reference to an entry of `vars`.
    Var(String),
}

impl ColorValue {
    /// Classify a string value the way the TypeScript loader does.
    pub fn from_text(text: &str) -> Self {
        if text.is_empty() {
            ColorValue::Default
        } else if text.starts_with('#') {
            ColorValue::Hex(text.to_string())
        } else if text.contains('(') {
            ColorValue::Function(text.to_string())
        } else {
            ColorValue::Var(text.to_string())
        }
    }
}

impl Serialize for ColorValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ColorValue::Default => serializer.serialize_str(""),
            ColorValue::Index(i) => serializer.serialize_u8(*i),
            ColorValue::Hex(s) | ColorValue::Var(s) | ColorValue::Function(s) => {
                serializer.serialize_str(s)
            }
        }
    }
}

struct ColorValueVisitor;

impl Visitor<'_> for ColorValueVisitor {
    type Value = ColorValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a color: \"#rrggbb\", a variable name, \"\" or an integer 0-255")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ColorValue, E> {
        Ok(ColorValue::from_text(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ColorValue, E> {
        u8::try_from(v)
            .map(ColorValue::Index)
            .map_err(|_| E::custom(format!("color index {v} is out of range 0-255")))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ColorValue, E> {
        u8::try_from(v)
            .map(ColorValue::Index)
            .map_err(|_| E::custom(format!("color index {v} is out of range 0-255")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ColorValue, E> {
        Err(E::custom(format!(
            "color index {v} is not an integer 0-255"
        )))
    }
}

impl<'de> Deserialize<'de> for ColorValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ColorValueVisitor)
    }
}

/// A whole theme file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThemeJson {
    /// JSON schema reference (ignored).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The theme's name, used to select it.
    pub name: String,
    /// The background it is made for (`light` or `dark`), when the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub appearance: Option<String>,
    /// Reusable colors that `colors` entries may name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<BTreeMap<String, ColorValue>>,
    /// Every color key of the schema.
    pub colors: ThemeColors,
    /// Optional colors for the HTML export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export: Option<ExportColorsJson>,
}

/// The optional `export` section: HTML export backgrounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportColorsJson {
    /// Page background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_bg: Option<ColorValue>,
    /// Message card background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_bg: Option<ColorValue>,
    /// Info box background.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info_bg: Option<ColorValue>,
}

/// An unknown color key name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown theme color key {0:?}")]
pub struct UnknownKey(pub String);

macro_rules! key_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident $key:tt $doc:tt,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(#[doc = $doc] $variant,)*
        }

        impl $name {
            /// Every key, in schema order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The key's name in theme files.
            pub fn key(self) -> &'static str {
                match self {
                    $($name::$variant => $key,)*
                }
            }

            /// Look a key up by its theme-file name.
            pub fn from_key(key: &str) -> Option<Self> {
                match key {
                    $($key => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownKey;
            fn from_str(s: &str) -> Result<Self, UnknownKey> {
                $name::from_key(s).ok_or_else(|| UnknownKey(s.to_string()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(self.key())
            }
        }
    };
}

macro_rules! theme_keys {
    (
        fg { $($fv:ident $ff:ident $fk:tt $fd:tt,)* }
        optional_fg { $($ofv:ident $off:ident $ofk:tt $ofb:ident $ofd:tt,)* }
        bg { $($bv:ident $bf:ident $bk:tt $bd:tt,)* }
        optional_bg { $($obv:ident $obf:ident $obk:tt $obb:ident $obd:tt,)* }
    ) => {
        key_enum! {
            /// A foreground color key.
            ThemeColor { $($fv $fk $fd,)* $($ofv $ofk $ofd,)* }
        }

        key_enum! {
            /// A background color key.
            ThemeBg { $($bv $bk $bd,)* $($obv $obk $obd,)* }
        }

        /// The `colors` object: the required keys, and the optional ones pi 1.6 fills from
        /// another key when a theme leaves them out.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct ThemeColors {
            $(#[doc = $fd] #[serde(rename = $fk)] pub $ff: ColorValue,)*
            $(#[doc = $ofd] #[serde(rename = $ofk, default, skip_serializing_if = "Option::is_none")] pub $off: Option<ColorValue>,)*
            $(#[doc = $bd] #[serde(rename = $bk)] pub $bf: ColorValue,)*
            $(#[doc = $obd] #[serde(rename = $obk, default, skip_serializing_if = "Option::is_none")] pub $obf: Option<ColorValue>,)*
        }

        impl ThemeColors {
            /// The value written for a foreground key, or its fallback's.
            pub fn fg(&self, key: ThemeColor) -> &ColorValue {
                match key {
                    $(ThemeColor::$fv => &self.$ff,)*
                    $(ThemeColor::$ofv => match &self.$off {
                        Some(value) => value,
                        None => self.fg(ThemeColor::$ofb),
                    },)*
                }
            }

            /// The value written for a background key, or its fallback's.
            pub fn bg(&self, key: ThemeBg) -> &ColorValue {
                match key {
                    $(ThemeBg::$bv => &self.$bf,)*
                    $(ThemeBg::$obv => match &self.$obf {
                        Some(value) => value,
                        None => self.bg(ThemeBg::$obb),
                    },)*
                }
            }
        }

        impl ThemeColor {
            /// The key an optional key falls back to when a theme leaves it out.
            pub fn fallback(self) -> Option<ThemeColor> {
                match self {
                    $(ThemeColor::$ofv => Some(ThemeColor::$ofb),)*
                    _ => None,
                }
            }
        }

        impl ThemeBg {
            /// The key an optional key falls back to when a theme leaves it out.
            pub fn fallback(self) -> Option<ThemeBg> {
                match self {
                    $(ThemeBg::$obv => Some(ThemeBg::$obb),)*
                    _ => None,
                }
            }
        }

        /// Every key `colors` must have.
        pub const REQUIRED_COLOR_KEYS: &[&str] = &[$($fk,)* $($bk,)*];
    };
}

theme_keys! {
    fg {
        Accent accent "accent" "Primary accent: logo, selection, cursor.",
        Border border "border" "Normal borders.",
        BorderAccent border_accent "borderAccent" "Highlighted borders.",
        BorderMuted border_muted "borderMuted" "Subtle borders.",
        Success success "success" "Success states.",
        Error error "error" "Error states.",
        Warning warning "warning" "Warning states.",
        Muted muted "muted" "Secondary text.",
        Dim dim "dim" "Very dim text.",
        Text text "text" "Default text (usually the terminal default).",
        ThinkingText thinking_text "thinkingText" "Thinking block text.",
        UserMessageText user_message_text "userMessageText" "User message text.",
        CustomMessageText custom_message_text "customMessageText" "Extension message text.",
        CustomMessageLabel custom_message_label "customMessageLabel" "Extension message label.",
        ToolTitle tool_title "toolTitle" "Tool call titles.",
        ToolOutput tool_output "toolOutput" "Tool output text.",
        MdHeading md_heading "mdHeading" "Markdown headings.",
        MdLink md_link "mdLink" "Markdown link text.",
        MdLinkUrl md_link_url "mdLinkUrl" "Markdown link URLs.",
        MdCode md_code "mdCode" "Markdown inline code.",
        MdCodeBlock md_code_block "mdCodeBlock" "Markdown code block text.",
        MdCodeBlockBorder md_code_block_border "mdCodeBlockBorder" "Markdown code block fences.",
        MdQuote md_quote "mdQuote" "Markdown quote text.",
        MdQuoteBorder md_quote_border "mdQuoteBorder" "Markdown quote bar.",
        MdHr md_hr "mdHr" "Markdown horizontal rules.",
        MdListBullet md_list_bullet "mdListBullet" "Markdown list bullets.",
        ToolDiffAdded tool_diff_added "toolDiffAdded" "Added diff lines.",
        ToolDiffRemoved tool_diff_removed "toolDiffRemoved" "Removed diff lines.",
        ToolDiffContext tool_diff_context "toolDiffContext" "Diff context lines.",
        SyntaxComment syntax_comment "syntaxComment" "Code comments.",
        SyntaxKeyword syntax_keyword "syntaxKeyword" "Code keywords.",
        SyntaxFunction syntax_function "syntaxFunction" "Function names.",
        SyntaxVariable syntax_variable "syntaxVariable" "Variables and parameters.",
        SyntaxString syntax_string "syntaxString" "String literals.",
        SyntaxNumber syntax_number "syntaxNumber" "Number literals.",
        SyntaxType syntax_type "syntaxType" "Type names.",
        SyntaxOperator syntax_operator "syntaxOperator" "Operators.",
        SyntaxPunctuation syntax_punctuation "syntaxPunctuation" "Punctuation.",
        ThinkingOff thinking_off "thinkingOff" "Editor border, thinking off.",
        ThinkingMinimal thinking_minimal "thinkingMinimal" "Editor border, minimal thinking.",
        ThinkingLow thinking_low "thinkingLow" "Editor border, low thinking.",
        ThinkingMedium thinking_medium "thinkingMedium" "Editor border, medium thinking.",
        ThinkingHigh thinking_high "thinkingHigh" "Editor border, high thinking.",
        ThinkingXhigh thinking_xhigh "thinkingXhigh" "Editor border, extra-high thinking.",
        BashMode bash_mode "bashMode" "Editor border in `!` bash mode.",
    }
    optional_fg {
        ScrollbarTrack scrollbar_track "scrollbarTrack" Muted "Fullscreen scrollbar track.",
        ScrollbarThumb scrollbar_thumb "scrollbarThumb" Text "Fullscreen scrollbar thumb.",
        SearchMatchText search_match_text "searchMatchText" Text "Transcript search match text.",
        ThinkingMax thinking_max "thinkingMax" ThinkingXhigh "Editor border, max thinking.",
    }
    bg {
        SelectedBg selected_bg "selectedBg" "Selected list row.",
        UserMessageBg user_message_bg "userMessageBg" "User message background.",
        CustomMessageBg custom_message_bg "customMessageBg" "Extension message background.",
        ToolPendingBg tool_pending_bg "toolPendingBg" "Running tool call background.",
        ToolSuccessBg tool_success_bg "toolSuccessBg" "Finished tool call background.",
        ToolErrorBg tool_error_bg "toolErrorBg" "Failed tool call background.",
    }
    optional_bg {
        SearchMatchBg search_match_bg "searchMatchBg" SelectedBg "Transcript search match background.",
    }
}

impl ThemeColor {
    /// The editor border color for a thinking level.
    pub fn thinking(level: pi_ai::ThinkingLevel) -> Self {
        use pi_ai::ThinkingLevel as L;
        match level {
            L::Off => ThemeColor::ThinkingOff,
            L::Minimal => ThemeColor::ThinkingMinimal,
            L::Low => ThemeColor::ThinkingLow,
            L::Medium => ThemeColor::ThinkingMedium,
            L::High => ThemeColor::ThinkingHigh,
            L::Xhigh => ThemeColor::ThinkingXhigh,
            L::Max => ThemeColor::ThinkingMax,
        }
    }
}
