//! Reading inputs and writing outputs for the command line.
//!
//! Inputs are read whole and checked to be UTF-8 (an invalid byte is reported with its line and
//! column). Outputs given with `-o` are written to a temporary file in the same directory and
//! renamed over the target only when complete, so a failed or interrupted run never leaves a
//! partial file and never clobbers the previous one. A run killed outright (SIGKILL, power loss)
//! between creating the temporary file and renaming it leaves that `.irw-XXXXXX.tmp` file in
//! the target's directory: nothing can remove it then, and the target is still untouched
//! (`tests/all/atomic_output.rs` checks both). SIGINT, SIGTERM and SIGHUP are caught while a
//! temporary file exists (a thread of `signal-hook`'s, no code in the signal handler): the
//! temporary files are removed and the process then dies of the signal as it would have.
//!
//! `-o` through a symbolic link writes the file the link points to (followed to the end, as
//! `>` in a shell does): the temporary file is made beside that file and renamed over it, so
//! the link stays a link.
//!
//! Every input is read with a size bound (`--max-input-size`, passed in): a regular
//! file that is too large is refused before it is read, a pipe after reading one byte more than
//! the bound, so an endless input (`/dev/zero`) cannot exhaust memory.

use super::Failure;
use crate::diag::{Diagnostic, SourceFile};
use crate::source_text::{SourceText, MAP_AT_LEAST};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Largest input irw reads by default on any machine (bytes). A program of 10^6 ops is about
/// 180 MB.
const MAX_INPUT_BYTES: u64 = 4 << 30;

/// Peak memory of a rewrite per byte of input, rounded up from `benches/scaling.sh` (parse,
/// grad_merge and print of 10^6 and 10^7 ops; see README.md, Performance).
const PEAK_BYTES_PER_INPUT_BYTE: u64 = 5;

/// The default `--max-input-size`: [`MAX_INPUT_BYTES`], or less on a machine whose memory
/// (`MemTotal` in /proc/meminfo) could not hold the rewrite of an input that large
/// ([`PEAK_BYTES_PER_INPUT_BYTE`]), so that a too-large input is refused with a message
/// instead of exhausting memory.
pub fn default_max_input_bytes() -> u64 {
    static DEFAULT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
        match total {
            Some(bytes) => (bytes / PEAK_BYTES_PER_INPUT_BYTE).clamp(64 << 20, MAX_INPUT_BYTES),
            None => MAX_INPUT_BYTES,
        }
    })
}

