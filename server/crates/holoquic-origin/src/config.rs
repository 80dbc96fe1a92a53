//! Origin configuration, from three sources under one naming rule: the flag `--wt-path`, the
//! environment variable `HOLOQUIC_WT_PATH` and the TOML key `wt_path` (in the file `--config`
//! names) set the same thing. A flag wins over its variable, the variable over the file, the file
//! over the built-in default.
//!
//! The rule is applied, not repeated: each setting is declared once, as a field of [`Cli`]; its
//! variable is derived from the field's name by [`command`], and the file's values become the
//! flags' defaults before the command line is parsed, so clap checks every value the same way
//! whatever its source, and a new flag gets its variable and its key without anyone writing them.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, ValueEnum};

use crate::bucket_client::{BucketArgs, BucketSettings};
use crate::content::ContentSource;

/// Prefix of every setting's environment variable.
pub const ENV_PREFIX: &str = "HOLOQUIC_";

/// Congestion control of QUIC connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
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

/// How access-log lines are written (see `access_log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccessLogFormat {
    /// `key=value` fields after a timestamp, for people.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
    /// No access log.
    Off,
}

/// Default of `--drain-grace`: long enough for the objects in flight (a second or two of content)
/// to finish, short enough for a supervisor's stop timeout (systemd waits 90 s).
pub const DEFAULT_DRAIN_GRACE: Duration = Duration::from_secs(10);

/// Default of `--loss-tolerance`, chosen by measurement (docs/benchmarks.md → "Origin").
pub const DEFAULT_LOSS_TOLERANCE: f32 = 0.5;

/// Default of `--initial-rtt-ms`: quiche's and RFC 9002's 333 ms, the round trip a QUIC
/// connection's loss timers start from until its first sample.
pub const DEFAULT_INITIAL_RTT: Duration = Duration::from_millis(333);

/// Resource limits (docs/protocol.md §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub max_requests_per_session: usize,
    pub max_object_bytes: u64,
    /// QUIC connections from one address (an IPv6 /64 counts as one).
    pub max_connections_per_ip: usize,
    /// QUIC handshakes in progress from one address.
    pub max_handshakes_per_ip: usize,
    /// Object reads and encoder builds waiting for a loader worker; beyond, requests get 503.
    pub max_queued_loads: usize,
    /// Loader jobs (reads, builds, HTTP/3 answers) one connection may have queued or running;
    /// beyond, its requests get 503.
    pub max_queued_loads_per_connection: usize,
    /// Object bytes all requests may hold at once; beyond, requests get 503.
    pub max_held_bytes: u64,
    /// Object bytes the requests of one connection may hold at once; beyond, they get 503.
    pub max_held_bytes_per_connection: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_requests_per_session: 256,
            max_object_bytes: 64 << 20,
            max_connections_per_ip: 64,
            max_handshakes_per_ip: 16,
            max_queued_loads: 256,
            max_queued_loads_per_connection: 64,
            max_held_bytes: 1 << 30,
            max_held_bytes_per_connection: 128 << 20,
        }
    }
}

/// Bounds of the TCP listeners (HTTPS, and the plain one where they apply): docs/origin.md,
/// "What it refuses".
#[derive(Debug, Clone, PartialEq)]
pub struct HttpsLimits {
    /// Concurrent connections per listener, TLS handshakes included; beyond it a new connection
    /// is closed at once.
    pub max_connections: usize,
    /// A TLS handshake unfinished after this is dropped.
    pub handshake_timeout: Duration,
    /// HTTP/1.1: a request head must arrive within this (also between requests).
    pub header_timeout: Duration,
    /// A connection with no request in flight for this long is closed.
    pub idle_timeout: Duration,
    /// HTTP/2: a PING after this long without a frame from the peer...
    pub keepalive_interval: Duration,
    /// ...which must be answered within this, or the connection is closed.
    pub keepalive_timeout: Duration,
    /// HTTP/2: concurrent streams per connection.
    pub max_streams: u32,
    /// The kernel's congestion control for accepted connections (`TCP_CONGESTION`); empty: the
    /// system's default. A name the kernel does not offer leaves the default, with a warning.
    pub tcp_congestion: String,
    /// Linear retransmission timeouts while a connection has few packets in flight
    /// (`TCP_THIN_LINEAR_TIMEOUTS`).
    pub tcp_thin_timeouts: bool,
    /// The smallest retransmission timeout (`TCP_RTO_MIN_US`, Linux 6.15+); None: the kernel's (200 ms).
    pub tcp_rto_min: Option<Duration>,
}

