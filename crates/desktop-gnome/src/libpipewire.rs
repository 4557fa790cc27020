//! PipeWire's client library, loaded when a driver first needs frames rather than linked:
//! the same binary then starts, and serves X11, wlroots and the virtual desktop, on a
//! machine without PipeWire, and building it needs neither PipeWire's headers nor
//! libclang. `check` names the package that provides the library when it cannot be
//! loaded.
//!
//! Only the functions the frame reader calls are bound, by hand, from PipeWire's stable
//! C ABI (`libpipewire-0.3.so.0`): a main loop, a context connected to a socket or to a
//! descriptor the desktop portal handed over, and a capture stream per screen-cast node
//! with two callbacks (its settled format, a frame ready). Everything PipeWire's headers
//! define inline (pod builders, hook lists) is done in safe code (`pod.rs`). The rest of
//! the crate sees the safe types below.
//!
//! The workspace denies `unsafe_code`; this module alone of the crate allows it, for the
//! loading of the library and the calls into it (scripts/test.sh keeps that list).
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::fd::{IntoRawFd as _, OwnedFd};
use std::ptr::{NonNull, null, null_mut};
use std::sync::{Arc, Mutex, OnceLock};

/// The library's name, as its Debian/Ubuntu and Fedora packages install it.
pub const SONAME: &str = "libpipewire-0.3.so.0";

/// Names another file (or name) to load instead of [`SONAME`]: a PipeWire outside the
/// loader's search path.
pub const OVERRIDE_ENV: &str = "COMPUTER_CONTROL_LIBPIPEWIRE";

/// What installs the library, for a person to act on.
pub const INSTALL: &str = "install PipeWire's client library: `sudo apt install \
libpipewire-0.3-0` (Debian/Ubuntu) or `sudo dnf install pipewire-libs` (Fedora)";

#[repr(C)]
struct Opaque {
    _private: [u8; 0],
}
type MainLoopPtr = *mut Opaque;
type LoopPtr = *mut Opaque;
type ContextPtr = *mut Opaque;
type CorePtr = *mut Opaque;
type StreamPtr = *mut Opaque;
type PropertiesPtr = *mut Opaque;

/// `struct spa_dict_item`.
#[repr(C)]
struct DictItem {
    key: *const c_char,
    value: *const c_char,
}

/// `struct spa_dict`.
#[repr(C)]
struct Dict {
    flags: u32,
    n_items: u32,
    items: *const DictItem,
}

/// `struct spa_hook`: a listener's place in the stream's hook list, owned by the caller
/// and zeroed before `pw_stream_add_listener` fills it.
#[repr(C)]
struct Hook {
    link: [*mut c_void; 2],
    funcs: *const c_void,
    data: *mut c_void,
    removed: *mut c_void,
    private: *mut c_void,
}

