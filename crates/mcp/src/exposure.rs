//! How a server's tools reach the model.

/// pi's exposures. `codemode` is the default; until pi-rs has codemode, `codemode` tools are
/// declared to the model like `direct` ones (see [`Exposure::declared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    Codemode,
    Deferred,
    Direct,
    Hidden,
}

impl Exposure {
    /// The exposure a config value names (`codemode-deferred` is an alias of `codemode`).
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "codemode" | "codemode-deferred" => Some(Self::Codemode),
            "deferred" => Some(Self::Deferred),
            "direct" => Some(Self::Direct),
            "hidden" => Some(Self::Hidden),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Codemode => "codemode",
            Self::Deferred => "deferred",
            Self::Direct => "direct",
            Self::Hidden => "hidden",
        }
    }

    /// Whether the tool is declared to the model from the start: `direct` only (pi 1.6:
    /// `codemode` tools are called from codemode scripts, `deferred` ones once
    /// `tool_search` loaded them).
    pub fn declared(self) -> bool {
        matches!(self, Self::Direct)
    }
}