impl Default for HttpsLimits {
    fn default() -> Self {
        Self {
            max_connections: 2048,
            handshake_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            keepalive_interval: Duration::from_secs(20),
            keepalive_timeout: Duration::from_secs(20),
            max_streams: 256,
            tcp_congestion: "bbr".into(),
            tcp_thin_timeouts: true,
            tcp_rto_min: None,
        }
    }
}

/// Another origin's WebTransport endpoint, listed in `/config.json` for players to fail over to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WtEndpoint {
    /// The session URL (`https://host:port/path`).
    pub url: String,
    /// SHA-256 hashes of its certificate to publish; empty = publish this origin's own (the
    /// origins share their certificate: with a PKI one there is nothing to pin).
    pub pins: Vec<[u8; 32]>,
}

impl WtEndpoint {
    /// `URL` or `URL sha-256=HEX …` (the `--wt-endpoint` value).
    pub fn parse(value: &str) -> Result<Self> {
        let mut words = value.split_whitespace();
        let url = words.next().ok_or_else(|| anyhow!("--wt-endpoint is empty"))?;
        let rest = url.strip_prefix("https://").ok_or_else(|| anyhow!("--wt-endpoint {url:?} is not an https:// URL"))?;
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') || url.contains('#') {
            bail!("--wt-endpoint {url:?} needs a host and no user or fragment");
        }
        let pins = words
            .map(|word| {
                let hex = word.strip_prefix("sha-256=").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
                let hex = hex.ok_or_else(|| anyhow!("--wt-endpoint {url:?}: {word:?} is not sha-256=<64 hex digits>"))?;
                let mut hash = [0u8; 32];
                for (i, byte) in hash.iter_mut().enumerate() {
                    *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("checked hex");
                }
                Ok(hash)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { url: url.to_owned(), pins })
    }
}

/// Everything the origin needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// UDP (QUIC) and TCP (HTTPS) on the same address and port.
    pub listen: SocketAddr,
    /// Optional plain HTTP/1.1 listener for local use (`http://127.0.0.1` is a secure context).
    pub http_listen: Option<SocketAddr>,
    /// Optional listener for operators: `/metrics` and `/healthz`, off the public port.
    pub admin_listen: Option<SocketAddr>,
    /// Where the content served under `/content/` is: a directory or a bucket.
    pub content: ContentSource,
    /// How to reach the bucket (`--s3-*`), when the content is in one.
    pub bucket: BucketSettings,
    /// Built web app served at `/`.
    pub web: Option<PathBuf>,
    /// PKI certificate chain and key (PEM); without them a short-lived certificate is generated.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// Extra DNS names / IP addresses for the generated certificate.
    pub cert_names: Vec<String>,
    /// Directory of generated certificates shared with other origins.
    pub cert_dir: Option<PathBuf>,
    /// Host (and port) written into `/config.json`; default: the request's Host header.
    pub public_host: Option<String>,
    pub wt_path: String,
    /// Further WebTransport endpoints `/config.json` lists after this origin's own (failover).
    pub wt_endpoints: Vec<WtEndpoint>,
    /// Origins allowed to open WebTransport sessions; empty = any.
    pub allowed_origins: Vec<String>,
    pub cors: bool,
    /// COOP/COEP on every response: the web app is cross-origin isolated (threaded decoder).
    pub cross_origin_isolate: bool,
    pub cc: CongestionControl,
    /// Loss rate per round trip that BBR2 takes for random (non-congestive) loss, which FEC
    /// covers, rather than a congestion signal (see `quic::congestion`); 0 = quiche's defaults.
    pub loss_tolerance: f32,
    /// The round trip QUIC loss recovery assumes before the first sample: how soon a lost
    /// handshake flight is sent again (a probe timeout is about three of it).
    pub initial_rtt: Duration,
    pub qlog_dir: Option<PathBuf>,
    /// Access log: None = stderr.
    pub access_log: Option<PathBuf>,
    pub access_log_format: AccessLogFormat,
    pub limits: Limits,
    pub https: HttpsLimits,
    /// How long a drain (SIGTERM, SIGINT) may take before every connection is closed anyway.
    pub drain_grace: Duration,
}

