//! The system theme's recipe (pi 1.6's): color families with their hues and saturation,
//! which family each token takes, the contrast levels as target-lightness curves, and the
//! rules saying which level a token needs on which surfaces.

/// A family's OKHSL hue (degrees) and saturation range, and the ANSI palette slot whose
/// color gives its hue and saturation when the terminal reports a palette.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub hue: f64,
    pub min: f64,
    pub max: f64,
    pub slot: u8,
    pub neutral: bool,
}

const fn family(hue: f64, min: f64, max: f64, slot: u8) -> Family {
    Family {
        hue,
        min,
        max,
        slot,
        neutral: false,
    }
}

pub const NEUTRAL: Family = Family {
    hue: 231.49,
    min: 0.02,
    max: 0.08,
    slot: 8,
    neutral: true,
};
const BLUE: Family = family(231.49, 0.1, 0.68, 4);
const GREEN: Family = family(158.68, 0.1, 0.76, 2);
const RED: Family = family(20.0, 0.1, 0.92, 1);
const YELLOW: Family = family(82.36, 0.5, 1.0, 3);
const ORANGE: Family = family(52.0, 0.12, 0.85, 3);
const VIOLET: Family = family(295.0, 0.2, 0.6, 5);
const CALAMINE: Family = family(202.43, 0.1, 0.74, 6);
const THINKING_SLATE: Family = family(231.49, 0.08, 0.2, 4);
const THINKING_BLUE: Family = family(231.49, 0.2, 0.45, 4);
const THINKING_PERIWINKLE: Family = family(263.25, 0.3, 0.6, 6);
const THINKING_VIOLET: Family = family(295.0, 0.4, 0.75, 5);
const THINKING_MAGENTA: Family = family(337.5, 0.5, 0.85, 13);
const THINKING_RED: Family = family(20.0, 0.95, 1.0, 1);

/// Every token of pi 1.6's theme with its family, panels (backgrounds) first.
pub const TOKENS: &[(&str, Family)] = &[
    ("selectedBg", BLUE),
    ("searchMatchBg", ORANGE),
    ("userMessageBg", BLUE),
    ("customMessageBg", VIOLET),
    ("toolPendingBg", NEUTRAL),
    ("toolSuccessBg", GREEN),
    ("toolErrorBg", RED),
    ("text", NEUTRAL),
    ("userMessageText", NEUTRAL),
    ("customMessageText", NEUTRAL),
    ("toolTitle", NEUTRAL),
    ("syntaxOperator", NEUTRAL),
    ("syntaxPunctuation", NEUTRAL),
    ("muted", NEUTRAL),
    ("dim", NEUTRAL),
    ("thinkingText", NEUTRAL),
    ("toolOutput", NEUTRAL),
    ("mdLinkUrl", NEUTRAL),
    ("mdQuote", NEUTRAL),
    ("mdQuoteBorder", NEUTRAL),
    ("mdHr", NEUTRAL),
    ("mdCodeBlockBorder", NEUTRAL),
    ("toolDiffContext", NEUTRAL),
    ("syntaxComment", NEUTRAL),
    ("scrollbarTrack", NEUTRAL),
    ("scrollbarThumb", NEUTRAL),
    ("searchMatchText", NEUTRAL),
    ("borderMuted", NEUTRAL),
    ("accent", VIOLET),
    ("borderAccent", VIOLET),
    ("customMessageLabel", VIOLET),
    ("mdCode", VIOLET),
    ("mdListBullet", VIOLET),
    ("syntaxType", VIOLET),
    ("border", BLUE),
    ("mdLink", BLUE),
    ("syntaxKeyword", BLUE),
    ("syntaxVariable", CALAMINE),
    ("success", GREEN),
    ("mdCodeBlock", GREEN),
    ("toolDiffAdded", GREEN),
    ("bashMode", GREEN),
    ("syntaxNumber", GREEN),
    ("error", RED),
    ("toolDiffRemoved", RED),
    ("warning", YELLOW),
    ("mdHeading", YELLOW),
    ("syntaxFunction", YELLOW),
    ("syntaxString", ORANGE),
    ("thinkingOff", NEUTRAL),
    ("thinkingMinimal", THINKING_SLATE),
    ("thinkingLow", THINKING_BLUE),
    ("thinkingMedium", THINKING_PERIWINKLE),
    ("thinkingHigh", THINKING_VIOLET),
    ("thinkingXhigh", THINKING_MAGENTA),
    ("thinkingMax", THINKING_RED),
];