/// `4294967296` as `4 GiB`, `1536` as `1536 bytes`: sizes in messages, exact.
fn format_size(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

pub use crate::source_text::UTF8_BOM;

/// Refuses `-` (standard input) for more than one of a command's inputs, given as (what names
/// it, the path given): standard input can be read once, and a second read would find it at its
/// end and report an empty file there.
pub fn one_standard_input(inputs: &[(&str, Option<&str>)]) -> Result<(), Failure> {
    let stdin: Vec<&str> = inputs
        .iter()
        .filter(|(_, path)| *path == Some("-"))
        .map(|(what, _)| *what)
        .collect();
    if stdin.len() > 1 {
        return Err(Failure::Usage(format!(
            "`-` (standard input) given for {}: standard input can be read only once; give files for all but one",
            stdin.join(" and ")
        )));
    }
    Ok(())
}

/// Reads `path` (`-` for standard input) as a [`SourceFile`], refusing inputs larger than
/// `limit` bytes (`--max-input-size`) without reading more than that, ended by a [`Watchdog`]
/// after `timeout` if the read blocks (a FIFO). A leading UTF-8 byte order mark is dropped.
pub fn read_source_within(
    path: &str,
    limit: u64,
    timeout: Option<std::time::Duration>,
) -> Result<SourceFile, Diagnostic> {
    // Only what can block: standard input, a FIFO, a device (a regular file's read ends).
    let blocking = path == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    let _watch = Watchdog::start(timeout.filter(|_| blocking), format!("reading {path}"));
    let name = if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    };
    let too_large = || {
        Diagnostic::error(format!(
            "{name} is larger than the input size limit of {}",
            format_size(limit)
        ))
        .with_hint("--max-input-size SIZE raises the limit (e.g. 8G)")
    };
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Diagnostic::error(format!("cannot read standard input: {e}")))?;
    } else {
        let f = std::fs::File::open(path)
            .map_err(|e| Diagnostic::error(format!("cannot read {path}: {}", io_reason(&e))))?;
        let meta = f.metadata().ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Diagnostic::error(format!(
                "cannot read {path}: it is a directory"
            )));
        }
        // A regular file's size is known: refuse it before reading anything, and read it into
        // a buffer of its size (growing by doubling would briefly hold the text twice), or map
        // it when it is large (see `crate::source_text`).
        if let Some(m) = meta.filter(|m| m.is_file()) {
            if m.len() > limit {
                return Err(too_large());
            }
            if m.len() >= MAP_AT_LEAST {
                if let Some(src) = map_source(&f, &name) {
                    return Ok(src);
                }
            }
            bytes.reserve_exact(usize::try_from(m.len()).unwrap_or(0).saturating_add(1));
        }
        f.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Diagnostic::error(format!("cannot read {path}: {}", io_reason(&e))))?;
    }
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    // A UTF-8 byte order mark (some editors write one) is not part of the program.
    if bytes.starts_with(UTF8_BOM) {
        bytes.drain(..UTF8_BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // The lossy text has the same prefix, so `at` is a valid offset into it.
            let src = SourceFile::new(name, lossy);
            Err(Diagnostic::at(&src, at, "the file is not valid UTF-8")
                .with_hint("Paddle prints programs as UTF-8 text"))
        }
    }
}

/// A large regular file, mapped; `None` if the system cannot map it or it is not UTF-8: it is
/// then read, and the read path reports bad UTF-8 with its position.
fn map_source(f: &std::fs::File, name: &str) -> Option<SourceFile> {
    // SAFETY: the map is only read, as UTF-8 checked by `SourceText::mapped`; the file must not
    // change while irw runs (documented in `crate::source_text` and the README).
    let map = unsafe { memmap2::Mmap::map(f) }.ok()?;
    let start = if map.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    SourceText::mapped(map, start).map(|text| SourceFile::new(name, text))
}