/// The settings as clap sees them. Field name = TOML key; `--` + the name with `-` for `_` =
/// flag; [`ENV_PREFIX`] + the name in capitals = variable. Every field is optional here: the
/// built-in defaults are applied in [`Config::parse_from`], after the file's values, and are
/// written in each doc comment for `--help` and docs/origin.md.
#[derive(Debug, Parser)]
#[command(name = "holoquic-origin", version, about = "holoquic origin: WebTransport over HTTP/3 (quiche) and HTTPS (HTTP/2) for volumetric video objects")]
struct Cli {
    /// TOML file with any of these settings, keyed by the flag name with `_` for `-` (e.g. `wt_path = "/holoquic"`); flags and variables win over it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP (HTTP/3 + WebTransport) and TCP (HTTPS) address [default: [::]:4433].
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Plain HTTP/1.1 listener for local use only, e.g. `127.0.0.1:8080`.
    #[arg(long, value_name = "ADDR")]
    http_listen: Option<SocketAddr>,
    /// Listener for operators serving `/metrics` (Prometheus text) and `/healthz` over plain HTTP, e.g. `127.0.0.1:9090`; off by default, and `/metrics` is served nowhere else.
    #[arg(long, value_name = "ADDR")]
    admin_listen: Option<SocketAddr>,
    /// Content served under `/content/`: a directory, which must exist, or `s3://BUCKET/PREFIX` in S3-compatible object storage (reached with the `--s3-*` settings) [default: content].
    #[arg(long, value_name = "DIR|URL", value_parser = ContentSource::parse)]
    content: Option<ContentSource>,
    /// Built web app served at `/` (e.g. `dist`); must exist when given.
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// PKI certificate chain (PEM), with `--key`; without both a certificate is generated.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// PKI private key (PEM), with `--cert`.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// Extra DNS name or IP address of the generated certificate, besides `localhost`, `127.0.0.1` and `::1` (repeatable; comma-separated in the variable).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    cert_name: Vec<String>,
    /// Directory where generated certificates are kept and shared with other origins using the same directory (e.g. on a network file system), so all serve and publish the same hashes across rotation; made with mode 0700 if missing, must be this user's with mode 0700; not with `--cert` [default: none, each origin generates its own].
    #[arg(long, value_name = "DIR", conflicts_with = "cert")]
    cert_dir: Option<PathBuf>,
    /// Host (and port) of `webtransportUrl` in `/config.json` (behind NAT or a proxy) [default: the host the page used, with the QUIC port].
    #[arg(long, value_name = "HOST[:PORT]")]
    public_host: Option<String>,
    /// WebTransport session path; starts with `/` [default: /holoquic].
    #[arg(long, value_name = "PATH")]
    wt_path: Option<String>,
    /// Another origin's WebTransport session URL that `/config.json` lists after this origin's own, for players to fail over to; `URL sha-256=HEX` pins its certificate, a bare `URL` gets this origin's hashes (the origins share a certificate; none with a PKI one) (repeatable; comma-separated in the variable) [default: none, and `/config.json` as without it].
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    wt_endpoint: Vec<String>,
    /// Page origin allowed to open WebTransport sessions; others get 403 (repeatable; comma-separated in the variable) [default: any].
    #[arg(long, value_name = "ORIGIN", value_delimiter = ',')]
    allow_origin: Vec<String>,
    /// Send `Access-Control-Allow-Origin: *` on content and config, for pages on other origins (`--cors` alone means true) [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    cors: Option<bool>,
    /// Send `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp` with every response, so the web app served here is cross-origin isolated and its player uses the threaded wasm decoder (`--cross-origin-isolate` alone means true) [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    cross_origin_isolate: Option<bool>,
    /// Congestion control of QUIC connections [default: bbr2].
    #[arg(long, value_enum, value_name = "cubic|bbr2")]
    cc: Option<CongestionControl>,
    /// Loss per round trip BBR2 takes as random loss (which FEC covers) rather than congestion; 0 … 0.5, 0 = quiche's own behaviour [default: 0.5].
    #[arg(long, value_name = "X")]
    loss_tolerance: Option<f32>,
    /// Round trip (ms) QUIC loss recovery assumes until it has measured one: a lost handshake flight is sent again after about three of it; 10 … 1000 [default: 333].
    #[arg(long, value_name = "MS")]
    initial_rtt_ms: Option<u64>,
    /// Write one qlog per QUIC connection (`<trace id>.sqlog`) into this directory, for debugging.
    #[arg(long, value_name = "DIR")]
    qlog_dir: Option<PathBuf>,
    /// Append the access log (one line per HTTPS and per object request) to this file [default: stderr].
    #[arg(long, value_name = "FILE")]
    access_log: Option<PathBuf>,
    /// Access-log lines as `text` (key=value), `json` (one object per line) or `off` [default: text].
    #[arg(long, value_enum, value_name = "text|json|off")]
    access_log_format: Option<AccessLogFormat>,
    /// Concurrent QUIC connections; further ones are not accepted [default: 1024].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Concurrent requests per WebTransport session; more get 429 [default: 256].
    #[arg(long, value_name = "N")]
    max_requests_per_session: Option<usize>,
    /// Largest object served, in bytes; larger ones get 413 [default: 67108864].
    #[arg(long, value_name = "N")]
    max_object_bytes: Option<u64>,
    /// Concurrent TCP connections per listener (HTTPS, plain), TLS handshakes included; more are reset at once [default: 2048].
    #[arg(long, value_name = "N")]
    https_max_connections: Option<usize>,
    /// Seconds a TLS handshake may take [default: 10].
    #[arg(long, value_name = "S")]
    https_handshake_timeout: Option<f64>,
    /// Seconds an HTTP/1.1 request head may take to arrive, also between two requests [default: 10].
    #[arg(long, value_name = "S")]
    https_header_timeout: Option<f64>,
    /// Seconds a connection may stay with no request in flight (HTTP/2 gets a GOAWAY) [default: 60].
    #[arg(long, value_name = "S")]
    https_idle_timeout: Option<f64>,
    /// Seconds of HTTP/2 silence after which the origin sends a PING [default: 20].
    #[arg(long, value_name = "S")]
    https_keepalive_interval: Option<f64>,
    /// Seconds the PING's answer may take before the connection is closed [default: 20].
    #[arg(long, value_name = "S")]
    https_keepalive_timeout: Option<f64>,
    /// Concurrent HTTP/2 streams per connection [default: 256].
    #[arg(long, value_name = "N")]
    https_max_streams: Option<u32>,
    /// TCP congestion control of HTTPS connections, as the kernel names it (`bbr`, `cubic`, …; empty: the system's default); one the kernel does not offer leaves its default [default: bbr].
    #[arg(long, value_name = "NAME")]
    https_tcp_congestion: Option<String>,
    /// Retransmit after one timeout each time, not a doubling one, while an HTTPS connection has under four packets in flight (its first six timeouts; `TCP_THIN_LINEAR_TIMEOUTS`) [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    https_tcp_thin_timeouts: Option<bool>,
    /// Seconds of the smallest TCP retransmission timeout of HTTPS connections (Linux 6.15+; older kernels keep theirs, with a warning); 0: the kernel's, 200 ms [default: 0].
    #[arg(long, value_name = "S")]
    https_tcp_rto_min: Option<f64>,
    /// Concurrent QUIC connections from one IP address (IPv6: one /64); further ones are not
    /// accepted [default: 64].
    #[arg(long, value_name = "N")]
    max_connections_per_ip: Option<usize>,
    /// QUIC handshakes in progress from one IP address (IPv6: one /64) [default: 16].
    #[arg(long, value_name = "N")]
    max_handshakes_per_ip: Option<usize>,
    /// Object reads (and, apart, encoder builds) waiting for a worker; more get 503 [default: 256].
    #[arg(long, value_name = "N")]
    max_queued_loads: Option<usize>,
    /// Object reads, encoder builds and HTTP/3 file answers one QUIC connection may have waiting for or running on a worker; more get 503, so one connection cannot fill the queue [default: 64].
    #[arg(long, value_name = "N")]
    max_queued_loads_per_connection: Option<usize>,
    /// Object bytes all requests may hold at once; more get 503 [default: 1073741824].
    #[arg(long, value_name = "N")]
    max_held_bytes: Option<u64>,
    /// Object bytes one connection's requests may hold at once; more get 503 [default: 134217728].
    #[arg(long, value_name = "N")]
    max_held_bytes_per_connection: Option<u64>,
    /// Seconds a graceful stop (SIGTERM, SIGINT) may take: in-flight objects finish, then sessions and connections close; a second signal stops at once [default: 10].
    #[arg(long, value_name = "S")]
    drain_grace: Option<f64>,
    #[command(flatten)]
    bucket: BucketArgs,
}

