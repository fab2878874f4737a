//! Checking a plugin without running it in the caller: the library is loaded in a forked child
//! (its constructors run there, init is never called) that reports what it found through a pipe,
//! within a timeout.
use super::*;

/// [`validate`], with the plugin's ABI version and largest payload.
pub fn validate_info(spec: &str) -> Result<PluginInfo, PluginError> {
    let parsed = PluginSpec::parse(spec)?;
    // Cheap checks first, in this process, for the clearest message.
    parsed.resolve()?;
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is a valid 2-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        // No pipe: fall back to checking in this process.
        return load(&parsed).map(|l| info_of(&l));
    }
    let (rd, wr) = (fds[0], fds[1]);
    // SAFETY: the child only loads the library, writes to a pipe and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing our own fds.
        unsafe {
            libc::close(rd);
            libc::close(wr);
        }
        return load(&parsed).map(|l| info_of(&l));
    }
    if pid == 0 {
        // SAFETY: child side; _exit skips atexit handlers and destructors, which belong to the
        // parent.
        unsafe {
            libc::close(rd);
            // Exit 0 with "abi max_payload name", or 1 with the error message.
            let (code, msg) = match load(&parsed) {
                Ok(l) => (0, format!("{} {} {}", l.v2.map_or(ABI_VERSION, |_| ABI_VERSION_2), l.max_payload(), l.name)),
                Err(e) => (1, e.to_string()),
            };
            libc::write(wr, msg.as_ptr().cast(), msg.len());
            libc::_exit(code);
        }
    }
    // SAFETY: parent closes its copy of the write end so that read sees EOF when the child exits.
    unsafe { libc::close(wr) };
    let (msg, timed_out) = read_until_eof(rd, LOAD_TIMEOUT);
    // SAFETY: rd is ours.
    unsafe { libc::close(rd) };
    if timed_out {
        // SAFETY: pid is our child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: pid is our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let path = parsed.path.clone();
    if timed_out {
        return Err(PluginError::LoadCrashed { path, why: format!("hung for more than {}s", LOAD_TIMEOUT.as_secs()) });
    }
    if libc::WIFSIGNALED(status) {
        let why = format!("was killed by {}", signal_name(libc::WTERMSIG(status)));
        return Err(PluginError::LoadCrashed { path, why });
    }
    match libc::WEXITSTATUS(status) {
        0 => {
            let mut it = msg.splitn(3, ' ');
            match (it.next().and_then(|a| a.parse().ok()), it.next().and_then(|m| m.parse().ok()), it.next()) {
                (Some(abi), Some(max_payload), Some(name)) => Ok(PluginInfo { name: name.into(), abi, max_payload }),
                _ => Err(PluginError::LoadCrashed { path, why: format!("answered '{msg}' when checked") }),
            }
        }
        code if msg.is_empty() => Err(PluginError::LoadCrashed { path, why: format!("exited with status {code}") }),
        _ => Err(PluginError::Checked(msg)),
    }
}

pub(super) fn info_of(l: &Loaded) -> PluginInfo {
    PluginInfo { name: l.name.clone(), abi: l.v2.map_or(ABI_VERSION, |_| ABI_VERSION_2), max_payload: l.max_payload() }
}

/// Reads `fd` to EOF or until `timeout`; returns (text, timed_out).
pub(super) fn read_until_eof(fd: c_int, timeout: Duration) -> (String, bool) {
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return (String::from_utf8_lossy(&out).into_owned(), true);
        }
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as c_int) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return (String::from_utf8_lossy(&out).into_owned(), false);
        }
        if r == 0 {
            continue;
        }
        // SAFETY: buf is valid for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return (String::from_utf8_lossy(&out).into_owned(), false);
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

pub use crate::sys::signal_name;