/// `struct pw_stream_events` (the library calls only the members its `version` has).
#[repr(C)]
struct StreamEvents {
    version: u32,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    state_changed: Option<unsafe extern "C" fn(*mut c_void, c_int, c_int, *const c_char)>,
    control_info: Option<unsafe extern "C" fn(*mut c_void, u32, *const c_void)>,
    io_changed: Option<unsafe extern "C" fn(*mut c_void, u32, *mut c_void, u32)>,
    param_changed: Option<unsafe extern "C" fn(*mut c_void, u32, *const u32)>,
    add_buffer: Option<unsafe extern "C" fn(*mut c_void, *mut PwBuffer)>,
    remove_buffer: Option<unsafe extern "C" fn(*mut c_void, *mut PwBuffer)>,
    process: Option<unsafe extern "C" fn(*mut c_void)>,
    drained: Option<unsafe extern "C" fn(*mut c_void)>,
    command: Option<unsafe extern "C" fn(*mut c_void, *const c_void)>,
    trigger_done: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// `struct pw_buffer` (its first member; the rest is never read).
#[repr(C)]
struct PwBuffer {
    buffer: *mut SpaBuffer,
}

/// `struct spa_buffer`.
#[repr(C)]
struct SpaBuffer {
    n_metas: u32,
    n_datas: u32,
    metas: *mut c_void,
    datas: *mut SpaData,
}

/// `struct spa_data`.
#[repr(C)]
struct SpaData {
    kind: u32,
    flags: u32,
    fd: i64,
    mapoffset: u32,
    maxsize: u32,
    data: *mut c_void,
    chunk: *mut SpaChunk,
}

/// `struct spa_chunk`.
#[repr(C)]
struct SpaChunk {
    offset: u32,
    size: u32,
    stride: i32,
    flags: i32,
}

/// `SPA_DIRECTION_INPUT`: the stream consumes frames.
const DIRECTION_INPUT: c_int = 0;
/// `PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS`.
const CONNECT_FLAGS: c_int = 1 | 4;

/// The bound functions (each looked up by its C name).
struct Functions {
    init: unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char),
    get_library_version: unsafe extern "C" fn() -> *const c_char,
    main_loop_new: unsafe extern "C" fn(*const Dict) -> MainLoopPtr,
    main_loop_get_loop: unsafe extern "C" fn(MainLoopPtr) -> LoopPtr,
    main_loop_run: unsafe extern "C" fn(MainLoopPtr) -> c_int,
    main_loop_quit: unsafe extern "C" fn(MainLoopPtr) -> c_int,
    main_loop_destroy: unsafe extern "C" fn(MainLoopPtr),
    context_new: unsafe extern "C" fn(LoopPtr, PropertiesPtr, usize) -> ContextPtr,
    context_connect: unsafe extern "C" fn(ContextPtr, PropertiesPtr, usize) -> CorePtr,
    context_connect_fd: unsafe extern "C" fn(ContextPtr, c_int, PropertiesPtr, usize) -> CorePtr,
    context_destroy: unsafe extern "C" fn(ContextPtr),
    core_disconnect: unsafe extern "C" fn(CorePtr) -> c_int,
    properties_new_dict: unsafe extern "C" fn(*const Dict) -> PropertiesPtr,
    stream_new: unsafe extern "C" fn(CorePtr, *const c_char, PropertiesPtr) -> StreamPtr,
    stream_add_listener:
        unsafe extern "C" fn(StreamPtr, *mut Hook, *const StreamEvents, *mut c_void),
    stream_connect:
        unsafe extern "C" fn(StreamPtr, c_int, u32, c_int, *const *const u32, u32) -> c_int,
    stream_dequeue_buffer: unsafe extern "C" fn(StreamPtr) -> *mut PwBuffer,
    stream_queue_buffer: unsafe extern "C" fn(StreamPtr, *mut PwBuffer) -> c_int,
    stream_destroy: unsafe extern "C" fn(StreamPtr),
}

/// The loaded library, its version and its functions; loaded once per process and
/// never unloaded (its threads and callbacks may outlive any one driver).
pub struct Library {
    _lib: libloading::Library,
    f: Functions,
    version: String,
}

