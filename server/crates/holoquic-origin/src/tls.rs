//! Certificates for both listeners.
//!
//! With a PKI certificate (`--cert/--key`) browsers verify the origin the usual way. Without one,
//! the origin generates an ECDSA P-256 certificate valid 10 days — Chromium accepts such a
//! certificate for WebTransport through `serverCertificateHashes` only when it is valid for at
//! most 14 days — and replaces it 2 days before it expires. During the overlap both hashes are
//! published, so a player that fetched the old hash can still connect.
//!
//! A PKI certificate is read again on [`CertStore::reload`] (SIGHUP, after a renewal); a pair
//! that does not load keeps the old one in service.
//!
//! quiche loads certificates from PEM files, so the pair in service is also written to the
//! private runtime directory (`private_dir`): a generated one, and a copy of the PKI files as they
//! were validated, so quiche never reads a file that changed after rustls checked it.
//! `generation` tells the QUIC loop when to rebuild its configuration.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, Context, Result};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use sha2::{Digest, Sha256};

/// Validity of generated certificates (Chromium's limit for hash-pinned certificates is 14 days).
pub const GENERATED_VALIDITY: Duration = Duration::from_secs(10 * 24 * 3600);
/// How long before expiry a generated certificate is replaced.
pub const ROTATE_BEFORE_EXPIRY: Duration = Duration::from_secs(2 * 24 * 3600);

/// One certificate and key, as files (for quiche) and in memory (for rustls).
#[derive(Debug)]
pub struct CertPair {
    pub cert_pem: PathBuf,
    pub key_pem: PathBuf,
    /// SHA-256 of the DER leaf certificate: what `serverCertificateHashes` pins.
    pub der_sha256: [u8; 32],
    pub not_after: SystemTime,
    /// Increments with every rotation.
    pub generation: u64,
    pub self_signed: bool,
    certified: Arc<CertifiedKey>,
}

struct State {
    current: Arc<CertPair>,
    /// The replaced certificate while it is still valid (published during the overlap).
    previous: Option<Arc<CertPair>>,
}

/// The origin's certificate, shared by the QUIC loop and the HTTPS listener.
pub struct CertStore {
    state: Mutex<State>,
    /// Generated certificates shared with other origins (`--cert-dir`), when used.
    shared: Option<Shared>,
    /// Where the PEM files quiche loads are written.
    runtime_dir: PathBuf,
    names: Vec<String>,
    /// The PKI certificate chain and key files, read again by `reload`; None when generated.
    pki_files: Option<(PathBuf, PathBuf)>,
}

/// A `--cert-dir` and the pairs loaded from it.
struct Shared {
    dir: crate::cert_dir::CertDir,
    validity: Duration,
    renew_before: Duration,
    /// Loaded pairs by file name (their PEM files written once), and the next generation number.
    loaded: Mutex<(std::collections::HashMap<String, Arc<CertPair>>, u64)>,
}

impl std::fmt::Debug for CertStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertStore").field("runtime_dir", &self.runtime_dir).finish()
    }
}

impl CertStore {
    /// Loads a PKI certificate chain and key (PEM), copied into `runtime_dir` for quiche.
    pub fn from_files(cert: &Path, key: &Path, runtime_dir: &Path) -> Result<Self> {
        let pair = load_pki_pair(cert, key, runtime_dir, 0)?;
        Ok(Self {
            state: Mutex::new(State { current: Arc::new(pair), previous: None }),
            runtime_dir: runtime_dir.to_path_buf(),
            names: Vec::new(),
            pki_files: Some((cert.to_path_buf(), key.to_path_buf())),
            shared: None,
        })
    }

    /// Reads the PKI certificate and key files again and serves them from now on: new TLS
    /// connections, and new QUIC connections once the loop sees the new generation. On any
    /// error the certificate in service stays. Returns false for a generated certificate, which
    /// has no files to read (it rotates by itself).
    pub fn reload(&self) -> Result<bool> {
        let Some((cert, key)) = &self.pki_files else { return Ok(false) };
        let next = load_pki_pair(cert, key, &self.runtime_dir, self.current().generation + 1)?;
        self.state.lock().expect("cert lock").current = Arc::new(next);
        Ok(true)
    }