/// The token's family.
pub fn family_of(token: &str) -> Family {
    TOKENS
        .iter()
        .find(|(name, _)| *name == token)
        .map_or(NEUTRAL, |(_, f)| *f)
}

/// The palette slot of a token: its own (for tokens that would share a hue with a
/// similar one) or its family's.
pub fn slot_of(token: &str) -> u8 {
    match token {
        "syntaxString" => 2,
        "syntaxNumber" => 5,
        "searchMatchBg" => 3,
        _ => family_of(token).slot,
    }
}

/// The panels: backgrounds the other tokens are drawn on.
pub const PANELS: &[&str] = &[
    "userMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "selectedBg",
    "searchMatchBg",
    "customMessageBg",
];

/// Text-level tokens that take the terminal's own foreground.
pub const FOREGROUND_TOKENS: &[&str] = &["text", "userMessageText", "toolTitle"];

/// A target-lightness curve: a polynomial in the surface's OKLab lightness, usable on
/// surfaces of lightness within `reachable`.
#[derive(Debug, Clone, Copy)]
pub struct Curve {
    pub coefficients: [f64; 6],
    pub reachable: (f64, f64),
}

/// A contrast level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Panel,
    Track,
    Thinking0,
    Thinking1,
    Thinking2,
    Thinking3,
    Thinking4,
    Thinking5,
    Thinking6,
    Subtle,
    Thumb,
    Readable,
    Emphasis,
    TextOnPanel,
    Text,
}