/// The most memory this process has held resident so far (heap and mapped input alike), for
/// `--stats`.
///
/// On Linux this is the address space's high-water mark (`VmHWM` in `/proc/self/status`), not
/// `getrusage`'s `ru_maxrss`: the latter carries over the peak of the address space an `exec`
/// replaced, so irw started by a large process (a test harness, a Python training script, which
/// spawns through `vfork`) would report that process's peak as its own.
pub fn peak_memory_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        if let Some(kb) = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| vm_hwm_kb(&s))
        {
            return Some(kb * 1024);
        }
    }
    #[cfg(unix)]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `getrusage` fills the struct it is given; it is zero-initialised besides.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } == 0;
        if !ok {
            return None;
        }
        // SAFETY: initialised above (zeroed, then filled by a successful call).
        let max = unsafe { usage.assume_init() }.ru_maxrss.max(0) as u64;
        // Linux reports kilobytes, macOS bytes.
        Some(if cfg!(target_os = "macos") {
            max
        } else {
            max * 1024
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The `VmHWM:   123456 kB` line of `/proc/self/status`, in kilobytes.
#[cfg(any(target_os = "linux", test))]
fn vm_hwm_kb(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line["VmHWM:".len()..]
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

pub(super) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Writes `text` to `path` atomically (`-` for standard output).
pub fn write_output(path: &str, text: &str) -> Result<(), Failure> {
    write_outputs(&[(path, Content::Text(text))]).map(|_| ())
}

/// What an output holds: a text, or a printer that streams it (so that the text of a large
/// program is never held whole in memory).
#[derive(Clone, Copy)]
pub enum Content<'a> {
    Text(&'a str),
    Stream(&'a dyn Fn(&mut dyn Write) -> std::io::Result<u64>),
}

impl Content<'_> {
    /// Writes the content; returns the number of bytes written.
    pub(super) fn write_to(self, w: &mut dyn Write) -> std::io::Result<u64> {
        match self {
            Content::Text(t) => w.write_all(t.as_bytes()).map(|_| t.len() as u64),
            Content::Stream(f) => f(w),
        }
    }
}

/// Writes several outputs as one: every file is first written in full to its temporary file
/// (and synced), and only then are they renamed over their targets, together or not at all
/// (the protocol of `pair.rs`: lock, journal, renames, a failed rename undone, a kill completed
/// by the next run); standard output (`-`) is written last. Returns the number of bytes of the
/// first output.
pub fn write_outputs(outputs: &[(&str, Content<'_>)]) -> Result<u64, Failure> {
    let mut pending = Vec::with_capacity(outputs.len());
    let mut sizes = vec![0; outputs.len()];
    for (i, &(path, content)) in outputs.iter().enumerate() {
        if path != "-" {
            let (p, n) = Pending::write(path, content)?;
            pending.push(p);
            sizes[i] = n;
        }
    }
    commit(pending)?;
    for (i, &(path, content)) in outputs.iter().enumerate() {
        if path == "-" {
            sizes[i] = super::streams::write_stdout(content)?;
        }
    }
    Ok(sizes.first().copied().unwrap_or(0))
}

/// Temporary files not yet renamed or removed: what a signal must clean up.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts (once) the thread that, on SIGINT, SIGTERM or SIGHUP, removes the temporary files in
/// [`TEMPORARIES`] and then ends the process as the signal's default action would. It holds
/// the lock to the end, so no rename can start after the files are gone.
fn catch_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("irw-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    let tmps = temporaries();
                    for p in tmps.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    std::process::exit(128 + sig);
                }
            });
    });
}

/// The file `path` names, symbolic links followed (at most 40, as the kernel does); a dangling
/// link gives the path it points to (which `-o` then creates).
fn follow_links(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(t) if t.is_absolute() => p = t,
                Ok(t) => {
                    p = match p.parent() {
                        Some(d) => d.join(t),
                        None => t,
                    }
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    p
}

/// Whether `a` and `b` name the same file: the same inode if both exist, else the same path
/// once symbolic links are followed and the directory is made canonical (`./s.ir`, an
/// absolute path, `sub/../s.ir` and a link to `s.ir` all name `s.ir`).
pub fn same_file(a: &str, b: &str) -> bool {
    let (ra, rb) = (follow_links(Path::new(a)), follow_links(Path::new(b)));
    #[cfg(unix)]
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(&ra), std::fs::metadata(&rb)) {
        use std::os::unix::fs::MetadataExt;
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    let canonical = |p: &Path| -> PathBuf {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = p.file_name().map(PathBuf::from).unwrap_or_default();
        match std::fs::canonicalize(dir) {
            Ok(d) => d.join(name),
            Err(_) => std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()),
        }
    };
    canonical(&ra) == canonical(&rb)
}

/// Opens a target that is not a regular file for writing. A FIFO is opened without waiting for
/// a reader (which would block forever if none comes: the open fails with ENXIO instead), then
/// written as usual.
fn open_in_place(target: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if std::fs::metadata(target).is_ok_and(|m| m.file_type().is_fifo()) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(target)?;
            use std::os::fd::AsRawFd;
            // SAFETY: fcntl on a descriptor this function owns: clears O_NONBLOCK again.
            unsafe {
                let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
            return Ok(f);
        }
    }
    std::fs::OpenOptions::new().write(true).open(target)
}

/// Ends the process with an error if the I/O it guards (reading a FIFO nobody writes, an
/// import of one) is still blocked when `--timeout` has passed; dropped, it stops watching.
/// Without a timeout it does nothing: the read waits, as `cat` would.
pub struct Watchdog {
    /// Dropped with the watchdog: its thread then stops waiting.
    _stop: Option<std::sync::mpsc::Sender<()>>,
}