/// The library, loaded on first use: `Err` says which file could not be loaded, why,
/// and what installs it.
pub fn library() -> Result<&'static Library, String> {
    static LOADED: OnceLock<Result<Library, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let named = std::env::var_os(OVERRIDE_ENV).filter(|v| !v.is_empty());
            let name = named.clone().unwrap_or_else(|| SONAME.into());
            load(&name).map_err(|e| {
                let from = named
                    .map(|n| format!(" from {} ({OVERRIDE_ENV})", n.to_string_lossy()))
                    .unwrap_or_default();
                format!(
                    "PipeWire's client library ({SONAME}) cannot be loaded{from}: {e}; GNOME \
                     and portal capture read the screen cast's frames through it"
                )
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The function `name` (NUL-terminated) of `lib`, as a `T`.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn symbol<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, libloading::Error> {
    // SAFETY: the caller vouches for the signature.
    unsafe { lib.get::<T>(name) }.map(|s| *s)
}

fn load(name: &std::ffi::OsStr) -> Result<Library, libloading::Error> {
    // SAFETY: loading runs the library's initialisers; libpipewire's only set up its
    // own state (no requirement on the loading thread or process).
    let lib = unsafe { libloading::Library::new(name) }?;
    macro_rules! bind {
        ($name:literal) => {
            // SAFETY: the symbol is the C function of that name, whose signature is
            // the field's type (PipeWire 0.3's public ABI, stable across its releases).
            unsafe { symbol(&lib, concat!($name, "\0").as_bytes()) }?
        };
    }
    let f = Functions {
        init: bind!("pw_init"),
        get_library_version: bind!("pw_get_library_version"),
        main_loop_new: bind!("pw_main_loop_new"),
        main_loop_get_loop: bind!("pw_main_loop_get_loop"),
        main_loop_run: bind!("pw_main_loop_run"),
        main_loop_quit: bind!("pw_main_loop_quit"),
        main_loop_destroy: bind!("pw_main_loop_destroy"),
        context_new: bind!("pw_context_new"),
        context_connect: bind!("pw_context_connect"),
        context_connect_fd: bind!("pw_context_connect_fd"),
        context_destroy: bind!("pw_context_destroy"),
        core_disconnect: bind!("pw_core_disconnect"),
        properties_new_dict: bind!("pw_properties_new_dict"),
        stream_new: bind!("pw_stream_new"),
        stream_add_listener: bind!("pw_stream_add_listener"),
        stream_connect: bind!("pw_stream_connect"),
        stream_dequeue_buffer: bind!("pw_stream_dequeue_buffer"),
        stream_queue_buffer: bind!("pw_stream_queue_buffer"),
        stream_destroy: bind!("pw_stream_destroy"),
    };
    // SAFETY: `pw_init` accepts null arguments (no command line to parse) and may be
    // called more than once; it runs here once, before any other call.
    unsafe { (f.init)(null_mut(), null_mut()) };
    // SAFETY: returns a static NUL-terminated string (or null, checked).
    let v = unsafe { (f.get_library_version)() };
    let version = if v.is_null() {
        "unknown".into()
    } else {
        // SAFETY: non-null, NUL-terminated, static (see above).
        unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
    };
    Ok(Library {
        _lib: lib,
        f,
        version,
    })
}

impl Library {
    /// The library's own version (`pw_get_library_version`).
    pub fn version(&self) -> &str {
        &self.version
    }
}

/// The last OS error, as PipeWire's constructors report their failures (`errno`).
fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Key-value properties for PipeWire's constructors, kept alive while the dict is used.
struct Props {
    _strings: Vec<CString>,
    items: Vec<DictItem>,
}

impl Props {
    /// `None` when a key or value holds a NUL byte (no such property can be passed).
    fn new(pairs: &[(&str, &str)]) -> Option<Props> {
        let mut strings = Vec::new();
        for (k, v) in pairs {
            strings.push(CString::new(*k).ok()?);
            strings.push(CString::new(*v).ok()?);
        }
        let items = strings
            .chunks_exact(2)
            .map(|kv| DictItem {
                key: kv[0].as_ptr(),
                value: kv[1].as_ptr(),
            })
            .collect();
        Some(Props {
            _strings: strings,
            items,
        })
    }

    /// A new `pw_properties` holding a copy of these (the callee takes it over).
    fn to_pw(&self, lib: &Library) -> Result<PropertiesPtr, String> {
        let dict = Dict {
            flags: 0,
            n_items: self.items.len() as u32,
            items: self.items.as_ptr(),
        };
        // SAFETY: `dict` points at `items`, whose strings live in `self`; the function
        // copies them.
        let p = unsafe { (lib.f.properties_new_dict)(&dict) };
        if p.is_null() {
            Err(os_error("PipeWire properties"))
        } else {
            Ok(p)
        }
    }
}

/// A main loop, run on the thread that made it; [`Quit`] stops it from any thread.
pub struct MainLoop {
    lib: &'static Library,
    ptr: NonNull<Opaque>,
    quit: Arc<Mutex<Option<QuitTarget>>>,
}

/// The loop a [`Quit`] stops, while it exists.
struct QuitTarget(NonNull<Opaque>);
// SAFETY: only `pw_main_loop_quit` is called through it from another thread, which
// PipeWire makes safe (it queues the stop onto the loop with `pw_loop_invoke`); the loop
// is destroyed only after the target is taken away under the same lock.
unsafe impl Send for QuitTarget {}

/// Stops a [`MainLoop`]'s `run` from any thread; does nothing once the loop is gone.
#[derive(Clone)]
pub struct Quit {
    lib: &'static Library,
    target: Arc<Mutex<Option<QuitTarget>>>,
}

impl Quit {
    pub fn quit(&self) {
        let t = self.target.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(QuitTarget(ptr)) = t.as_ref() {
            // SAFETY: the loop is alive while the target is set (see `QuitTarget`).
            unsafe { (self.lib.f.main_loop_quit)(ptr.as_ptr()) };
        }
    }
}

impl MainLoop {
    pub fn new(lib: &'static Library) -> Result<MainLoop, String> {
        // SAFETY: null properties are allowed (defaults).
        let ptr = NonNull::new(unsafe { (lib.f.main_loop_new)(null()) })
            .ok_or_else(|| os_error("PipeWire main loop"))?;
        Ok(MainLoop {
            lib,
            ptr,
            quit: Arc::new(Mutex::new(Some(QuitTarget(ptr)))),
        })
    }

    pub fn quitter(&self) -> Quit {
        Quit {
            lib: self.lib,
            target: self.quit.clone(),
        }
    }

    /// Dispatches the streams' events until [`Quit::quit`].
    pub fn run(&self) {
        // SAFETY: the loop is alive and run on the thread that owns it.
        unsafe { (self.lib.f.main_loop_run)(self.ptr.as_ptr()) };
    }
}

impl Drop for MainLoop {
    fn drop(&mut self) {
        self.quit.lock().unwrap_or_else(|e| e.into_inner()).take();
        // SAFETY: made by `pw_main_loop_new`, destroyed once, after everything made on
        // it (the context borrows the loop, so it is gone already).
        unsafe { (self.lib.f.main_loop_destroy)(self.ptr.as_ptr()) };
    }
}

/// A PipeWire context on a main loop.
pub struct Context<'l> {
    lib: &'static Library,
    ptr: NonNull<Opaque>,
    _loop: &'l MainLoop,
}

impl<'l> Context<'l> {
    pub fn new(main_loop: &'l MainLoop) -> Result<Context<'l>, String> {
        let lib = main_loop.lib;
        // SAFETY: the loop is alive (borrowed for the context's life).
        let l = unsafe { (lib.f.main_loop_get_loop)(main_loop.ptr.as_ptr()) };
        // SAFETY: `l` is the main loop's loop; null properties are allowed.
        let ptr = NonNull::new(unsafe { (lib.f.context_new)(l, null_mut(), 0) })
            .ok_or_else(|| os_error("PipeWire context"))?;
        Ok(Context {
            lib,
            ptr,
            _loop: main_loop,
        })
    }

    /// Connects to PipeWire's socket `remote` (a name in the runtime directory or a
    /// path), else the environment's.
    pub fn connect(&self, remote: Option<&str>) -> Result<Core<'_>, String> {
        let props = match remote {
            Some(r) => {
                let p = Props::new(&[("remote.name", r)])
                    .ok_or("PipeWire: the socket's name holds a NUL byte")?;
                p.to_pw(self.lib)?
            }
            None => null_mut(),
        };
        // SAFETY: the context is alive; the properties (or null) are handed over.
        let core = unsafe { (self.lib.f.context_connect)(self.ptr.as_ptr(), props, 0) };
        self.core(core)
    }

    /// Connects over a socket the desktop portal opened (handed over, closed with the
    /// connection).
    pub fn connect_fd(&self, fd: OwnedFd) -> Result<Core<'_>, String> {
        let raw = fd.into_raw_fd();
        // SAFETY: the context is alive; `raw` is an open socket PipeWire now owns.
        let core =
            unsafe { (self.lib.f.context_connect_fd)(self.ptr.as_ptr(), raw, null_mut(), 0) };
        self.core(core)
    }

    fn core(&self, ptr: CorePtr) -> Result<Core<'_>, String> {
        let ptr = NonNull::new(ptr).ok_or_else(|| os_error("PipeWire connection"))?;
        Ok(Core {
            lib: self.lib,
            ptr,
            _context: self,
        })
    }
}