impl Level {
    /// The level's curves on dark and on light backgrounds.
    pub fn curves(self) -> (Curve, Curve) {
        match self {
            Level::Panel => (
                Curve {
                    coefficients: [0.29131, -0.39746, 2.33185, -0.85524, -1.2076, 0.86276],
                    reachable: (0.0, 0.979),
                },
                Curve {
                    coefficients: [-3.74073, 27.94549, -78.44258, 112.6798, -79.60015, 22.11277],
                    reachable: (0.348, 1.0),
                },
            ),
            Level::Track => (
                Curve {
                    coefficients: [0.39028, -0.23015, 0.83573, 2.43829, -4.38292, 2.01582],
                    reachable: (0.0, 0.946),
                },
                Curve {
                    coefficients: [
                        -5.24921, 38.37322, -107.28833, 152.10005, -106.17127, 29.18061,
                    ],
                    reachable: (0.368, 1.0),
                },
            ),
            Level::Thinking0 => (
                Curve {
                    coefficients: [0.52988, -0.05809, -0.30924, 4.63567, -6.52933, 2.89108],
                    reachable: (0.0, 0.873),
                },
                Curve {
                    coefficients: [
                        -28.27749, 182.85284, -469.62416, 603.15916, -384.59976, 97.35147,
                    ],
                    reachable: (0.51, 1.0),
                },
            ),
            Level::Thinking1 => (
                Curve {
                    coefficients: [0.55278, -0.03667, -0.45659, 4.95347, -6.90265, 3.0706],
                    reachable: (0.0, 0.858),
                },
                Curve {
                    coefficients: [
                        -37.10484, 235.86282, -596.62344, 754.3633, -474.00763, 118.3551,
                    ],
                    reachable: (0.535, 1.0),
                },
            ),
            Level::Thinking2 => (
                Curve {
                    coefficients: [0.57486, -0.01765, -0.58987, 5.25227, -7.27175, 3.25532],
                    reachable: (0.0, 0.842),
                },
                Curve {
                    coefficients: [
                        -59.89653, 377.05024, -945.07843, 1182.03145, -734.96375, 181.68658,
                    ],
                    reachable: (0.556, 1.0),
                },
            ),
            Level::Thinking3 => (
                Curve {
                    coefficients: [0.59621, -0.00062, -0.71148, 5.53588, -7.6392, 3.44606],
                    reachable: (0.0, 0.827),
                },
                Curve {
                    coefficients: [
                        -72.07122,
                        445.84082,
                        -1099.57352,
                        1353.88793,
                        -829.53392,
                        202.26164,
                    ],
                    reachable: (0.58, 1.0),
                },
            ),
            Level::Thinking4 => (
                Curve {
                    coefficients: [0.61691, 0.01462, -0.82288, 5.80651, -8.00641, 3.64333],
                    reachable: (0.0, 0.811),
                },
                Curve {
                    coefficients: [
                        -110.14338,
                        674.21488,
                        -1645.75941,
                        2004.32367,
                        -1215.15899,
                        293.3183,
                    ],
                    reachable: (0.6, 1.0),
                },
            ),
            Level::Thinking5 => (
                Curve {
                    coefficients: [0.63702, 0.02826, -0.92498, 6.06465, -8.37246, 3.84651],
                    reachable: (0.0, 0.795),
                },
                Curve {
                    coefficients: [
                        -175.47701,
                        1063.54495,
                        -2570.70594,
                        3098.80776,
                        -1860.15527,
                        444.76392,
                    ],
                    reachable: (0.62, 1.0),
                },
            ),
            Level::Thinking6 => (
                Curve {
                    coefficients: [0.65658, 0.04044, -1.01835, 6.30989, -8.73529, 4.05439],
                    reachable: (0.0, 0.779),
                },
                Curve {
                    coefficients: [
                        -183.81712,
                        1094.70055,
                        -2602.68539,
                        3088.71276,
                        -1826.91131,
                        430.75931,
                    ],
                    reachable: (0.643, 1.0),
                },
            ),
            Level::Subtle => (
                Curve {
                    coefficients: [0.56762, -0.02475, -0.5383, 5.12628, -7.10931, 3.17324],
                    reachable: (0.0, 0.848),
                },
                Curve {
                    coefficients: [
                        -232.85459,
                        1376.54473,
                        -3249.11801,
                        3827.91186,
                        -2248.29472,
                        526.55751,
                    ],
                    reachable: (0.657, 1.0),
                },
            ),
            Level::Thumb => (
                Curve {
                    coefficients: [0.60323, 0.00278, -0.73328, 5.57157, -7.68067, 3.46933],
                    reachable: (0.0, 0.823),
                },
                Curve {
                    coefficients: [
                        -82.89897,
                        511.01355,
                        -1255.98095,
                        1540.76821,
                        -940.68087,
                        228.58523,
                    ],
                    reachable: (0.586, 1.0),
                },
            ),
            Level::Readable => (
                Curve {
                    coefficients: [0.66937, 0.04704, -1.06871, 6.43941, -8.9332, 4.17229],
                    reachable: (0.0, 0.77),
                },
                Curve {
                    coefficients: [
                        -1554.52576,
                        8733.56817,
                        -19604.93507,
                        21977.72696,
                        -12300.99599,
                        2749.81288,
                    ],
                    reachable: (0.751, 1.0),
                },
            ),
            Level::Emphasis => (
                Curve {
                    coefficients: [0.7303, 0.07695, -1.31626, 7.1681, -10.14436, 4.92846],
                    reachable: (0.0, 0.712),
                },
                Curve {
                    coefficients: [
                        -4948.31942,
                        26870.91986,
                        -58334.48399,
                        63280.17197,
                        -34298.01053,
                        7430.30146,
                    ],
                    reachable: (0.811, 1.0),
                },
            ),
            Level::TextOnPanel => (
                Curve {
                    coefficients: [0.86713, 0.05232, -0.89428, 4.79014, -5.5432, 1.75023],
                    reachable: (0.0, 0.542),
                },
                Curve {
                    coefficients: [
                        -8570.89457,
                        43954.60805,
                        -90084.00702,
                        92220.6791,
                        -47152.15802,
                        9632.27113,
                    ],
                    reachable: (0.867, 1.0),
                },
            ),
            Level::Text => (
                Curve {
                    coefficients: [0.89242, 0.02311, -0.44862, 2.34417, -0.06084, -2.63844],
                    reachable: (0.0, 0.5),
                },
                Curve {
                    coefficients: [
                        -2004.67048,
                        6664.47299,
                        -6060.70202,
                        -1792.61209,
                        5133.82359,
                        -1939.85583,
                    ],
                    reachable: (0.894, 1.0),
                },
            ),
        }
    }
}

/// A rule: `token` needs `level` on each surface of `on` (`background` is the terminal's).
pub struct Rule {
    pub token: &'static str,
    pub on: &'static [&'static str],
    pub level: Level,
}

