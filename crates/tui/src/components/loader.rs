//! A spinner with a message.
