//! Replacing several output files together or not at all (`-o` with `--startup-out`): the
//! commit protocol, its recovery, and the fault points its tests use.
//!
//! Each output has first been written in full to a temporary file beside its target and synced
//! (`io.rs`). Then, in order:
//!
//! 1. **Lock.** The directories of all targets are locked (`flock`, exclusive, in sorted order,
//!    so two writers never wait on each other in a cycle). Writers of the same files take turns
//!    here: their pairs never interleave. A lock dies with its process, so a killed writer
//!    blocks no one.
//! 2. **Recover.** A journal `.irw-pair-NAME.tmp` left beside any target by a killed writer is
//!    completed first (below), and the directories it names are locked too.
//! 3. **Journal.** The same journal is written (atomically: a temporary file renamed) beside
//!    every target, then the directories are synced. It lists each target, its temporary file,
//!    its backup and every journal's path. Once all journals exist the pair is committed.
//! 4. **Back up.** Each existing target is hard-linked to `.irw-old-NAME.tmp`.
//! 5. **Rename** each temporary file over its target. If a rename fails, the targets already
//!    replaced get their backups back (or are removed if they did not exist): neither file
//!    changes, and the error says so.
//! 6. **Clean up**: backups, then journals, removed.
//!
//! Recovery of a journal: if every journal it lists exists, the pair was committed and is
//! rolled forward (each temporary file still there is renamed over its target); if one is
//! missing, the writer died while writing journals, before any rename, and its temporary files
//! are removed. (Journals are also missing after a complete run died while removing them, but
//! then no temporary file is left, so both readings do the same.) Backups and journals are then
//! removed. A SIGKILL at any point therefore leaves either both old files, or a journal that
//! the next irw writing either file turns into both new files before it writes its own; a reader
//! that finds a `.irw-pair-*.tmp` beside a file is looking at a pair in the middle of that.
//!
//! Fault injection, for `tests/all/atomic_output.rs`: `IRW_TEST_FAULT=kill:STEP` kills the
//! process with SIGKILL at STEP, `fail:STEP` makes STEP fail with an I/O error. Steps:
//! `journal-1` (after the first journal), `journals` (after all), `rename-N` (before the Nth
//! rename), `cleanup`. The variable has no other effect.

use std::fs::File;
use std::path::{Path, PathBuf};

/// One output: its temporary file and the file it replaces.
pub struct Entry {
    pub target: PathBuf,
    pub temp: PathBuf,
}

/// A journal's contents.
struct Journal {
    journals: Vec<Vec<u8>>,
    entries: Vec<JournalEntry>,
}

struct JournalEntry {
    target: Vec<u8>,
    temp: Vec<u8>,
    backup: Vec<u8>,
}

impl Journal {
    /// JSON, with paths as arrays of bytes so that any file name round-trips.
    fn to_json(&self) -> Vec<u8> {
        let entries: Vec<serde_json::Value> = self
            .entries
            .iter()
            .map(|e| serde_json::json!({"target": e.target, "temp": e.temp, "backup": e.backup}))
            .collect();
        serde_json::json!({"journals": self.journals, "entries": entries})
            .to_string()
            .into_bytes()
    }

    fn from_json(text: &[u8]) -> Option<Journal> {
        let v: serde_json::Value = serde_json::from_slice(text).ok()?;
        let bytes = |v: &serde_json::Value| -> Option<Vec<u8>> {
            v.as_array()?
                .iter()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect()
        };
        let journals = v
            .get("journals")?
            .as_array()?
            .iter()
            .map(bytes)
            .collect::<Option<_>>()?;
        let entries = v
            .get("entries")?
            .as_array()?
            .iter()
            .map(|e| {
                Some(JournalEntry {
                    target: bytes(e.get("target")?)?,
                    temp: bytes(e.get("temp")?)?,
                    backup: bytes(e.get("backup")?)?,
                })
            })
            .collect::<Option<_>>()?;
        Some(Journal { journals, entries })
    }
}

#[cfg(unix)]
fn to_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn to_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

