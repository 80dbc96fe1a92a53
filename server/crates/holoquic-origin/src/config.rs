//! Origin configuration: command-line flags and an optional TOML file (`--config`); a flag given
//! on the command line wins over the file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use serde::Deserialize;

/// Congestion control of QUIC connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    Cubic,
    Bbr2,
}

impl CongestionControl {
    pub fn quiche(self) -> quiche::CongestionControlAlgorithm {
        match self {
            Self::Cubic => quiche::CongestionControlAlgorithm::CUBIC,
            Self::Bbr2 => quiche::CongestionControlAlgorithm::Bbr2Gcongestion,
        }
    }
}

/// Default of `--loss-tolerance`, chosen by measurement (docs/benchmarks.md → "Origin").
pub const DEFAULT_LOSS_TOLERANCE: f32 = 0.5;

/// Resource limits (docs/protocol.md §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub max_requests_per_session: usize,
    pub max_object_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_connections: 1024, max_requests_per_session: 256, max_object_bytes: 64 << 20 }
    }
}

/// Everything the origin needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// UDP (QUIC) and TCP (HTTPS) on the same address and port.
    pub listen: SocketAddr,
    /// Optional plain HTTP/1.1 listener for local use (`http://127.0.0.1` is a secure context).
    pub http_listen: Option<SocketAddr>,
    /// Content root, served under `/content/`.
    pub content: PathBuf,
    /// Built web app served at `/`.
    pub web: Option<PathBuf>,
    /// PKI certificate chain and key (PEM); without them a short-lived certificate is generated.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// Extra DNS names / IP addresses for the generated certificate.
    pub cert_names: Vec<String>,
    /// Host (and port) written into `/config.json`; default: the request's Host header.
    pub public_host: Option<String>,
    pub wt_path: String,
    /// Origins allowed to open WebTransport sessions; empty = any.
    pub allowed_origins: Vec<String>,
    pub cors: bool,
    pub cc: CongestionControl,
    /// Loss rate per round trip that BBR2 takes for random (non-congestive) loss, which FEC
    /// covers, rather than a congestion signal (see `quic::congestion`); 0 = quiche's defaults.
    pub loss_tolerance: f32,
    pub qlog_dir: Option<PathBuf>,
    pub limits: Limits,
}

#[derive(Debug, Parser)]
#[command(name = "holoquic-origin", version, about = "holoquic origin: WebTransport over HTTP/3 (quiche) and HTTPS (HTTP/2) for volumetric video objects")]
struct Cli {
    /// TOML file with the same keys as the long flags (e.g. `listen = "[::]:4433"`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// UDP + TCP address [default: [::]:4433].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Plain HTTP/1.1 listener, e.g. 127.0.0.1:8080.
    #[arg(long)]
    http_listen: Option<SocketAddr>,
    /// Content directory (served under /content/) [default: content].
    #[arg(long)]
    content: Option<PathBuf>,
    /// Built web app directory served at / (e.g. dist).
    #[arg(long)]
    web: Option<PathBuf>,
    /// PEM certificate chain (PKI); with --key.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// PEM private key; with --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Extra subject names for the generated certificate (repeatable).
    #[arg(long = "cert-name")]
    cert_names: Vec<String>,
    /// host[:port] advertised in /config.json.
    #[arg(long)]
    public_host: Option<String>,
    /// WebTransport session path [default: /holoquic].
    #[arg(long)]
    wt_path: Option<String>,
    /// Origin allowed to open WebTransport sessions (repeatable; none = any).
    #[arg(long = "allow-origin")]
    allowed_origins: Vec<String>,
    /// Send `Access-Control-Allow-Origin: *` on content and config (for embedding).
    #[arg(long)]
    cors: bool,
    /// Congestion control [default: bbr2].
    #[arg(long, value_enum)]
    cc: Option<CongestionControl>,
    /// Loss rate per round trip BBR2 tolerates as random loss (0 … 0.5; 0 = quiche's defaults)
    /// [default: 0.5].
    #[arg(long)]
    loss_tolerance: Option<f32>,
    /// Write a qlog per QUIC connection into this directory.
    #[arg(long)]
    qlog_dir: Option<PathBuf>,
    /// Concurrent requests per WebTransport session [default: 256].
    #[arg(long)]
    max_requests_per_session: Option<usize>,
    /// Largest object served, bytes [default: 67108864].
    #[arg(long)]
    max_object_bytes: Option<u64>,
    /// Concurrent QUIC connections [default: 1024].
    #[arg(long)]
    max_connections: Option<usize>,
}

/// The TOML file: every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileConfig {
    listen: Option<SocketAddr>,
    http_listen: Option<SocketAddr>,
    content: Option<PathBuf>,
    web: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    #[serde(default)]
    cert_names: Vec<String>,
    public_host: Option<String>,
    wt_path: Option<String>,
    #[serde(default)]
    allow_origin: Vec<String>,
    cors: Option<bool>,
    cc: Option<CongestionControl>,
    loss_tolerance: Option<f32>,
    qlog_dir: Option<PathBuf>,
    max_requests_per_session: Option<usize>,
    max_object_bytes: Option<u64>,
    max_connections: Option<usize>,
}

impl Config {
    /// From the process arguments (and the TOML file they name).
    pub fn from_args() -> Result<Self> {
        Self::parse_from(std::env::args_os())
    }

