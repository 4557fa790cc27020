//! The bounds both accessibility walkers (UI Automation and MSAA) keep to, so a broken
//! or runaway tree costs the same whichever API answers.

/// Deeper nesting than this is not entered: a cycle in a broken provider's tree, or a
/// nesting no window has, ends there instead of exhausting the stack.
pub const MAX_DEPTH: usize = 64;
