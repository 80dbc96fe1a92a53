//! Generated certificates shared by several origins through one directory (`--cert-dir`), so
//! that every origin serves and publishes the same certificate hashes, across rotation too.
//!
//! The directory holds one file per certificate, `cert-<not after, Unix seconds>-<random>.pem`,
//! with the certificate's PEM followed by its key's. Whoever finds no certificate valid long
//! enough makes the next one: under an exclusive `flock` on `lock` in the directory (so two
//! origins starting together make one certificate, not two), written to a temporary file (mode
//! 0600, in the same directory), flushed to disk and renamed into place, so a reader sees a whole
//! file or none. The next certificate is made `renew_before` ahead of the current one's expiry,
//! and what an origin serves and publishes is a function of the directory and the clock alone
//! ([`Selection::of`]): every origin reading the same directory agrees, whichever made the file.
//!
//! The key must stay private on a shared file system: the directory is made with mode 0700 if
//! missing and must be a directory (not a link), ours and 0700 (`private_dir`'s check); files are
//! opened without following links and must be regular files, ours, with mode 0600.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

/// Name of the lock file in the directory.
const LOCK: &str = "lock";
/// Prefix and suffix of certificate files.
const PREFIX: &str = "cert-";
const SUFFIX: &str = ".pem";
/// Where the key's PEM starts in a certificate file.
const KEY_MARKER: &str = "-----BEGIN PRIVATE KEY-----";
/// Largest certificate file read (a P-256 certificate and key take about 1 KiB).
const MAX_FILE: u64 = 64 << 10;

/// One certificate of the directory, as its PEM texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub cert_pem: String,
    pub key_pem: String,
    pub not_after: SystemTime,
    /// The file's name (unique per certificate).
    pub name: String,
}

/// What an origin serves and publishes, given the certificates valid now.
#[derive(Debug, PartialEq, Eq)]
pub struct Selection<'a> {
    pub served: &'a Stored,
    /// Every valid certificate, the served one first: the hashes `/config.json` lists.
    pub published: Vec<&'a Stored>,
}

impl<'a> Selection<'a> {
    /// The oldest valid certificate is served until half of `renew_before` is left of it, then
    /// the next: players that fetched `/config.json` since the next was made hold both hashes,
    /// and any origin may serve either. `valid` is sorted by expiry, all valid now; None if empty.
    pub fn of(valid: &'a [Stored], now: SystemTime, renew_before: Duration) -> Option<Self> {
        let served = valid.iter().find(|s| s.not_after > now + renew_before / 2).or(valid.last())?;
        let mut published = vec![served];
        published.extend(valid.iter().filter(|s| s.name != served.name));
        Some(Self { served, published })
    }
}

/// The shared directory.
#[derive(Debug)]
pub struct CertDir {
    dir: PathBuf,
}

impl CertDir {
    /// Opens `dir`, making it (mode 0700) if missing; refuses one that is a link, someone else's,
    /// or readable by others.
    pub fn open(dir: &Path) -> Result<Self> {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("--cert-dir: creating {}", dir.display())),
        }
        crate::private_dir::check_private(dir).context("--cert-dir must be a directory of this user with mode 0700")?;
        Ok(Self { dir: dir.to_path_buf() })
    }

    /// Under the directory's lock: the certificates valid at `now`, by expiry, after making the
    /// next one (with `make`, valid `validity` from about `now`: certificate and key PEM, and
    /// expiry) when none is valid longer than `renew_before`. Expired files are removed.
    pub fn sync(
        &self,
        now: SystemTime,
        validity: Duration,
        renew_before: Duration,
        make: impl FnOnce(SystemTime, Duration) -> Result<(String, String, SystemTime)>,
    ) -> Result<Vec<Stored>> {
        let _lock = self.lock()?;
        let mut valid = Vec::new();
        for stored in self.read_all()? {
            if stored.not_after > now {
                valid.push(stored);
            } else {
                let _ = std::fs::remove_file(self.dir.join(&stored.name));
            }
        }
        valid.sort_by_key(|s| s.not_after);
        if valid.last().is_none_or(|newest| newest.not_after <= now + renew_before) {
            let (cert_pem, key_pem, not_after) = make(now, validity)?;
            let name = format!("{PREFIX}{}-{:016x}{SUFFIX}", unix_seconds(not_after), rand::random::<u64>());
            self.write_atomically(&name, format!("{cert_pem}{key_pem}").as_bytes())?;
            valid.push(Stored { cert_pem, key_pem, not_after: UNIX_EPOCH + Duration::from_secs(unix_seconds(not_after)), name });
        }
        Ok(valid)
    }

    /// Takes the directory's exclusive lock (released when the file is dropped).
    fn lock(&self) -> Result<std::fs::File> {
        let path = self.dir.join(LOCK);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("opening the lock {}", path.display()))?;
        // SAFETY: a valid descriptor; flock blocks until the lock is ours.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error()).with_context(|| format!("locking {}", path.display()));
        }
        Ok(file)
    }

    /// Every certificate file of the directory (expired ones too).
    fn read_all(&self) -> Result<Vec<Stored>> {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(&self.dir).with_context(|| format!("reading {}", self.dir.display()))? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            let Some(seconds) = name.strip_prefix(PREFIX).and_then(|rest| rest.split('-').next()).and_then(|s| s.parse::<u64>().ok()) else { continue };
            if !name.ends_with(SUFFIX) {
                continue;
            }
            let text = self.read_private(&name)?;
            let Some(at) = text.find(KEY_MARKER) else { bail!("{}: no private key in it", self.dir.join(&name).display()) };
            let (cert_pem, key_pem) = text.split_at(at);
            all.push(Stored { cert_pem: cert_pem.to_owned(), key_pem: key_pem.to_owned(), not_after: UNIX_EPOCH + Duration::from_secs(seconds), name });
        }
        Ok(all)
    }

    /// Reads the file `name`: not through a link, and only a regular file of ours with mode 0600.
    fn read_private(&self, name: &str) -> Result<String> {
        let path = self.dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("opening {} (a link is refused)", path.display()))?;
        let meta = file.metadata()?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if !meta.is_file() || meta.uid() != me || meta.permissions().mode() & 0o777 != 0o600 {
            bail!("{} must be a regular file of uid {me} with mode 0600 (it holds a private key)", path.display());
        }
        let mut text = String::new();
        Read::by_ref(&mut file).take(MAX_FILE).read_to_string(&mut text).with_context(|| format!("reading {}", path.display()))?;
        Ok(text)
    }

    /// Writes `name` whole or not at all: a fresh temporary file (0600), flushed, renamed into
    /// place, and the directory flushed so the rename survives a crash.
    fn write_atomically(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let temp = self.dir.join(format!(".{name}.{:016x}.tmp", rand::random::<u64>()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp)
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&temp, self.dir.join(name)))
            .and_then(|()| std::fs::File::open(&self.dir).and_then(|d| d.sync_all()));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written.with_context(|| format!("writing {} in {}", name, self.dir.display()))
    }
}

fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(now: SystemTime, validity: Duration) -> Result<(String, String, SystemTime)> {
        let cert = format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", unix_seconds(now + validity));
        Ok((cert, format!("{KEY_MARKER}\nk\n-----END PRIVATE KEY-----\n"), now + validity))
    }

    #[test]
    fn one_certificate_is_made_then_the_next_ahead_of_expiry_and_the_served_one_switches_at_half_the_window() {
        let base = tempfile::tempdir().unwrap();
        let dir = CertDir::open(&base.path().join("certs")).unwrap();
        let (validity, renew) = (Duration::from_secs(10 * 86_400), Duration::from_secs(2 * 86_400));
        let t0 = SystemTime::now();
        let first = dir.sync(t0, validity, renew, fake).unwrap();
        assert_eq!(first.len(), 1);
        // Another origin (or a later check) finds it and makes nothing.
        assert_eq!(dir.sync(t0 + Duration::from_secs(60), validity, renew, |_, _| panic!("made another")).unwrap(), first);
        let mode = std::fs::metadata(base.path().join("certs").join(&first[0].name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Two days before expiry the next is made; both are published, the first still served.
        let due = first[0].not_after - renew + Duration::from_secs(1);
        let both = dir.sync(due, validity, renew, fake).unwrap();
        assert_eq!(both.len(), 2);
        let selection = Selection::of(&both, due, renew).unwrap();
        assert_eq!(selection.served.name, first[0].name);
        assert_eq!(selection.published.len(), 2);
        // A day before expiry the next is served; after expiry only it is left.
        let later = first[0].not_after - renew / 2 + Duration::from_secs(1);
        assert_eq!(Selection::of(&both, later, renew).unwrap().served.name, both[1].name);
        let after = first[0].not_after + Duration::from_secs(1);
        let left = dir.sync(after, validity, renew, |_, _| panic!("made another")).unwrap();
        assert_eq!(left, both[1..]);
        assert_eq!(std::fs::read_dir(base.path().join("certs")).unwrap().count(), 2, "the expired file is gone (the lock stays)");
    }

    #[test]
    fn a_shared_directory_a_link_or_a_readable_file_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(format!("{:#}", CertDir::open(&open).unwrap_err()).contains("mode 755"));
        let link = base.path().join("link");
        let private = base.path().join("private");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        assert!(format!("{:#}", CertDir::open(&link).unwrap_err()).contains("not a directory"));
        let dir = CertDir::open(&private).unwrap();
        let now = SystemTime::now();
        let made = dir.sync(now, Duration::from_secs(3600 * 48), Duration::from_secs(3600), fake).unwrap();
        let file = private.join(&made[0].name);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(format!("{:#}", dir.sync(now, Duration::from_secs(3600 * 48), Duration::from_secs(3600), fake).unwrap_err()).contains("mode 0600"));
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(base.path().join("elsewhere"), &file).unwrap();
        assert!(format!("{:#}", dir.sync(now, Duration::from_secs(3600 * 48), Duration::from_secs(3600), fake).unwrap_err()).contains("a link is refused"));
    }
}