    pub fn parse_from<I, T>(args: I) -> Result<Self>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let cli = Cli::try_parse_from(args).map_err(|e| anyhow::anyhow!("{e}"))?;
        let file = match &cli.config {
            Some(path) => load_file(path)?,
            None => FileConfig::default(),
        };
        let defaults = Limits::default();
        let config = Config {
            listen: cli.listen.or(file.listen).unwrap_or_else(|| "[::]:4433".parse().expect("valid")),
            http_listen: cli.http_listen.or(file.http_listen),
            content: cli.content.or(file.content).unwrap_or_else(|| PathBuf::from("content")),
            web: cli.web.or(file.web),
            cert: cli.cert.or(file.cert),
            key: cli.key.or(file.key),
            cert_names: if cli.cert_names.is_empty() { file.cert_names } else { cli.cert_names },
            public_host: cli.public_host.or(file.public_host),
            wt_path: cli.wt_path.or(file.wt_path).unwrap_or_else(|| "/holoquic".into()),
            allowed_origins: if cli.allowed_origins.is_empty() { file.allow_origin } else { cli.allowed_origins },
            cors: cli.cors || file.cors.unwrap_or(false),
            cc: cli.cc.or(file.cc).unwrap_or(CongestionControl::Bbr2),
            loss_tolerance: cli.loss_tolerance.or(file.loss_tolerance).unwrap_or(DEFAULT_LOSS_TOLERANCE),
            qlog_dir: cli.qlog_dir.or(file.qlog_dir),
            limits: Limits {
                max_connections: cli.max_connections.or(file.max_connections).unwrap_or(defaults.max_connections),
                max_requests_per_session: cli.max_requests_per_session.or(file.max_requests_per_session).unwrap_or(defaults.max_requests_per_session),
                max_object_bytes: cli.max_object_bytes.or(file.max_object_bytes).unwrap_or(defaults.max_object_bytes),
            },
        };
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<()> {
        if !self.wt_path.starts_with('/') {
            bail!("--wt-path must start with '/', got {:?}", self.wt_path);
        }
        if self.cert.is_some() != self.key.is_some() {
            bail!("--cert and --key go together");
        }
        if !(0.0..=0.5).contains(&self.loss_tolerance) {
            bail!("--loss-tolerance must be between 0 and 0.5, got {}", self.loss_tolerance);
        }
        if self.limits.max_requests_per_session == 0 || self.limits.max_connections == 0 {
            bail!("limits must be positive");
        }
        if !self.content.is_dir() {
            bail!("content directory {} does not exist", self.content.display());
        }
        if let Some(web) = &self.web {
            if !web.is_dir() {
                bail!("web app directory {} does not exist (build it with `npx vite build`)", web.display());
            }
        }
        Ok(())
    }
}

fn load_file(path: &Path) -> Result<FileConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempdir::Dir {
        tempdir::Dir::new()
    }

    /// A temporary directory removed on drop (std only; no extra crate).
    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Self {
                let p = std::env::temp_dir().join(format!("holoquic-cfg-{}-{}", std::process::id(), rand::random::<u64>()));
                std::fs::create_dir_all(&p).unwrap();
                Self(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn defaults_and_flags() {
        let d = dir();
        let c = Config::parse_from(["x", "--content", d.0.to_str().unwrap()]).unwrap();
        assert_eq!(c.listen, "[::]:4433".parse().unwrap());
        assert_eq!(c.wt_path, "/holoquic");
        assert_eq!(c.cc, CongestionControl::Bbr2);
        assert_eq!(c.loss_tolerance, DEFAULT_LOSS_TOLERANCE);
        assert_eq!(c.limits, Limits::default());
        let c = Config::parse_from(["x", "--content", d.0.to_str().unwrap(), "--cc", "cubic", "--allow-origin", "https://a", "--allow-origin", "https://b"])
            .unwrap();
        assert_eq!(c.cc, CongestionControl::Cubic);
        assert_eq!(c.allowed_origins, vec!["https://a", "https://b"]);
    }

    #[test]
    fn file_values_apply_and_flags_win() {
        let d = dir();
        let file = d.0.join("origin.toml");
        std::fs::write(&file, format!("listen = \"127.0.0.1:9000\"\ncontent = {:?}\ncc = \"cubic\"\nwt-path = \"/wt\"\n", d.0)).unwrap();
        let c = Config::parse_from(["x", "--config", file.to_str().unwrap(), "--wt-path", "/other"]).unwrap();
        assert_eq!(c.listen, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(c.cc, CongestionControl::Cubic);
        assert_eq!(c.wt_path, "/other");
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let d = dir();
        let content = d.0.to_str().unwrap();
        assert!(Config::parse_from(["x", "--content", "/does/not/exist"]).unwrap_err().to_string().contains("does not exist"));
        assert!(Config::parse_from(["x", "--content", content, "--wt-path", "nope"]).unwrap_err().to_string().contains("--wt-path"));
        assert!(Config::parse_from(["x", "--content", content, "--loss-tolerance", "0.9"]).unwrap_err().to_string().contains("--loss-tolerance"));
        assert!(Config::parse_from(["x", "--content", content, "--loss-tolerance", "NaN"]).is_err());
        let file = d.0.join("bad.toml");
        std::fs::write(&file, "unknown-key = 1\n").unwrap();
        assert!(Config::parse_from(["x", "--config", file.to_str().unwrap()]).is_err());
    }
}