impl Drop for Context<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `pw_context_new`, destroyed once, after its connections
        // (they borrow the context).
        unsafe { (self.lib.f.context_destroy)(self.ptr.as_ptr()) };
    }
}

/// A connection to PipeWire.
pub struct Core<'c> {
    lib: &'static Library,
    ptr: NonNull<Opaque>,
    _context: &'c Context<'c>,
}

impl Drop for Core<'_> {
    fn drop(&mut self) {
        // SAFETY: the connection is alive, disconnected once, after its streams (they
        // borrow it).
        unsafe { (self.lib.f.core_disconnect)(self.ptr.as_ptr()) };
    }
}

/// One frame as a capture stream delivers it: the first plane's mapped bytes (`None`
/// when not mapped into memory, such as a DMA-BUF) and the chunk of them that is valid.
pub struct Plane<'a> {
    pub data: Option<&'a [u8]>,
    pub offset: u32,
    pub size: u32,
    pub stride: i32,
}

/// What a stream's callbacks do.
pub trait StreamHandler {
    /// The stream settled on a format (a `Format` pod, see `pod.rs`).
    fn format(&mut self, pod: &[u8]);
    /// A frame arrived.
    fn frame(&mut self, plane: &Plane<'_>);
}

/// What the callbacks reach through their `data` pointer.
struct Listener {
    lib: &'static Library,
    stream: StreamPtr,
    handler: Box<dyn StreamHandler>,
}

/// A capture stream of one node; its callbacks run on the main loop's thread.
pub struct Stream<'c> {
    lib: &'static Library,
    ptr: NonNull<Opaque>,
    // Allocated here and freed only after the stream is destroyed: PipeWire holds
    // pointers to them (raw, since PipeWire writes into the hook and the callbacks
    // reach the listener while the stream lives).
    hook: NonNull<Hook>,
    events: NonNull<StreamEvents>,
    listener: NonNull<Listener>,
    _core: &'c Core<'c>,
}

