//! Token usage over the LLM calls of one run (seed 004 §1): output adds up, while the
//! prompt side (input, cache read, cache write) is the last call's, so the reported total
//! is the context size at the end plus everything generated — never N × the context.

use serde::Serialize;

use pi_ai::Usage;

/// The usage a run reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    /// Uncached input tokens of the last call.
    pub input: u64,
    /// Output tokens of every call.
    pub output: u64,
    /// Cache-read tokens of the last call.
    pub cache_read: u64,
    /// Cache-write tokens of the last call.
    pub cache_write: u64,
    /// Prompt tokens of the last call plus all output.
    pub total: u64,
}

/// Collects usage reports call by call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageAccumulator {
    last_input: u64,
    last_cache_read: u64,
    last_cache_write: u64,
    output: u64,
    calls: u32,
}

impl UsageAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one call's report; an empty report (a failed call) changes nothing.
    pub fn add(&mut self, usage: &Usage) {
        if usage.input == 0 && usage.output == 0 && usage.cache_read == 0 && usage.cache_write == 0
        {
            return;
        }
        self.last_input = usage.input;
        self.last_cache_read = usage.cache_read;
        self.last_cache_write = usage.cache_write;
        self.output += usage.output;
        self.calls += 1;
    }

    /// Calls that reported usage.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// The prompt size of the last call: input plus cache read and write.
    pub fn last_prompt_tokens(&self) -> u64 {
        self.last_input + self.last_cache_read + self.last_cache_write
    }

    /// The run's usage; `None` when no call reported any.
    pub fn usage(&self) -> Option<RunUsage> {
        (self.calls > 0).then(|| RunUsage {
            input: self.last_input,
            output: self.output,
            cache_read: self.last_cache_read,
            cache_write: self.last_cache_write,
            total: self.last_prompt_tokens() + self.output,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_tool_calls_report_the_context_once() {
        // Each round trip re-reads the whole ~200k context from the cache.
        let mut acc = UsageAccumulator::new();
        let mut naive = 0;
        for i in 0..5u64 {
            let usage = Usage::from_tokens(1_000, 500, 195_000 + i * 1_000, 0);
            naive += usage.total_tokens;
            acc.add(&usage);
        }
        let usage = acc.usage().unwrap_or_default();
        assert_eq!(usage.output, 2_500);
        assert_eq!(usage.input, 1_000);
        assert_eq!(usage.cache_read, 199_000);
        assert_eq!(usage.total, 200_000 + 2_500);
        assert!(naive > 990_000, "summing would claim {naive}");
        assert_eq!(acc.calls(), 5);
    }

    #[test]
    fn empty_reports_are_ignored() {
        let mut acc = UsageAccumulator::new();
        assert_eq!(acc.usage(), None);
        acc.add(&Usage::from_tokens(10, 5, 0, 2));
        acc.add(&Usage::default());
        assert_eq!(
            acc.usage(),
            Some(RunUsage {
                input: 10,
                output: 5,
                cache_read: 0,
                cache_write: 2,
                total: 17
            })
        );
    }
}