    /// Generates a short-lived self-signed certificate for `names` (plus localhost, 127.0.0.1, ::1),
    /// written under `runtime_dir`.
    pub fn generate(runtime_dir: &Path, names: &[String]) -> Result<Self> {
        std::fs::create_dir_all(runtime_dir).with_context(|| format!("creating {}", runtime_dir.display()))?;
        let mut all = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
        all.extend(names.iter().cloned());
        let pair = generate_pair(runtime_dir, &all, SystemTime::now(), GENERATED_VALIDITY, 1)?;
        Ok(Self {
            state: Mutex::new(State { current: Arc::new(pair), previous: None }),
            runtime_dir: runtime_dir.to_path_buf(),
            names: all,
            pki_files: None,
            shared: None,
        })
    }

    /// Generated certificates shared through `cert_dir` with other origins (`cert_dir.rs`): the
    /// one the directory holds, or a new one made there; valid `validity`, the next made
    /// `renew_before` ahead of expiry. Written under `runtime_dir` for quiche.
    pub fn shared(cert_dir: &Path, runtime_dir: &Path, names: &[String], validity: Duration, renew_before: Duration) -> Result<Self> {
        let dir = crate::cert_dir::CertDir::open(cert_dir)?;
        let mut all = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
        all.extend(names.iter().cloned());
        let shared = Shared { dir, validity, renew_before, loaded: Mutex::new((Default::default(), 1)) };
        let (current, previous) = shared.select(&all, runtime_dir, SystemTime::now())?;
        Ok(Self { state: Mutex::new(State { current, previous }), runtime_dir: runtime_dir.to_path_buf(), names: all, pki_files: None, shared: Some(shared) })
    }

    /// With `--cert-dir`: reads the directory again (making the next certificate when due) and
    /// serves and publishes what it selects; returns whether the served certificate changed.
    pub fn refresh_shared(&self, now: SystemTime) -> Result<bool> {
        let Some(shared) = &self.shared else { return Ok(false) };
        let (current, previous) = shared.select(&self.names, &self.runtime_dir, now)?;
        let mut state = self.state.lock().expect("cert lock");
        let changed = state.current.der_sha256 != current.der_sha256;
        state.current = current;
        state.previous = previous;
        Ok(changed)
    }

    pub fn current(&self) -> Arc<CertPair> {
        self.state.lock().expect("cert lock").current.clone()
    }

    /// Hashes a player may pin: the current certificate and, during a rotation overlap, the
    /// previous one. Empty for a PKI certificate (nothing to pin).
    pub fn published_hashes(&self) -> Vec<([u8; 32], SystemTime)> {
        let state = self.state.lock().expect("cert lock");
        if !state.current.self_signed {
            return Vec::new();
        }
        let now = SystemTime::now();
        let mut out = vec![(state.current.der_sha256, state.current.not_after)];
        if let Some(prev) = &state.previous {
            if prev.not_after > now {
                out.push((prev.der_sha256, prev.not_after));
            }
        }
        out
    }

    /// Replaces a generated certificate when `now` is within [`ROTATE_BEFORE_EXPIRY`] of its
    /// expiry; returns whether it rotated. PKI certificates are never touched.
    pub fn rotate_if_due(&self, now: SystemTime, validity: Duration) -> Result<bool> {
        let current = self.current();
        if !current.self_signed || now + ROTATE_BEFORE_EXPIRY < current.not_after {
            return Ok(false);
        }
        let next = generate_pair(&self.runtime_dir, &self.names, now, validity, current.generation + 1)?;
        let mut state = self.state.lock().expect("cert lock");
        state.previous = Some(std::mem::replace(&mut state.current, Arc::new(next)));
        Ok(true)
    }