unsafe extern "C" fn on_param_changed(data: *mut c_void, id: u32, param: *const u32) {
    if param.is_null() || id != crate::pod::PARAM_FORMAT {
        return;
    }
    // SAFETY: `data` is the `Listener` registered with this callback (alive until the
    // stream is destroyed); `param` points at a pod: an 8-byte header whose first word
    // is the size of the body that follows it.
    let (listener, pod) = unsafe {
        let size = *param as usize;
        (
            &mut *data.cast::<Listener>(),
            std::slice::from_raw_parts(param.cast::<u8>(), 8 + size),
        )
    };
    listener.handler.format(pod);
}

unsafe extern "C" fn on_process(data: *mut c_void) {
    // SAFETY: as in `on_param_changed`.
    let listener = unsafe { &mut *data.cast::<Listener>() };
    let (lib, stream) = (listener.lib, listener.stream);
    // SAFETY: the stream is alive while its callbacks run.
    let b = unsafe { (lib.f.stream_dequeue_buffer)(stream) };
    if b.is_null() {
        return;
    }
    // SAFETY: a dequeued buffer is ours until queued back: its `spa_buffer`, first data
    // and chunk are valid, and a non-null `data` maps `maxsize` bytes (MAP_BUFFERS).
    let plane = unsafe {
        let sb = (*b).buffer;
        if sb.is_null() || (*sb).n_datas == 0 || (*sb).datas.is_null() {
            None
        } else {
            let d = &*(*sb).datas;
            let chunk = d.chunk.as_ref();
            chunk.map(|c| Plane {
                data: (!d.data.is_null())
                    .then(|| std::slice::from_raw_parts(d.data.cast::<u8>(), d.maxsize as usize)),
                offset: c.offset,
                size: c.size,
                stride: c.stride,
            })
        }
    };
    if let Some(p) = &plane {
        listener.handler.frame(p);
    }
    // SAFETY: the buffer was dequeued from this stream above and is handed back once.
    unsafe { (lib.f.stream_queue_buffer)(stream, b) };
}

