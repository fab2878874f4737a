//! The LTTng-UST provider (tracers/c/tb_lttng*.c, built into libtb_lttng.so by build.rs), loaded
//! only by an LTTng backend's measuring process: the tracebench binary does not link
//! liblttng-ust, so no other measuring process carries its constructor and listener threads.
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use super::library_path;

/// The dlopen()ed libtb_lttng.so: loaded once per process and never unloaded (unloading
/// liblttng-ust while its listener threads run is not supported).
pub(super) struct Lib {
    pub(super) fire: extern "C" fn(u32),
    pub(super) tracef: extern "C" fn(u32),
    pub(super) fire_blob: BlobFn,
    pub(super) tracef_blob: BlobFn,
    pub(super) event_enabled: extern "C" fn() -> c_int,
    pub(super) blob_enabled: extern "C" fn() -> c_int,
    pub(super) tracef_enabled: extern "C" fn() -> c_int,
    pub(super) ust_version: String,
}

/// `tb_lttng_fire_blob(data, len)` / `tb_lttng_tracef_blob(data, len)`.
pub(super) type BlobFn = extern "C" fn(*const c_char, u32);

static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();

pub(super) fn load_lib() -> Result<&'static Lib, String> {
    LIB.get_or_init(|| {
        let path = library_path().ok_or("liblttng-ust-dev was not installed when tracebench was built")?;
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: dlopen with a valid C string; RTLD_NODELETE because liblttng-ust must stay.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NODELETE) };
        if handle.is_null() {
            // SAFETY: dlerror returns a static string after a failure.
            let e = unsafe { CStr::from_ptr(libc::dlerror()) };
            return Err(format!("dlopen {}: {}", path.display(), e.to_string_lossy()));
        }
        let sym = |name: &str| -> Result<*mut c_void, String> {
            let n = CString::new(name).unwrap();
            // SAFETY: handle is a live dlopen handle.
            let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
            if p.is_null() {
                Err(format!("{name} missing from {}", path.display()))
            } else {
                Ok(p)
            }
        };
        // SAFETY: the symbols have these C signatures (tracers/c/tb_lttng*.c).
        unsafe {
            let version: extern "C" fn() -> *const c_char = std::mem::transmute(sym("tb_lttng_ust_version")?);
            Ok(Lib {
                fire: std::mem::transmute::<*mut c_void, extern "C" fn(u32)>(sym("tb_lttng_fire")?),
                tracef: std::mem::transmute::<*mut c_void, extern "C" fn(u32)>(sym("tb_lttng_tracef")?),
                fire_blob: std::mem::transmute::<*mut c_void, BlobFn>(sym("tb_lttng_fire_blob")?),
                tracef_blob: std::mem::transmute::<*mut c_void, BlobFn>(sym("tb_lttng_tracef_blob")?),
                blob_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_blob_enabled",
                )?),
                event_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_event_enabled",
                )?),
                tracef_enabled: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(
                    "tb_lttng_tracef_enabled",
                )?),
                ust_version: CStr::from_ptr(version()).to_string_lossy().into_owned(),
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}