impl Watchdog {
    pub fn start(timeout: Option<std::time::Duration>, what: String) -> Watchdog {
        let Some(t) = timeout else {
            return Watchdog { _stop: None };
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("irw-watchdog".into())
            .spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(t) {
                    // The temporary files go first, as on a signal; holding the lock, no
                    // rename can start.
                    let tmps = temporaries();
                    for p in tmps.iter() {
                        let _ = std::fs::remove_file(p);
                    }
                    super::streams::eprintln(&format!(
                        "error: stopped by the time limit (--timeout, {} s) while {what}; nothing was written",
                        t.as_secs_f64()
                    ));
                    std::process::exit(1);
                }
            });
        Watchdog {
            _stop: spawned.ok().map(|_| tx),
        }
    }
}

/// An output in its temporary file beside the target, not yet renamed over it: made by
/// [`Pending::open`], filled by [`Pending::fill`]. Dropped without [`commit`], the temporary
/// file is removed. `tmp` is `None` for a target that is not a regular file (`/dev/null`,
/// `/dev/stdout`, a FIFO): it is written in place (`in_place`), since renaming a file over a
/// device would replace the device itself.
struct Pending<'a> {
    path: &'a str,
    /// `path` with symbolic links followed: the file replaced.
    target: PathBuf,
    tmp: Option<tempfile::NamedTempFile>,
    in_place: Option<std::fs::File>,
}

fn write_failure(path: &str, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(format!("cannot write {path}: {}", io_reason(e)))
}

impl<'a> Pending<'a> {
    /// [`Pending::open`] and [`Pending::fill`] at once; returns the bytes written.
    fn write(path: &'a str, content: Content<'_>) -> Result<(Pending<'a>, u64), Diagnostic> {
        let mut p = Pending::open(path)?;
        let n = p.fill(content)?;
        Ok((p, n))
    }

    /// Makes the temporary file beside `path` (or opens a target that is not a regular file):
    /// everything that can fail before the content exists.
    fn open(path: &'a str) -> Result<Pending<'a>, Diagnostic> {
        let resolved = follow_links(Path::new(path));
        let target = resolved.as_path();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let fail = |e: std::io::Error| write_failure(path, &e);
        let existing = std::fs::metadata(target).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(Diagnostic::error(format!(
                "cannot write {path}: it is a directory"
            )));
        }
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            let f = open_in_place(target).map_err(|e| {
                if e.raw_os_error() == Some(libc::ENXIO) {
                    Diagnostic::error(format!(
                        "cannot write {path}: it is a FIFO that no process is reading"
                    ))
                    .with_hint("start the reader first (opening it would wait for one forever)")
                } else {
                    fail(e)
                }
            })?;
            return Ok(Pending {
                path,
                target: resolved,
                tmp: None,
                in_place: Some(f),
            });
        }
        // The output gets the permissions of the file it replaces, or those of a new file (0666
        // less the umask): a temporary file alone would be private (0600).
        let old_perms = existing.map(|m| m.permissions());
        let mut b = tempfile::Builder::new();
        b.prefix(".irw-").suffix(".tmp");
        #[cfg(unix)]
        if old_perms.is_none() {
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o666));
        }
        catch_signals();
        let tmp = {
            let mut tmps = temporaries();
            let tmp = b.tempfile_in(dir).map_err(fail)?;
            tmps.push(tmp.path().to_path_buf());
            tmp
        };
        if let Some(p) = old_perms {
            tmp.as_file().set_permissions(p).map_err(fail)?;
        }
        Ok(Pending {
            path,
            target: resolved,
            tmp: Some(tmp),
            in_place: None,
        })
    }

    /// Writes the content (a temporary file is synced, to be renamed); returns the bytes
    /// written.
    fn fill(&mut self, content: Content<'_>) -> Result<u64, Diagnostic> {
        let path = self.path;
        let fail = |e: std::io::Error| write_failure(path, &e);
        if let Some(f) = &mut self.in_place {
            return content
                .write_to(f)
                .and_then(|n| f.flush().map(|_| n))
                .map_err(fail);
        }
        let Some(tmp) = &mut self.tmp else {
            return Ok(0);
        };
        let n = content.write_to(tmp).map_err(fail)?;
        tmp.as_file().sync_all().map_err(fail)?;
        Ok(n)
    }
}

