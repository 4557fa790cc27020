//! The X connection and the facts read once at start: screen, atoms, extensions and
//! the pixel format captures come back in.

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::randr::ConnectionExt as _;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xkb::ConnectionExt as _;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageOrder, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use cc_desktop::DriverError;

x11rb::atom_manager! {
    /// The atoms the driver reads (EWMH and ICCCM properties).
    pub(super) Atoms: AtomsCookie {
        _NET_CLIENT_LIST_STACKING,
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_FRAME_EXTENTS,
        _NET_SUPPORTING_WM_CHECK,
        UTF8_STRING,
        WM_STATE,
        AT_SPI_BUS,
    }
}

/// Which extensions the server offers (and we initialised).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Extensions {
    pub xtest: bool,
    pub shm: bool,
    /// RandR 1.5 or later: `RRGetMonitors`.
    pub randr_monitors: bool,
    /// Any RandR: change notifications.
    pub randr: bool,
    pub xkb: bool,
    /// Shape: input regions (the indicator's click-through banners).
    pub shape: bool,
}

/// How the server lays out ZPixmap pixels of the root window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PixelFormat {
    pub bits_per_pixel: u8,
    pub scanline_pad: u8,
    pub red_mask: u32,
    pub green_mask: u32,
    pub blue_mask: u32,
    pub lsb_first: bool,
}

impl PixelFormat {
    /// The common 24/32-bit little-endian layout that has a fast path (BGRX bytes).
    pub fn is_bgrx(&self) -> bool {
        self.bits_per_pixel == 32
            && self.lsb_first
            && self.red_mask == 0x00ff_0000
            && self.green_mask == 0x0000_ff00
            && self.blue_mask == 0x0000_00ff
    }

    /// Bytes per scanline of an image `width` pixels wide.
    pub fn stride(&self, width: usize) -> usize {
        let pad = usize::from(self.scanline_pad.max(8));
        let bits = width * usize::from(self.bits_per_pixel);
        bits.div_ceil(pad) * pad / 8
    }
}

/// An open connection with everything read at start.
pub(super) struct Conn {
    pub conn: RustConnection,
    pub root: Window,
    pub atoms: Atoms,
    pub ext: Extensions,
    pub pixel: PixelFormat,
    pub min_keycode: u8,
    pub max_keycode: u8,
    /// The display name this connection reached (for messages).
    pub display: String,
}

/// Maps any X error or connection failure to a driver failure with context.
pub(super) fn xerr(what: &str) -> impl FnOnce(x11rb::errors::ReplyError) -> DriverError + '_ {
    move |e| DriverError::Failed(format!("X11 {what}: {e}"))
}

/// Same for errors that happen before a reply is asked for.
pub(super) fn cerr(what: &str) -> impl FnOnce(x11rb::errors::ConnectionError) -> DriverError + '_ {
    move |e| DriverError::Failed(format!("X11 {what}: {e}"))
}

impl Conn {
    /// Connects to `display` (or `$DISPLAY`) and reads the screen, atoms and
    /// extensions. Fails only when no X server answers; missing extensions are
    /// recorded, not fatal (a display without XTest still captures).
    pub fn open(display: Option<&str>) -> Result<Conn, DriverError> {
        let name = display
            .map(str::to_string)
            .or_else(|| std::env::var("DISPLAY").ok())
            .unwrap_or_default();
        if name.trim().is_empty() {
            return Err(DriverError::Unavailable(
                "no X display ($DISPLAY is not set)".into(),
            ));
        }
        let (conn, screen_num) = x11rb::connect(Some(&name))
            .map_err(|e| DriverError::Unavailable(format!("cannot open X display {name}: {e}")))?;
        let setup = conn.setup();
        let screen = setup.roots.get(screen_num).ok_or_else(|| {
            DriverError::Failed(format!("X display {name} has no screen {screen_num}"))
        })?;
        let root = screen.root;
        let root_depth = screen.root_depth;
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == screen.root_visual)
            .copied();
        let format = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == root_depth)
            .copied();
        let (Some(visual), Some(format)) = (visual, format) else {
            return Err(DriverError::Failed(format!(
                "X display {name}: the root visual or its pixmap format is missing"
            )));
        };
        let pixel = PixelFormat {
            bits_per_pixel: format.bits_per_pixel,
            scanline_pad: format.scanline_pad,
            red_mask: visual.red_mask,
            green_mask: visual.green_mask,
            blue_mask: visual.blue_mask,
            lsb_first: setup.image_byte_order == ImageOrder::LSB_FIRST,
        };
        let (min_keycode, max_keycode) = (setup.min_keycode, setup.max_keycode);
        let atoms = Atoms::new(&conn)
            .map_err(cerr("intern atoms"))?
            .reply()
            .map_err(xerr("intern atoms"))?;
        let ext = Self::extensions(&conn);
        Ok(Conn {
            conn,
            root,
            atoms,
            ext,
            pixel,
            min_keycode,
            max_keycode,
            display: name,
        })
    }

    /// Probes and initialises the extensions the driver uses.
    fn extensions(conn: &RustConnection) -> Extensions {
        let present =
            |name: &'static str| conn.extension_information(name).ok().flatten().is_some();
        let mut ext = Extensions::default();
        if present(x11rb::protocol::xtest::X11_EXTENSION_NAME) {
            ext.xtest = conn
                .xtest_get_version(2, 2)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some();
        }
        if present(x11rb::protocol::shm::X11_EXTENSION_NAME) {
            ext.shm = conn
                .shm_query_version()
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some();
        }
        if present(x11rb::protocol::randr::X11_EXTENSION_NAME)
            && let Some(v) = conn
                .randr_query_version(1, 5)
                .ok()
                .and_then(|c| c.reply().ok())
        {
            ext.randr = true;
            ext.randr_monitors = (v.major_version, v.minor_version) >= (1, 5);
        }
        if present(x11rb::protocol::xkb::X11_EXTENSION_NAME) {
            ext.xkb = conn
                .xkb_use_extension(1, 0)
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some_and(|r| r.supported);
        }
        ext.shape = present(x11rb::protocol::shape::X11_EXTENSION_NAME);
        ext
    }

    /// Current size of the root window (it changes with RandR).
    pub fn root_size(&self) -> Result<(u16, u16), DriverError> {
        let g = self
            .conn
            .get_geometry(self.root)
            .map_err(cerr("get root geometry"))?
            .reply()
            .map_err(xerr("get root geometry"))?;
        Ok((g.width, g.height))
    }

    /// Flushes and waits until the server processed everything sent so far.
    pub fn sync(&self) -> Result<(), DriverError> {
        self.conn
            .get_input_focus()
            .map_err(cerr("sync"))?
            .reply()
            .map(|_| ())
            .map_err(xerr("sync"))
    }

    /// Sends buffered requests.
    pub fn flush(&self) -> Result<(), DriverError> {
        self.conn.flush().map_err(cerr("flush"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_pads_scanlines() {
        let f = PixelFormat {
            bits_per_pixel: 16,
            scanline_pad: 32,
            red_mask: 0xf800,
            green_mask: 0x07e0,
            blue_mask: 0x1f,
            lsb_first: true,
        };
        assert_eq!(f.stride(3), 8);
        assert_eq!(f.stride(4), 8);
        assert!(!f.is_bgrx());
        let g = PixelFormat {
            bits_per_pixel: 32,
            red_mask: 0xff0000,
            green_mask: 0xff00,
            blue_mask: 0xff,
            ..f
        };
        assert_eq!(g.stride(3), 12);
        assert!(g.is_bgrx());
    }
}
