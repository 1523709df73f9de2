//! Undo snapshots of the editor buffer.

/// A stack of state snapshots; undo pops the most recent.
#[derive(Debug, Clone)]
pub struct UndoStack<S> {
    stack: Vec<S>,
}

impl<S> Default for UndoStack<S> {
    fn default() -> Self {
        UndoStack { stack: Vec::new() }
    }
}

impl<S: Clone> UndoStack<S> {
    /// Store a copy of `state`.
    pub fn push(&mut self, state: &S) {
        self.stack.push(state.clone());
    }

    /// The most recent snapshot, removed from the stack.
    pub fn pop(&mut self) -> Option<S> {
        self.stack.pop()
    }

    /// Drop all snapshots.
    pub fn clear(&mut self) {
        self.stack.clear();
    }
}
