//! The desktop portal's remote-desktop session on a headless GNOME desk: started by the
//! portal module, its consent dialog answered through the dialog's accessibility tree
//! (as a person would), frames read over the PipeWire connection the portal opens.

use std::time::Duration;

use cc_desktop::PhysicalDisplay;
use cc_desktop_gnome::frames::{Frames, Remote};
use cc_desktop_gnome::portal::session::{self, StartOptions};
use cc_protocol::PhysicalRect;
use cc_test_kit::consent;
use cc_test_kit::gnome::{GnomeDesk, GnomeDeskOptions};

fn start(bus: &str) -> Result<session::Session, cc_desktop::DriverError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let bus = bus.to_string();
    let s = rt.block_on(async move {
        let conn = zbus::connection::Builder::address(bus.as_str())?
            .build()
            .await?;
        let offer = session::offer(&conn).await;
        assert!(
            offer.remote_desktop >= 1 && offer.screen_cast >= 1,
            "{offer:?}"
        );
        let told = |what: &str| eprintln!("asked: {what}");
        Ok::<_, zbus::Error>(
            session::start(
                &conn,
                &offer,
                StartOptions {
                    restore_token: None,
                    consent_timeout: Duration::from_secs(60),
                    on_dialog: &told,
                },
            )
            .await,
        )
    });
    // The runtime owns the connection's executor: keep it for the test's life.
    std::mem::forget(rt);
    s.expect("session bus")
}

/// The portal serves only callers it can identify (it reads `/proc/PID/root` of the
/// caller): the session is made by this test binary re-run as the desk user, while
/// the test itself answers the dialog.
#[test]
fn a_portal_session_starts_once_its_dialog_is_answered_through_accessibility() {
    let desk = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    consent::enable_portal(&desk);
    let exe = std::env::current_exe().expect("test binary");
    let child = desk
        .command(&exe.display().to_string())
        .args([
            "--exact",
            "portal_session::desk_user_side",
            "--include-ignored",
            "--nocapture",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the desk user's side");
    let answered = consent::answer(&desk.bus, "Share", Duration::from_secs(60));
    let out = child.wait_with_output().expect("desk user's side");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let answered = answered.unwrap_or_else(|e| panic!("{e}\n{text}\n{}", desk.log()));
    assert!(
        answered.pressed.iter().any(|p| p.contains("Share")),
        "{answered:?}"
    );
    assert!(out.status.success(), "the desk user's side failed:\n{text}");
    assert!(
        text.contains("portal session: 1 stream 1920x1080, frame read"),
        "{text}"
    );
}

/// The desk user's side of the test above (run by it, with the desk's environment).
#[test]
#[ignore = "run as the desk user by a_portal_session_starts_once_its_dialog_is_answered_through_accessibility"]
fn desk_user_side() {
    let bus = std::env::var("DBUS_SESSION_BUS_ADDRESS").expect("the desk's bus");
    let s = start(&bus).expect("portal session");
    assert_eq!(s.streams.len(), 1, "{:?}", s.streams);
    assert_eq!(s.streams[0].size, (1920, 1080));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let fd = rt.block_on(s.pipewire()).expect("OpenPipeWireRemote");
    let frames = Frames::open_remote(&[("portal-0".into(), s.streams[0].node)], Remote::Fd(fd))
        .expect("frames");
    let full = PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };
    let shot = frames
        .capture(
            &[PhysicalDisplay {
                id: "portal-0".into(),
                name: "portal-0".into(),
                rect: full,
                primary: true,
            }],
            full,
        )
        .expect("capture");
    assert!(shot.pixels.iter().any(|&p| p != 0), "an all-black frame");
    println!("portal session: 1 stream 1920x1080, frame read");
}