    /// Checks hourly and rotates when due, for as long as the process runs; with `--cert-dir`,
    /// reads the directory every minute (a 60th of the renewal window when shorter), so that
    /// origins sharing it publish a new certificate within that time of each other.
    pub fn spawn_rotation(self: &Arc<Self>) {
        let store = Arc::clone(self);
        if let Some(shared) = &self.shared {
            let every = (shared.renew_before / 60).min(Duration::from_secs(60));
            std::thread::Builder::new()
                .name("cert-dir".into())
                .spawn(move || loop {
                    std::thread::sleep(every);
                    match store.refresh_shared(SystemTime::now()) {
                        Ok(true) => tracing::info!(generation = store.current().generation, "serving the next certificate of --cert-dir"),
                        Ok(false) => {}
                        Err(e) => tracing::error!("reading --cert-dir failed (the certificates in service stay): {e:#}"),
                    }
                })
                .expect("spawn cert-dir thread");
            return;
        }
        std::thread::Builder::new()
            .name("cert-rotation".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_secs(3600));
                match store.rotate_if_due(SystemTime::now(), GENERATED_VALIDITY) {
                    Ok(true) => tracing::info!(generation = store.current().generation, "rotated the self-signed certificate"),
                    Ok(false) => {}
                    Err(e) => tracing::error!("certificate rotation failed: {e:#}"),
                }
            })
            .expect("spawn rotation thread");
    }

    /// rustls configuration for the HTTPS listener (ALPN h2, http/1.1) serving the current certificate.
    pub fn rustls_config(self: &Arc<Self>) -> Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(Resolver(Arc::clone(self))));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

#[derive(Debug)]
struct Resolver(Arc<CertStore>);

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.current().certified.clone())
    }
}

/// Lowercase hex, as `/cert-hash` publishes it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Shared {
    /// The served pair and the other published one, after syncing the directory.
    fn select(&self, names: &[String], runtime_dir: &Path, now: SystemTime) -> Result<(Arc<CertPair>, Option<Arc<CertPair>>)> {
        let valid = self.dir.sync(now, self.validity, self.renew_before, |now, validity| generate_pem(names, now, validity))?;
        let selection = crate::cert_dir::Selection::of(&valid, now, self.renew_before).context("no valid certificate in --cert-dir")?;
        let mut loaded = self.loaded.lock().expect("cert-dir lock");
        let (pairs, next) = &mut *loaded;
        pairs.retain(|name, _| valid.iter().any(|v| &v.name == name));
        let mut get = |stored: &crate::cert_dir::Stored| -> Result<Arc<CertPair>> {
            if let Some(pair) = pairs.get(&stored.name) {
                return Ok(Arc::clone(pair));
            }
            let names = (format!("the certificate in --cert-dir's {}", stored.name), format!("the key in --cert-dir's {}", stored.name));
            let pair = Arc::new(pair_from_pem(
                stored.cert_pem.as_bytes(),
                stored.key_pem.as_bytes(),
                (&names.0, &names.1),
                runtime_dir,
                *next,
                stored.not_after,
                true,
            )?);
            *next += 1;
            pairs.insert(stored.name.clone(), Arc::clone(&pair));
            Ok(pair)
        };
        let served = get(selection.served)?;
        let other = selection.published.get(1).map(|s| get(s)).transpose()?;
        Ok((served, other))
    }
}

/// A certificate (ECDSA P-256, self-signed, for `names`) valid `validity` from a little before
/// `now`, and its key, as PEM; and its expiry.
fn generate_pem(names: &[String], now: SystemTime, validity: Duration) -> Result<(String, String, SystemTime)> {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name.push(rcgen::DnType::CommonName, "holoquic origin");
    for name in names {
        params.subject_alt_names.push(match name.parse::<std::net::IpAddr>() {
            Ok(ip) => rcgen::SanType::IpAddress(ip),
            Err(_) => rcgen::SanType::DnsName(name.clone().try_into().map_err(|e| anyhow!("certificate name {name:?}: {e}"))?),
        });
    }
    // Backdated a little (an hour, a tenth of a short validity) for clients with skewed clocks;
    // the total stays within the validity. Whole seconds, as the certificate holds them.
    let start = now - Duration::from_secs(3600).min(validity / 10);
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(start.duration_since(SystemTime::UNIX_EPOCH)?.as_secs());
    params.not_before = time::OffsetDateTime::from(start);
    params.not_after = time::OffsetDateTime::from(start + validity);
    Ok((params.self_signed(&key)?.pem(), key.serialize_pem(), start + validity))
}

fn generate_pair(dir: &Path, names: &[String], now: SystemTime, validity: Duration, generation: u64) -> Result<CertPair> {
    let (cert, key, not_after) = generate_pem(names, now, validity)?;
    pair_from_pem(cert.as_bytes(), key.as_bytes(), ("the generated certificate", "its key"), dir, generation, not_after, true)
}

