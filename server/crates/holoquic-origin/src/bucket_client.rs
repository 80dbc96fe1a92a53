//! How the origin and `holoquic-publish` reach an S3-compatible bucket: the `--s3-*` settings
//! (declared once here, flattened into both programs' command lines, so each has the same flag,
//! `HOLOQUIC_S3_*` variable and TOML key) and the client they build.
//!
//! The standard AWS variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, …) are read first, by `object_store`'s own
//! `from_env`; a `--s3-*` setting, from whichever source, wins over them.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::{BackoffConfig, ClientConfigKey, ClientOptions, RetryConfig};

/// Default of `--s3-revalidate`.
const DEFAULT_REVALIDATE: Duration = Duration::from_secs(1);
/// Default of `--s3-timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// The `--s3-*` flags as clap sees them (field name = TOML key; see `config.rs` for the rule).
#[derive(Debug, Clone, Default, Args)]
pub struct BucketArgs {
    /// S3 endpoint for `--content s3://…`, e.g. `https://s3.eu-west-1.amazonaws.com` or a MinIO, Ceph or SeaweedFS address [default: `AWS_ENDPOINT_URL`, else AWS's endpoint of the region].
    #[arg(long, value_name = "URL")]
    pub s3_endpoint: Option<String>,
    /// Region of the bucket [default: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else us-east-1].
    #[arg(long, value_name = "REGION")]
    pub s3_region: Option<String>,
    /// Access key id [default: `AWS_ACCESS_KEY_ID`; none: unsigned requests, for a public bucket].
    #[arg(long, value_name = "ID")]
    pub s3_access_key_id: Option<String>,
    /// Secret access key; give it by the variable or the TOML file, as a flag it shows in the process list [default: `AWS_SECRET_ACCESS_KEY`].
    #[arg(long, value_name = "SECRET")]
    pub s3_secret_access_key: Option<String>,
    /// Allow a plain `http://` endpoint (a store on the same host or a private network; `--s3-allow-http` alone means true) [default: false, or `AWS_ALLOW_HTTP`].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    pub s3_allow_http: Option<bool>,
    /// Seconds a cached object is served before the origin asks the store whether it changed (a conditional GET on its ETag); also how long a re-published manifest may take to reach players [default: 1].
    #[arg(long, value_name = "S")]
    pub s3_revalidate: Option<f64>,
    /// Seconds one request to the store may take; an uncached object then gets 504 (a cached one is served as it is) [default: 5].
    #[arg(long, value_name = "S")]
    pub s3_timeout: Option<f64>,
}

/// The checked `--s3-*` settings.
#[derive(Clone, PartialEq)]
pub struct BucketSettings {
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub allow_http: Option<bool>,
    pub revalidate: Duration,
    pub timeout: Duration,
}

impl Default for BucketSettings {
    fn default() -> Self {
        Self {
            endpoint: None,
            region: None,
            access_key_id: None,
            secret_access_key: None,
            allow_http: None,
            revalidate: DEFAULT_REVALIDATE,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Never prints the secret (a `Config` is logged in debug output).
impl std::fmt::Debug for BucketSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketSettings")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key.as_ref().map(|_| "<hidden>"))
            .field("allow_http", &self.allow_http)
            .field("revalidate", &self.revalidate)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl BucketArgs {
    pub fn settings(self) -> Result<BucketSettings> {
        let seconds = |flag: &str, value: Option<f64>, default: Duration, max: f64| match value {
            Some(s) if s.is_finite() && s >= 0.0 && s <= max => Ok(Duration::from_secs_f64(s)),
            Some(s) => bail!("--{flag} must be between 0 and {max} seconds, got {s}"),
            None => Ok(default),
        };
        let settings = BucketSettings {
            endpoint: self.s3_endpoint,
            region: self.s3_region,
            access_key_id: self.s3_access_key_id,
            secret_access_key: self.s3_secret_access_key,
            allow_http: self.s3_allow_http,
            revalidate: seconds("s3-revalidate", self.s3_revalidate, DEFAULT_REVALIDATE, 86_400.0)?,
            timeout: seconds("s3-timeout", self.s3_timeout, DEFAULT_TIMEOUT, 600.0)?,
        };
        if settings.timeout.is_zero() {
            bail!("--s3-timeout must be positive");
        }
        Ok(settings)
    }
}

impl BucketSettings {
    /// A client of `bucket`: the AWS variables, then these settings over them. Requests time out
    /// after `timeout` and are retried at most twice within it, so a store that is down costs a
    /// request milliseconds (refused) or `timeout` (silent), never minutes.
    pub fn client(&self, bucket: &str) -> Result<AmazonS3> {
        // reqwest's rustls takes the process's crypto provider: ring, as the origin's TLS.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let values = [
            (AmazonS3ConfigKey::Endpoint, &self.endpoint),
            (AmazonS3ConfigKey::Region, &self.region),
            (AmazonS3ConfigKey::AccessKeyId, &self.access_key_id),
            (AmazonS3ConfigKey::SecretAccessKey, &self.secret_access_key),
        ];
        for (key, value) in values {
            if let Some(value) = value {
                builder = builder.with_config(key, value);
            }
        }
        if builder.get_config_value(&AmazonS3ConfigKey::AccessKeyId).is_none() {
            builder = builder.with_skip_signature(true);
        }
        let allow_http = match self.allow_http {
            Some(allow) => allow,
            None => builder.get_config_value(&AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp)).is_some_and(|v| v.eq_ignore_ascii_case("true")),
        };
        if let Some(endpoint) = builder.get_config_value(&AmazonS3ConfigKey::Endpoint) {
            if endpoint.starts_with("http://") && !allow_http {
                bail!("the S3 endpoint {endpoint} is plain http: allow it with --s3-allow-http (only for a store on this host or a private network)");
            }
        }
        let connect = self.timeout.min(Duration::from_secs(2));
        let options = ClientOptions::new().with_allow_http(allow_http).with_timeout(self.timeout).with_connect_timeout(connect);
        let retry = RetryConfig {
            backoff: BackoffConfig { init_backoff: Duration::from_millis(50), max_backoff: Duration::from_millis(500), base: 2.0 },
            max_retries: 2,
            retry_timeout: self.timeout,
        };
        builder.with_client_options(options).with_retry(retry).build().with_context(|| format!("the S3 client of bucket {bucket}"))
    }
}

/// `prefix` and `relative` (a checked relative path) joined as an object key.
pub fn object_key(prefix: &str, relative: &str) -> object_store::path::Path {
    let joined = if prefix.is_empty() { relative.to_owned() } else { format!("{prefix}/{relative}") };
    object_store::path::Path::from(joined)
}
