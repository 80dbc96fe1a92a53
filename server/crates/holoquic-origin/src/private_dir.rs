//! The origin's private runtime directory: where the PEM files quiche loads are written (a
//! generated key, or the copy of a PKI pair).
//!
//! Another local user must not read the key nor make us write it somewhere else. So the
//! directory is made fresh under `$XDG_RUNTIME_DIR` (a per-user 0700 directory where systemd
//! provides one) or else the temporary directory, with an unpredictable name, by `mkdir` — which
//! fails on any existing name, a planted symbolic link included, and so never follows one — with
//! mode 0700; it is then checked to be a directory (not a link), ours, and 0700. It is removed
//! when the value is dropped: on every orderly exit, SIGINT and SIGTERM included.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Name prefix of the directories, followed by random characters.
pub const PREFIX: &str = "holoquic-origin-";

/// A private directory, removed with its contents on drop.
#[derive(Debug)]
pub struct PrivateDir(tempfile::TempDir);

impl PrivateDir {
    /// Creates one under `$XDG_RUNTIME_DIR` when it is set to an absolute directory, else under
    /// the temporary directory (`$TMPDIR`, `/tmp`).
    pub fn create() -> Result<Self> {
        let base = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute() && p.is_dir()).unwrap_or_else(std::env::temp_dir);
        Self::create_in(&base)
    }

    /// Creates one under `base`.
    pub fn create_in(base: &Path) -> Result<Self> {
        // tempfile makes the directory with mkdir(2) (retrying random names), here with mode 0700.
        let dir = tempfile::Builder::new()
            .prefix(PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base)
            .with_context(|| format!("creating a private directory in {}", base.display()))?;
        check_private(dir.path())?;
        Ok(Self(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// `path` is a directory (not a link to one) owned by this user with mode 0700.
pub(crate) fn check_private(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path).with_context(|| format!("inspecting {}", path.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.file_type().is_dir() {
        bail!("{} is not a directory", path.display());
    }
    if meta.uid() != me {
        bail!("{} belongs to uid {}, not to us ({me})", path.display(), meta.uid());
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode != 0o700 {
        bail!("{} has mode {mode:o}, not 700", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_private_and_removed_on_drop() {
        let base = tempfile::tempdir().unwrap();
        let a = PrivateDir::create_in(base.path()).unwrap();
        let b = PrivateDir::create_in(base.path()).unwrap();
        assert_ne!(a.path(), b.path(), "a fresh name each time");
        assert!(a.path().file_name().unwrap().to_str().unwrap().starts_with(PREFIX));
        let meta = std::fs::symlink_metadata(a.path()).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        let path = a.path().to_path_buf();
        std::fs::write(path.join("key.pem"), b"secret").unwrap();
        drop(a);
        assert!(!path.exists());
    }

    #[test]
    fn a_link_or_a_shared_directory_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(check_private(&link).unwrap_err().to_string().contains("not a directory"));
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check_private(&target).unwrap_err().to_string().contains("mode 755"));
    }
}
