//! Completion providers: slash commands and @-file paths.
