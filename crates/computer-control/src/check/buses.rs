//! The next steps the Linux desktops' areas share: a session bus for the server, and the
//! accessibility bus in the desktop session.

/// Without the session bus there is no accessibility bus to ask for.
pub const START_SESSION_BUS: &str = "give the server the desktop's session bus: set \
DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus in the host's `env`, or start one \
in the session with `eval $(dbus-launch --sh-syntax)` and start the server from there";

/// Without the accessibility bus there is no element to find or act on.
pub const START_A11Y_BUS: &str = "start the accessibility bus in the desktop session: \
`/usr/libexec/at-spi-bus-launcher --launch-immediately &` (Debian/Ubuntu package \
at-spi2-core)";