fn dir_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `DIR/.irw-KIND-NAME.tmp` beside `target`.
fn beside(target: &Path, kind: &str) -> PathBuf {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    dir_of(target).join(format!(".irw-{kind}-{name}.tmp"))
}

fn journal_path(target: &Path) -> PathBuf {
    beside(target, "pair")
}

/// `IRW_TEST_FAULT` at `step`: see the module doc.
fn fault(step: &str) -> std::io::Result<()> {
    let Ok(spec) = std::env::var("IRW_TEST_FAULT") else {
        return Ok(());
    };
    match spec.split_once(':') {
        Some(("kill", s)) if s == step => {
            #[cfg(unix)]
            // SAFETY: kill(2) on this process's own pid.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            std::process::abort()
        }
        Some(("fail", s)) if s == step => Err(std::io::Error::other(format!(
            "injected failure at {step} (IRW_TEST_FAULT)"
        ))),
        _ => Ok(()),
    }
}

/// Exclusive locks on directories, released when dropped (or when the process dies).
struct Locks {
    _held: Vec<File>,
}

impl Locks {
    fn take(dirs: &[PathBuf]) -> std::io::Result<Locks> {
        let mut held = Vec::with_capacity(dirs.len());
        for d in dirs {
            let f = File::open(d)?;
            #[cfg(unix)]
            {
                use std::os::fd::AsRawFd;
                // SAFETY: flock(2) on a descriptor this function owns.
                while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
            held.push(f);
        }
        Ok(Locks { _held: held })
    }
}

fn sync_dir(d: &Path) {
    if let Ok(f) = File::open(d) {
        let _ = f.sync_all();
    }
}

fn read_journal(p: &Path) -> Option<Journal> {
    Journal::from_json(&std::fs::read(p).ok()?)
}

/// Locks the directories of `targets` and of every journal found beside them, and completes
/// those journals. Returns the locks, held until the caller has renamed its files.
fn lock_and_recover(targets: &[&Path]) -> std::io::Result<Locks> {
    let mut dirs: Vec<PathBuf> = targets.iter().map(|t| dir_of(t)).collect();
    loop {
        dirs.sort();
        dirs.dedup();
        let locks = Locks::take(&dirs)?;
        let journals: Vec<(PathBuf, Journal)> = targets
            .iter()
            .map(|t| journal_path(t))
            .filter_map(|p| read_journal(&p).map(|j| (p, j)))
            .collect();
        // A journal naming a directory not yet locked: take all locks again, in order.
        let mut more = false;
        for (_, j) in &journals {
            for e in &j.entries {
                let d = dir_of(&from_bytes(&e.target));
                if !dirs.contains(&d) {
                    dirs.push(d);
                    more = true;
                }
            }
        }
        if more {
            drop(locks);
            continue;
        }
        for (p, j) in &journals {
            complete(p, j)?;
        }
        return Ok(locks);
    }
}

/// Rolls a journal forward (all its journals exist) or back (one is missing); see the module
/// doc.
fn complete(found: &Path, j: &Journal) -> std::io::Result<()> {
    let journals: Vec<PathBuf> = j.journals.iter().map(|b| from_bytes(b)).collect();
    let committed = journals.iter().all(|p| p.exists());
    for e in &j.entries {
        let (temp, target) = (from_bytes(&e.temp), from_bytes(&e.target));
        if temp.exists() {
            if committed {
                std::fs::rename(&temp, &target)?;
            } else {
                std::fs::remove_file(&temp)?;
            }
        }
        let _ = std::fs::remove_file(from_bytes(&e.backup));
    }
    for p in journals.iter().map(PathBuf::as_path).chain([found]) {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Why a commit failed: the target whose step failed, and the error.
pub struct CommitError {
    pub target: PathBuf,
    pub error: std::io::Error,
    /// A target that was replaced and could not be given its old contents back.
    pub left_replaced: Option<PathBuf>,
}

/// Renames every temporary file over its target, together or not at all (the module doc).
pub fn commit(entries: &[Entry]) -> Result<(), CommitError> {
    let targets: Vec<&Path> = entries.iter().map(|e| e.target.as_path()).collect();
    let first = entries[0].target.clone();
    let at = |target: &Path| {
        let target = target.to_path_buf();
        move |error| CommitError {
            target,
            error,
            left_replaced: None,
        }
    };
    let remove_temps = || {
        for e in entries {
            let _ = std::fs::remove_file(&e.temp);
        }
    };
    let _locks = match lock_and_recover(&targets) {
        Ok(l) => l,
        Err(e) => {
            remove_temps();
            return Err(at(&first)(e));
        }
    };
    if entries.len() == 1 {
        return std::fs::rename(&entries[0].temp, &entries[0].target).map_err(|e| {
            remove_temps();
            at(&first)(e)
        });
    }
    let journal = Journal {
        journals: targets.iter().map(|t| to_bytes(&journal_path(t))).collect(),
        entries: entries
            .iter()
            .map(|e| JournalEntry {
                target: to_bytes(&e.target),
                temp: to_bytes(&e.temp),
                backup: to_bytes(&beside(&e.target, "old")),
            })
            .collect(),
    };
    let text = journal.to_json();
    let mut dirs: Vec<PathBuf> = targets.iter().map(|t| dir_of(t)).collect();
    dirs.sort();
    dirs.dedup();
    // Journals: written before any backup or rename; a failure here leaves the targets as they
    // were (the journals written so far are removed; their pair is not committed).
    let mut written: Vec<PathBuf> = Vec::new();
    let write_journals = |written: &mut Vec<PathBuf>| -> std::io::Result<()> {
        for (i, t) in targets.iter().enumerate() {
            let p = journal_path(t);
            let mut tmp = tempfile::Builder::new()
                .prefix(".irw-")
                .suffix(".tmp")
                .tempfile_in(dir_of(t))?;
            std::io::Write::write_all(&mut tmp, &text)?;
            tmp.as_file().sync_all()?;
            tmp.persist(&p).map_err(|e| e.error)?;
            written.push(p);
            if i == 0 {
                fault("journal-1")?;
            }
        }
        for d in &dirs {
            sync_dir(d);
        }
        fault("journals")
    };
    if let Err(e) = write_journals(&mut written) {
        for p in &written {
            let _ = std::fs::remove_file(p);
        }
        remove_temps();
        return Err(at(&first)(e));
    }
    // Backups of the targets that exist, for a rename that fails.
    let mut backups: Vec<Option<PathBuf>> = Vec::with_capacity(entries.len());
    for e in entries {
        let b = beside(&e.target, "old");
        let _ = std::fs::remove_file(&b);
        backups.push(
            std::fs::metadata(&e.target)
                .is_ok_and(|m| m.is_file())
                .then(|| std::fs::hard_link(&e.target, &b).ok().map(|_| b))
                .flatten(),
        );
    }
    let existed: Vec<bool> = entries.iter().map(|e| e.target.exists()).collect();
    for (i, e) in entries.iter().enumerate() {
        let r =
            fault(&format!("rename-{}", i + 1)).and_then(|_| std::fs::rename(&e.temp, &e.target));
        if let Err(error) = r {
            // Give the targets already replaced their old contents back.
            let mut left_replaced = None;
            for (j, done) in entries[..i].iter().enumerate() {
                let restored = match &backups[j] {
                    Some(b) => std::fs::rename(b, &done.target).is_ok(),
                    None if !existed[j] => std::fs::remove_file(&done.target).is_ok(),
                    None => false,
                };
                if !restored {
                    left_replaced = Some(done.target.clone());
                }
            }
            for later in &entries[i..] {
                let _ = std::fs::remove_file(&later.temp);
            }
            for b in backups.iter().flatten() {
                let _ = std::fs::remove_file(b);
            }
            for p in &written {
                let _ = std::fs::remove_file(p);
            }
            return Err(CommitError {
                target: e.target.clone(),
                error,
                left_replaced,
            });
        }
    }
    // Committed: a failure from here on leaves a journal for the next run, nothing else.
    let _ = fault("cleanup");
    for b in backups.iter().flatten() {
        let _ = std::fs::remove_file(b);
    }
    for p in &written {
        let _ = std::fs::remove_file(p);
    }
    for d in &dirs {
        sync_dir(d);
    }
    Ok(())
}
