//! Glob-style pattern matching (placeholder until merged).