/// A PKI pair read from its files, checked (the key signs for the certificate's chain as rustls
/// loads it) and copied into `dir` as generation `generation`.
fn load_pki_pair(cert: &Path, key: &Path, dir: &Path, generation: u64) -> Result<CertPair> {
    let cert_bytes = std::fs::read(cert).with_context(|| format!("reading {}", cert.display()))?;
    let key_bytes = std::fs::read(key).with_context(|| format!("reading {}", key.display()))?;
    let not_after = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::from(u32::MAX));
    pair_from_pem(&cert_bytes, &key_bytes, (&cert.display().to_string(), &key.display().to_string()), dir, generation, not_after, false)
}

/// A pair from its PEM texts (named `cert` and `key` in messages), checked (the key signs for the
/// chain's leaf as rustls loads it) and written into `dir` as generation `generation`.
fn pair_from_pem(
    cert_bytes: &[u8],
    key_bytes: &[u8],
    (cert, key): (&str, &str),
    dir: &Path,
    generation: u64,
    not_after: SystemTime,
    self_signed: bool,
) -> Result<CertPair> {
    let chain = rustls_pemfile::certs(&mut &cert_bytes[..]).collect::<Result<Vec<_>, _>>().with_context(|| format!("parsing {cert}"))?;
    let Some(leaf) = chain.first() else { return Err(anyhow!("{cert} holds no PEM certificate")) };
    let der_sha256 = Sha256::digest(leaf.as_ref()).into();
    let key_der =
        rustls_pemfile::private_key(&mut &key_bytes[..]).with_context(|| format!("parsing {key}"))?.ok_or_else(|| anyhow!("{key} holds no PEM private key"))?;
    let certified = certified_key(chain, key_der)?;
    certified.keys_match().map_err(|e| anyhow!("{key} does not belong to {cert}: {e}"))?;
    let (cert_pem, key_pem) = write_pair(dir, generation, cert_bytes, key_bytes)?;
    Ok(CertPair { cert_pem, key_pem, der_sha256, not_after, generation, self_signed, certified })
}

/// Writes `cert-N.pem` and `key-N.pem` into `dir`, readable by this user only.
fn write_pair(dir: &Path, generation: u64, cert: &[u8], key: &[u8]) -> Result<(PathBuf, PathBuf)> {
    let cert_pem = dir.join(format!("cert-{generation}.pem"));
    let key_pem = dir.join(format!("key-{generation}.pem"));
    write_private(&cert_pem, cert)?;
    write_private(&key_pem, key)?;
    Ok((cert_pem, key_pem))
}

/// Creates `path` afresh (mode 0600), never through a symbolic link: a name left over (a retry
/// after a failed write) is removed first, and the create refuses to follow a link or reuse a file.
fn write_private(path: &Path, data: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e).with_context(|| format!("removing {}", path.display())),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW);
    options.open(path).and_then(|mut f| f.write_all(data)).with_context(|| format!("writing {}", path.display()))
}

