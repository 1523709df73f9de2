//! Tool wrappers (sandbox timeout cap, schema dialect, cancellation) change one or two
//! `AgentTool` methods; this macro delegates the descriptive rest to `self.inner`.

/// Implements `name`, `label`, `description`, `parameters`, `constrained_sampling`,
/// `execution_mode` and `prepare_arguments` by delegating to the wrapped `self.inner: Arc<dyn AgentTool>`.
#[macro_export]
macro_rules! delegate_tool_description {
    () => {
        fn name(&self) -> &str {
            self.inner.name()
        }

        fn label(&self) -> &str {
            self.inner.label()
        }

        fn description(&self) -> &str {
            self.inner.description()
        }

        fn parameters(&self) -> &serde_json::Value {
            self.inner.parameters()
        }

        fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
            self.inner.constrained_sampling()
        }

        fn execution_mode(&self) -> Option<pi_agent_core::ToolExecutionMode> {
            self.inner.execution_mode()
        }

        fn prepare_arguments(
            &self,
            arguments: &serde_json::Map<String, serde_json::Value>,
        ) -> Option<serde_json::Map<String, serde_json::Value>> {
            self.inner.prepare_arguments(arguments)
        }
    };
}