const BG: &[&str] = &["background"];
const ON_TOOLS: &[&str] = &[
    "background",
    "selectedBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];
const MUTED_ON: &[&str] = &[
    "background",
    "selectedBg",
    "customMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];
const TOOL_PANELS: &[&str] = &["toolPendingBg", "toolSuccessBg", "toolErrorBg"];
const CUSTOM_TEXT_ON: &[&str] = &[
    "customMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];
const LABEL_ON: &[&str] = &[
    "background",
    "customMessageBg",
    "selectedBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];
const BG_AND_TOOLS: &[&str] = &[
    "background",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];
const BG_AND_MESSAGES: &[&str] = &["background", "userMessageBg", "customMessageBg"];
const EVERYWHERE: &[&str] = &[
    "background",
    "userMessageBg",
    "customMessageBg",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
];

const fn rule(token: &'static str, on: &'static [&'static str], level: Level) -> Rule {
    Rule { token, on, level }
}

/// pi 1.6's rules, in its order.
pub const RULES: &[Rule] = &[
    rule("userMessageBg", BG, Level::Panel),
    rule("toolPendingBg", BG, Level::Panel),
    rule("toolSuccessBg", BG, Level::Panel),
    rule("toolErrorBg", BG, Level::Panel),
    rule("selectedBg", BG, Level::Panel),
    rule("searchMatchBg", BG, Level::Panel),
    rule("customMessageBg", BG, Level::Panel),
    rule("text", BG, Level::Text),
    rule("text", &["selectedBg"], Level::TextOnPanel),
    rule("userMessageText", &["userMessageBg"], Level::TextOnPanel),
    rule("toolTitle", TOOL_PANELS, Level::TextOnPanel),
    rule("accent", ON_TOOLS, Level::Readable),
    rule("success", ON_TOOLS, Level::Readable),
    rule("error", ON_TOOLS, Level::Readable),
    rule("warning", ON_TOOLS, Level::Readable),
    rule("muted", MUTED_ON, Level::Readable),
    rule("dim", MUTED_ON, Level::Subtle),
    rule("thinkingText", BG, Level::Readable),
    rule("customMessageText", CUSTOM_TEXT_ON, Level::Readable),
    rule("customMessageLabel", LABEL_ON, Level::Readable),
    rule("toolOutput", BG_AND_TOOLS, Level::Readable),
    rule("mdHeading", BG_AND_MESSAGES, Level::Readable),
    rule("mdLink", BG_AND_MESSAGES, Level::Readable),
    rule("mdLinkUrl", BG_AND_MESSAGES, Level::Readable),
    rule("mdCode", BG_AND_MESSAGES, Level::Readable),
    rule("mdQuote", BG_AND_MESSAGES, Level::Readable),
    rule("mdCodeBlockBorder", BG_AND_MESSAGES, Level::Readable),
    rule("mdListBullet", BG_AND_MESSAGES, Level::Readable),
    rule("mdCodeBlock", EVERYWHERE, Level::Readable),
    rule("toolDiffAdded", BG_AND_TOOLS, Level::Readable),
    rule("toolDiffRemoved", BG_AND_TOOLS, Level::Readable),
    rule("toolDiffContext", BG_AND_TOOLS, Level::Readable),
    rule("syntaxComment", EVERYWHERE, Level::Readable),
    rule("syntaxKeyword", EVERYWHERE, Level::Readable),
    rule("syntaxFunction", EVERYWHERE, Level::Readable),
    rule("syntaxVariable", EVERYWHERE, Level::Readable),
    rule("syntaxString", EVERYWHERE, Level::Readable),
    rule("syntaxNumber", EVERYWHERE, Level::Readable),
    rule("syntaxType", EVERYWHERE, Level::Readable),
    rule("syntaxOperator", EVERYWHERE, Level::Readable),
    rule("syntaxPunctuation", EVERYWHERE, Level::Readable),
    rule("searchMatchText", &["searchMatchBg"], Level::Readable),
    rule("bashMode", BG, Level::Readable),
    rule("border", BG, Level::Readable),
    rule("borderAccent", BG, Level::Readable),
    rule("borderMuted", BG, Level::Subtle),
    rule("mdQuoteBorder", EVERYWHERE, Level::Readable),
    rule("mdHr", EVERYWHERE, Level::Readable),
    rule("scrollbarTrack", BG, Level::Track),
    rule("scrollbarThumb", &["scrollbarTrack"], Level::Thumb),
    rule("thinkingOff", BG, Level::Thinking0),
    rule("thinkingMinimal", BG, Level::Thinking1),
    rule("thinkingLow", BG, Level::Thinking2),
    rule("thinkingMedium", BG, Level::Thinking3),
    rule("thinkingHigh", BG, Level::Thinking4),
    rule("thinkingXhigh", BG, Level::Thinking5),
    rule("thinkingMax", BG, Level::Thinking6),
];