/// An output file made before the work whose result it holds (`irw run --dump`): a path that
/// cannot be written is refused before the work is done, and the file is replaced atomically,
/// as `-o`'s is, only by [`PreparedOutput::finish`]; dropped unfinished (the work failed), it
/// leaves the target as it was.
pub struct PreparedOutput<'a>(Pending<'a>);

impl<'a> PreparedOutput<'a> {
    /// Makes the output's temporary file beside `path` (not `-`).
    pub fn create(path: &'a str) -> Result<PreparedOutput<'a>, Failure> {
        Ok(PreparedOutput(Pending::open(path)?))
    }

    /// Writes `content` and replaces the target with it; returns the bytes written.
    pub fn finish(mut self, content: Content<'_>) -> Result<u64, Failure> {
        let n = self.0.fill(content)?;
        commit(vec![self.0])?;
        Ok(n)
    }
}

/// Renames the temporary files of `pending` over their targets, together or not at all
/// (`pair.rs`). The signal thread waits meanwhile: it must not remove a temporary file that a
/// journal names.
fn commit(mut pending: Vec<Pending<'_>>) -> Result<(), Failure> {
    let mut tmps = temporaries();
    let mut entries = Vec::new();
    let mut paths = Vec::new();
    for p in &mut pending {
        let Some(tmp) = p.tmp.take() else { continue };
        let temp = tmp.into_temp_path();
        let temp_abs = std::path::absolute(&temp).unwrap_or_else(|_| temp.to_path_buf());
        tmps.retain(|t| *t != temp.to_path_buf());
        // Kept from here on: on failure `pair::commit` removes it, a kill leaves it to the
        // journal.
        let _ = temp.keep();
        entries.push(super::pair::Entry {
            target: std::path::absolute(&p.target).unwrap_or_else(|_| p.target.clone()),
            temp: temp_abs,
        });
        paths.push(p.path);
    }
    if entries.is_empty() {
        return Ok(());
    }
    super::pair::commit(&entries).map_err(|e| {
        let i = entries
            .iter()
            .position(|x| x.target == e.target)
            .unwrap_or(0);
        let mut d = write_failure(paths[i], &e.error);
        if entries.len() > 1 {
            d = match e
                .left_replaced
                .and_then(|r| entries.iter().position(|x| x.target == r))
            {
                Some(j) => d.with_note(format!(
                    "{} was replaced and its old contents could not be restored",
                    paths[j]
                )),
                None => d.with_note("none of the output files was replaced"),
            };
        }
        Failure::Input(d)
    })
}

impl Drop for Pending<'_> {
    /// An uncommitted temporary file is removed (by `NamedTempFile`) and forgotten here.
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let mut tmps = temporaries();
            let tmp_path = tmp.path().to_path_buf();
            drop(tmp);
            tmps.retain(|p| *p != tmp_path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_high_water_mark_is_read_from_proc_status() {
        let status = "Name:\tirw\nVmPeak:\t  900 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  1000 kB\n";
        assert_eq!(vm_hwm_kb(status), Some(204800));
        assert_eq!(vm_hwm_kb("VmRSS:\t1 kB\n"), None);
        assert_eq!(vm_hwm_kb("VmHWM:\t12 MB\n"), None);
    }

    /// README, Limits: the default `--max-input-size` is 4 GiB, or a fifth of the machine's memory
    /// (`MemTotal`) when that is less, but never under 64 MiB.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_default_max_input_size_is_4g_or_a_fifth_of_memory() {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib: u64 = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .expect("MemTotal in /proc/meminfo");
        let fifth = kib * 1024 / 5;
        let want = fifth.clamp(64 << 20, 4 << 30);
        assert_eq!(super::default_max_input_bytes(), want, "MemTotal {kib} KiB");
    }
}
