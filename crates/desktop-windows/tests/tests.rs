//! The driver against a real Win32 desktop (Wine on a private Xvfb here, through
//! `scripts/wine/runner.sh`); on other systems this binary is empty.

#[cfg(windows)]
mod notepad;