/// The command line definition with every setting's environment variable attached.
pub fn command() -> clap::Command {
    Cli::command().mut_args(|arg| {
        let variable = env_variable(arg.get_id().as_str());
        arg.env(variable)
    })
}

/// `wt_path` → `HOLOQUIC_WT_PATH`.
pub fn env_variable(id: &str) -> String {
    format!("{ENV_PREFIX}{}", id.to_ascii_uppercase())
}

impl Config {
    /// From the process arguments and environment (and the TOML file they name). `--help` and
    /// `--version` print and exit here.
    pub fn from_args() -> Result<Self> {
        Self::parse_from(std::env::args_os()).map_err(|e| match e.downcast::<clap::Error>() {
            Ok(clap_error) => clap_error.exit(),
            Err(other) => other,
        })
    }

    /// From `args` (the program name first), the environment and the TOML file they name.
    pub fn parse_from<I, T>(args: I) -> Result<Self>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
        // First pass: only to learn which file to read (`--config` or HOLOQUIC_CONFIG).
        let first = command().try_get_matches_from(&args)?;
        let mut cmd = command();
        if let Some(file) = first.get_one::<PathBuf>("config") {
            cmd = with_file_defaults(cmd, file, false)?;
        }
        let matches = cmd.try_get_matches_from(&args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        let defaults = Limits::default();
        let https = HttpsLimits::default();
        let seconds = |flag: &str, value: Option<f64>, default: Duration| match value {
            Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
            Some(s) => bail!("--{flag} must be between 0 and 86400 seconds, got {s}"),
            None => Ok(default),
        };
        let config = Config {
            listen: cli.listen.unwrap_or_else(|| "[::]:4433".parse().expect("valid")),
            http_listen: cli.http_listen,
            admin_listen: cli.admin_listen,
            content: cli.content.unwrap_or_else(|| ContentSource::Directory(PathBuf::from("content"))),
            bucket: cli.bucket.settings()?,
            web: cli.web,
            cert: cli.cert,
            key: cli.key,
            cert_names: cli.cert_name,
            cert_dir: cli.cert_dir,
            public_host: cli.public_host,
            wt_path: cli.wt_path.unwrap_or_else(|| "/holoquic".into()),
            wt_endpoints: cli.wt_endpoint.iter().map(|v| WtEndpoint::parse(v)).collect::<Result<_>>()?,
            allowed_origins: cli.allow_origin,
            cors: cli.cors.unwrap_or(false),
            cross_origin_isolate: cli.cross_origin_isolate.unwrap_or(false),
            cc: cli.cc.unwrap_or(CongestionControl::Bbr2),
            loss_tolerance: cli.loss_tolerance.unwrap_or(DEFAULT_LOSS_TOLERANCE),
            initial_rtt: match cli.initial_rtt_ms {
                None => DEFAULT_INITIAL_RTT,
                Some(ms) if (10..=1000).contains(&ms) => Duration::from_millis(ms),
                Some(ms) => bail!("--initial-rtt-ms must be between 10 and 1000, got {ms}"),
            },
            qlog_dir: cli.qlog_dir,
            access_log: cli.access_log,
            access_log_format: cli.access_log_format.unwrap_or(AccessLogFormat::Text),
            limits: Limits {
                max_connections: cli.max_connections.unwrap_or(defaults.max_connections),
                max_requests_per_session: cli.max_requests_per_session.unwrap_or(defaults.max_requests_per_session),
                max_object_bytes: cli.max_object_bytes.unwrap_or(defaults.max_object_bytes),
                max_connections_per_ip: cli.max_connections_per_ip.unwrap_or(defaults.max_connections_per_ip),
                max_handshakes_per_ip: cli.max_handshakes_per_ip.unwrap_or(defaults.max_handshakes_per_ip),
                max_queued_loads: cli.max_queued_loads.unwrap_or(defaults.max_queued_loads),
                max_queued_loads_per_connection: cli.max_queued_loads_per_connection.unwrap_or(defaults.max_queued_loads_per_connection),
                max_held_bytes: cli.max_held_bytes.unwrap_or(defaults.max_held_bytes),
                max_held_bytes_per_connection: cli.max_held_bytes_per_connection.unwrap_or(defaults.max_held_bytes_per_connection),
            },
            https: HttpsLimits {
                max_connections: cli.https_max_connections.unwrap_or(https.max_connections),
                handshake_timeout: seconds("https-handshake-timeout", cli.https_handshake_timeout, https.handshake_timeout)?,
                header_timeout: seconds("https-header-timeout", cli.https_header_timeout, https.header_timeout)?,
                idle_timeout: seconds("https-idle-timeout", cli.https_idle_timeout, https.idle_timeout)?,
                keepalive_interval: seconds("https-keepalive-interval", cli.https_keepalive_interval, https.keepalive_interval)?,
                keepalive_timeout: seconds("https-keepalive-timeout", cli.https_keepalive_timeout, https.keepalive_timeout)?,
                max_streams: cli.https_max_streams.unwrap_or(https.max_streams),
                tcp_congestion: cli.https_tcp_congestion.unwrap_or(https.tcp_congestion),
                tcp_thin_timeouts: cli.https_tcp_thin_timeouts.unwrap_or(https.tcp_thin_timeouts),
                tcp_rto_min: match cli.https_tcp_rto_min {
                    None => https.tcp_rto_min,
                    Some(0.0) => None,
                    Some(s) if (0.001..=1.0).contains(&s) => Some(Duration::from_secs_f64(s)),
                    Some(s) => bail!("--https-tcp-rto-min must be 0 or between 0.001 and 1 s, got {s}"),
                },
            },
            drain_grace: seconds("drain-grace", cli.drain_grace, DEFAULT_DRAIN_GRACE)?,
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
        if self.limits.max_requests_per_session == 0 || self.limits.max_connections == 0 || self.https.max_connections == 0 || self.https.max_streams == 0 {
            bail!("limits must be positive");
        }
        let l = &self.limits;
        if l.max_connections_per_ip == 0
            || l.max_handshakes_per_ip == 0
            || l.max_queued_loads == 0
            || l.max_queued_loads_per_connection == 0
            || l.max_held_bytes == 0
            || l.max_held_bytes_per_connection == 0
        {
            bail!(
                "--max-connections-per-ip, --max-handshakes-per-ip, --max-queued-loads, --max-queued-loads-per-connection, --max-held-bytes and --max-held-bytes-per-connection must be positive"
            );
        }
        if let ContentSource::Directory(dir) = &self.content {
            if !dir.is_dir() {
                bail!("content directory {} does not exist", dir.display());
            }
        }
        if let Some(web) = &self.web {
            if !web.is_dir() {
                bail!("web app directory {} does not exist (build it with `npx vite build`)", web.display());
            }
        }
        Ok(())
    }
}

/// `cmd` with the values of the TOML file `path` as its flags' defaults: below the command line
/// and the environment, which clap applies first. A key that is none of `cmd`'s flags is an
/// error, or skipped with `skip_other_keys` (`holoquic-publish` reads the origin's file for its
/// `s3_*` keys).
pub fn with_file_defaults(mut cmd: clap::Command, path: &Path, skip_other_keys: bool) -> Result<clap::Command> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Table = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    for (key, value) in table {
        let Some(arg) = cmd.get_arguments().find(|a| a.get_id() == key.as_str() && key != "config") else {
            if skip_other_keys {
                continue;
            }
            bail!("{}: unknown key `{key}` (keys are the long flag names with `_` for `-`, e.g. `wt_path`)", path.display());
        };
        let repeatable = matches!(arg.get_action(), ArgAction::Append);
        let values = match value {
            toml::Value::Array(items) if repeatable => items.into_iter().map(|v| scalar(&key, v)).collect::<Result<Vec<_>>>()?,
            toml::Value::Array(_) => bail!("{}: `{key}` takes one value, not an array", path.display()),
            single => vec![scalar(&key, single)?],
        };
        cmd = cmd.mut_arg(key, |a| a.default_values(values));
    }
    Ok(cmd)
}

/// A TOML value as the text clap parses.
fn scalar(key: &str, value: toml::Value) -> Result<String> {
    match value {
        toml::Value::String(s) => Ok(s),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(anyhow!("`{key}` must be a string, number or boolean, got {}", other.type_str())),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