impl<'c> Stream<'c> {
    /// A capture stream named `name` with `props`, connected to `node` and offering
    /// the formats of the `params` pod, its events going to `handler`.
    pub fn connect(
        core: &'c Core<'c>,
        name: &str,
        props: &[(&str, &str)],
        node: u32,
        params: &[u8],
        handler: Box<dyn StreamHandler>,
    ) -> Result<Stream<'c>, String> {
        let lib = core.lib;
        let name = CString::new(name).map_err(|_| "PipeWire: a stream name holds a NUL byte")?;
        let props = Props::new(props)
            .ok_or("PipeWire: a stream property holds a NUL byte")?
            .to_pw(lib)?;
        // SAFETY: the connection is alive; the properties are handed over.
        let ptr = unsafe { (lib.f.stream_new)(core.ptr.as_ptr(), name.as_ptr(), props) };
        let ptr = NonNull::new(ptr).ok_or_else(|| os_error("PipeWire stream"))?;
        let hook = Box::new(Hook {
            link: [null_mut(); 2],
            funcs: null(),
            data: null_mut(),
            removed: null_mut(),
            private: null_mut(),
        });
        let events = Box::new(StreamEvents {
            version: 0,
            destroy: None,
            state_changed: None,
            control_info: None,
            io_changed: None,
            param_changed: Some(on_param_changed),
            add_buffer: None,
            remove_buffer: None,
            process: Some(on_process),
            drained: None,
            command: None,
            trigger_done: None,
        });
        let listener = Box::new(Listener {
            lib,
            stream: ptr.as_ptr(),
            handler,
        });
        let stream = Stream {
            lib,
            ptr,
            hook: NonNull::from(Box::leak(hook)),
            events: NonNull::from(Box::leak(events)),
            listener: NonNull::from(Box::leak(listener)),
            _core: core,
        };
        // SAFETY: the hook, events and listener live at fixed addresses until after
        // `pw_stream_destroy` (the stream's `Drop`), which removes the hook.
        unsafe {
            (lib.f.stream_add_listener)(
                ptr.as_ptr(),
                stream.hook.as_ptr(),
                stream.events.as_ptr(),
                stream.listener.as_ptr().cast(),
            )
        };
        // A pod is read in 32-bit words: copy it to an aligned buffer.
        let words: Vec<u32> = params
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_ne_bytes(w)
            })
            .collect();
        let pods = [words.as_ptr()];
        // SAFETY: the stream is alive; `pods` holds one pointer to a complete pod that
        // outlives the call (PipeWire copies it).
        let res = unsafe {
            (lib.f.stream_connect)(
                ptr.as_ptr(),
                DIRECTION_INPUT,
                node,
                CONNECT_FLAGS,
                pods.as_ptr(),
                1,
            )
        };
        if res < 0 {
            return Err(format!(
                "PipeWire: connecting to node {node}: {}",
                std::io::Error::from_raw_os_error(-res)
            ));
        }
        Ok(stream)
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `pw_stream_new`, destroyed once (it disconnects first and
        // removes the hook); then nothing points at the hook, events and listener,
        // which were leaked from boxes in `connect` and are freed once here.
        unsafe {
            (self.lib.f.stream_destroy)(self.ptr.as_ptr());
            drop(Box::from_raw(self.hook.as_ptr()));
            drop(Box::from_raw(self.events.as_ptr()));
            drop(Box::from_raw(self.listener.as_ptr()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_structures_have_their_c_sizes() {
        // Sizes on 64-bit Linux, as PipeWire's headers (0.3.65) lay them out.
        assert_eq!(std::mem::size_of::<Hook>(), 48);
        assert_eq!(std::mem::size_of::<StreamEvents>(), 96);
        assert_eq!(std::mem::offset_of!(StreamEvents, param_changed), 40);
        assert_eq!(std::mem::offset_of!(StreamEvents, process), 64);
        assert_eq!(std::mem::size_of::<SpaData>(), 40);
        assert_eq!(std::mem::offset_of!(SpaData, data), 24);
        assert_eq!(std::mem::offset_of!(SpaData, chunk), 32);
    }

    #[test]
    fn properties_with_a_nul_byte_are_refused() {
        assert!(Props::new(&[("remote.name", "a\0b")]).is_none());
        let p = Props::new(&[("media.type", "Video"), ("media.role", "Screen")]).expect("props");
        assert_eq!(p.items.len(), 2);
    }
}