fn certified_key(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> Result<Arc<CertifiedKey>> {
    let signing = rustls::crypto::ring::sign::any_supported_type(&key).map_err(|e| anyhow!("unsupported private key: {e}"))?;
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        std::env::temp_dir().join(format!("holoquic-tls-{}-{}", std::process::id(), rand::random::<u64>()))
    }

    #[test]
    fn generated_certificate_is_short_lived_p256_with_matching_hash() {
        let dir = tmp();
        let store = CertStore::generate(&dir, &["origin.test".into()]).unwrap();
        let pair = store.current();
        let pem = std::fs::read(&pair.cert_pem).unwrap();
        let der = rustls_pemfile::certs(&mut &pem[..]).next().unwrap().unwrap();
        assert_eq!(<[u8; 32]>::from(Sha256::digest(der.as_ref())), pair.der_sha256);
        let lifetime = pair.not_after.duration_since(SystemTime::now()).unwrap();
        assert!(lifetime <= Duration::from_secs(14 * 24 * 3600));
        // The key is an EC key (PKCS#8 with the P-256 OID 1.2.840.10045.3.1.7).
        let key = std::fs::read(&pair.key_pem).unwrap();
        let key_der = rustls_pemfile::private_key(&mut &key[..]).unwrap().unwrap();
        let oid_p256 = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
        assert!(key_der.secret_der().windows(oid_p256.len()).any(|w| w == oid_p256));
        assert_eq!(store.published_hashes().len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn rotation_publishes_both_hashes_during_the_overlap() {
        let dir = tmp();
        let store = CertStore::generate(&dir, &[]).unwrap();
        let first = store.current();
        assert!(!store.rotate_if_due(SystemTime::now(), GENERATED_VALIDITY).unwrap(), "not due yet");
        let due = first.not_after - Duration::from_secs(3600);
        assert!(store.rotate_if_due(due, GENERATED_VALIDITY).unwrap());
        let second = store.current();
        assert_eq!(second.generation, first.generation + 1);
        assert_ne!(second.der_sha256, first.der_sha256);
        let hashes: Vec<_> = store.published_hashes().into_iter().map(|(h, _)| h).collect();
        assert_eq!(hashes, vec![second.der_sha256, first.der_sha256]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn pki_files_load_and_publish_no_hash() {
        let (source, runtime) = (tmp(), tmp());
        std::fs::create_dir_all(&runtime).unwrap();
        let generated = CertStore::generate(&source, &[]).unwrap().current();
        let store = CertStore::from_files(&generated.cert_pem, &generated.key_pem, &runtime).unwrap();
        assert!(store.published_hashes().is_empty());
        assert_eq!(store.current().der_sha256, generated.der_sha256);
        assert!(store.current().cert_pem.starts_with(&runtime), "quiche loads the validated copy");
        assert!(CertStore::from_files(&source.join("missing.pem"), &generated.key_pem, &runtime).is_err());
        std::fs::remove_dir_all(source).unwrap();
        std::fs::remove_dir_all(runtime).unwrap();
    }

    /// A renewed pair is served after `reload`; a corrupt certificate, or a key of another
    /// certificate, leaves the pair in service (and its files) as it was.
    #[test]
    fn reload_takes_a_new_pair_and_keeps_the_old_one_when_the_new_one_is_bad() {
        let (source, runtime) = (tmp(), tmp());
        std::fs::create_dir_all(&runtime).unwrap();
        let first = CertStore::generate(&source.join("a"), &[]).unwrap().current();
        let second = CertStore::generate(&source.join("b"), &[]).unwrap().current();
        let (cert, key) = (source.join("cert.pem"), source.join("key.pem"));
        std::fs::copy(&first.cert_pem, &cert).unwrap();
        std::fs::copy(&first.key_pem, &key).unwrap();
        let store = CertStore::from_files(&cert, &key, &runtime).unwrap();
        assert!(CertStore::generate(&source.join("c"), &[]).unwrap().reload().is_ok_and(|reloaded| !reloaded), "nothing to reload");

        std::fs::copy(&second.cert_pem, &cert).unwrap();
        std::fs::copy(&second.key_pem, &key).unwrap();
        assert!(store.reload().unwrap());
        let now = store.current();
        assert_eq!((now.der_sha256, now.generation), (second.der_sha256, 1));
        assert_eq!(std::fs::read(&now.cert_pem).unwrap(), std::fs::read(&second.cert_pem).unwrap());

        std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n").unwrap();
        assert!(store.reload().is_err());
        std::fs::write(&cert, "").unwrap();
        assert!(store.reload().unwrap_err().to_string().contains("no PEM certificate"));
        std::fs::copy(&first.cert_pem, &cert).unwrap(); // the key is still the second's
        assert!(store.reload().unwrap_err().to_string().contains("does not belong"));
        let kept = store.current();
        assert_eq!((kept.der_sha256, kept.generation), (second.der_sha256, 1));
        assert_eq!(std::fs::read(&kept.cert_pem).unwrap(), std::fs::read(&second.cert_pem).unwrap(), "its file is untouched");
        std::fs::remove_dir_all(source).unwrap();
        std::fs::remove_dir_all(runtime).unwrap();
    }

    #[test]
    fn private_files_are_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.join("key-1.pem");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_private(&link, b"secret").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep", "the link was replaced, not followed");
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
