//! The terminal the renderer writes to: a real one (crossterm) or a virtual one for tests.
