//! A real S3 store for the tests: SeaweedFS (`weed mini`: master, volume, filer and S3 gateway in
//! one process) on 127.0.0.1 in a temporary directory, with one bucket and static credentials;
//! stopped (and able to start again over the same data) by the test.
//!
//! The binary is the one `scripts/setup.sh` installs (`.holoquic/tools/seaweedfs-<version>/weed`,
//! or under `HOLOQUIC_TOOLS`), or `HOLOQUIC_WEED`. Without it a test is skipped with a loud message — unless
//! `HOLOQUIC_REQUIRE_S3` is set (`scripts/test.sh` sets it), when it fails.

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use holoquic_origin::bucket_client::BucketSettings;
use object_store::aws::AmazonS3;
use object_store::ObjectStore;

pub const BUCKET: &str = "holoquic";
pub const ACCESS_KEY: &str = "holoquic-test";
pub const SECRET_KEY: &str = "holoquic-test-secret";
/// The SeaweedFS version `scripts/setup.sh` installs (keep the two equal).
pub const WEED_VERSION: &str = "v0.0.0-20261109003541-7506e5f91cd6";

pub struct Seaweed {
    binary: PathBuf,
    dir: tempfile::TempDir,
    /// Master, volume, filer and S3 HTTP ports; each one's gRPC port is 10000 above it.
    ports: [u16; 4],
    child: Option<Child>,
}

impl Seaweed {
    /// The store, started and ready; None (after a loud message) when the binary is absent and
    /// the store is not required.
    pub fn start_or_skip(test: &str) -> Option<Self> {
        let Some(binary) = weed_binary() else {
            let required = std::env::var_os("HOLOQUIC_REQUIRE_S3").is_some();
            assert!(!required, "HOLOQUIC_REQUIRE_S3 is set but no SeaweedFS binary was found: run scripts/setup.sh (or set HOLOQUIC_WEED)");
            eprintln!(
                "\n*** SKIPPED {test}: no SeaweedFS binary (run scripts/setup.sh, or set HOLOQUIC_WEED); set HOLOQUIC_REQUIRE_S3=1 to make this an error ***\n"
            );
            return None;
        };
        // Ports are picked free but taken only when weed binds them: another test may take one
        // meanwhile, and weed then exits. Five tries, each on fresh ports and a fresh directory.
        for attempt in 1.. {
            let mut store = Self { binary: binary.clone(), dir: tempfile::tempdir().unwrap(), ports: free_port_pairs(), child: None };
            match store.try_resume() {
                Ok(()) => return Some(store),
                Err(log) if attempt < 5 => eprintln!("weed did not start (try {attempt}), again on other ports:\n{log}"),
                Err(log) => panic!("weed did not start in 5 tries:\n{log}"),
            }
        }
        unreachable!()
    }

    /// `http://127.0.0.1:PORT` of the S3 gateway.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[3])
    }

    /// The origin's (and `holoquic-publish`'s) settings for this store.
    pub fn settings(&self) -> BucketSettings {
        BucketSettings {
            endpoint: Some(self.endpoint()),
            region: Some("us-east-1".into()),
            access_key_id: Some(ACCESS_KEY.into()),
            secret_access_key: Some(SECRET_KEY.into()),
            allow_http: Some(true),
            ..BucketSettings::default()
        }
    }

    /// The `--s3-*` flags that reach this store.
    pub fn flags(&self) -> Vec<String> {
        let endpoint = self.endpoint();
        ["--s3-endpoint", &endpoint, "--s3-region", "us-east-1", "--s3-access-key-id", ACCESS_KEY, "--s3-allow-http"].iter().map(|s| s.to_string()).collect()
    }

    /// The secret, by its variable (never on a command line).
    pub fn env(&self) -> Vec<(&'static str, &'static str)> {
        vec![("HOLOQUIC_S3_SECRET_ACCESS_KEY", SECRET_KEY)]
    }

    pub fn client(&self) -> AmazonS3 {
        self.settings().client(BUCKET).unwrap()
    }

    /// Freezes the store (SIGSTOP): connections open, no answers — a hung store, not a dead one.
    pub fn hang(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Lets a hung store go on (SIGCONT).
    pub fn unhang(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        let child = self.child.as_ref().expect("the store is running");
        // SAFETY: kill(2) on our own child's pid, which `child` keeps from being reaped.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    }

    /// Kills the store (as a crash would: no goodbye to its clients).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the store (again) on its ports over its data, and waits until the bucket answers
    /// (60 s at most: a first start on a loaded machine takes a while).
    pub fn resume(&mut self) {
        self.try_resume().unwrap_or_else(|log| panic!("weed exited before it was ready:\n{log}"));
    }

    /// [`Seaweed::resume`], or weed's log when it exited before it was ready.
    fn try_resume(&mut self) -> Result<(), String> {
        assert!(self.child.is_none(), "already running");
        let [master, volume, filer, s3] = self.ports.map(|p| p.to_string());
        let log = std::fs::File::create(self.dir.path().join("weed.log")).unwrap();
        let child = Command::new(&self.binary)
            .args(["mini", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-webdav=false", "-admin.ui=false", "-master.telemetry=false"])
            .args(["-s3.port.iceberg=0", "-s3.port.lance=0", &format!("-bucket={BUCKET}"), &format!("-dir={}", self.data().display())])
            .args([format!("-master.port={master}"), format!("-volume.port={volume}"), format!("-filer.port={filer}"), format!("-s3.port={s3}")])
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start weed");
        self.child = Some(child);
        let client = std::sync::Arc::new(self.client());
        // On a thread of its own: the caller may be a tokio test, where blocking on a runtime
        // is refused.
        let ask = |client: std::sync::Arc<AmazonS3>| {
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async { client.list_with_delimiter(None).await.map(|_| ()) })
            })
            .join()
            .unwrap()
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = ask(std::sync::Arc::clone(&client));
            if ready.is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return Err(format!("({status})\n{}", self.log()));
            }
            assert!(Instant::now() < deadline, "weed not ready after 60 s ({ready:?}):\n{}", self.log());
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn data(&self) -> PathBuf {
        let data = self.dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        data
    }

    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("weed.log")).unwrap_or_default();
        text.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Seaweed {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `HOLOQUIC_WEED`, else the binary `scripts/setup.sh` installs under `HOLOQUIC_TOOLS` (default:
/// the repository's `.holoquic/tools/`).
fn weed_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HOLOQUIC_WEED") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let tools = match std::env::var_os("HOLOQUIC_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.holoquic/tools"),
    };
    Some(tools.join(format!("seaweedfs-{WEED_VERSION}/weed"))).filter(|p| p.is_file())
}

/// Four ports free on 127.0.0.1 together with the port 10000 above each (SeaweedFS's gRPC), all
/// below the kernel's ephemeral range so no client socket takes one meanwhile.
fn free_port_pairs() -> [u16; 4] {
    let mut ports = Vec::new();
    for _ in 0..1000 {
        let port = 11_000 + (rand::random::<u16>() % 11_000);
        let free = |p: u16| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok();
        if !ports.iter().any(|&p: &u16| p.abs_diff(port) < 2) && free(port) && free(port + 10_000) {
            ports.push(port);
            if ports.len() == 4 {
                return [ports[0], ports[1], ports[2], ports[3]];
            }
        }
    }
    panic!("no free ports for SeaweedFS");
}
