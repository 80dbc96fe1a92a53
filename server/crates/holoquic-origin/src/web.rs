//! The origin's HTTP semantics, one definition for every transport: which path answers what (the
//! content, the web app, `/config.json`, `/cert-hash`, `/healthz`), byte ranges, caching, CORS
//! and security headers, and the status of everything refused. HTTPS (`https.rs`, on hyper) and
//! HTTP/3 (`quic/http3.rs`, on quiche) each turn their request into a [`WebRequest`] and frame the
//! [`WebResponse`] in their own way, so the two answer a request alike byte for byte.

use bytes::Bytes;

use crate::config::Config;
use crate::content::{content_type, ContentError, ContentStore, CONTENT_PREFIX};
use crate::filecache::Version;
use crate::tls::{hex, CertStore};
use crate::webfiles::WebFiles;

/// What a request is answered from.
pub struct Site<'a> {
    pub config: &'a Config,
    pub certs: &'a CertStore,
    pub content: &'a ContentStore,
    /// The built web app (`--web`); None when the origin serves content only.
    pub web: Option<&'a WebFiles>,
    /// The UDP port QUIC listens on: named by Alt-Svc and by `/config.json`.
    pub quic_port: u16,
}

/// The parts of a request the answer depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebRequest<'a> {
    pub method: &'a str,
    /// The request target (`:path`); a query (`?…`) is ignored.
    pub target: &'a str,
    /// The authority the client addressed (`:authority`, or HTTP/1.1's Host header).
    pub authority: Option<&'a str>,
    /// The `Range` header.
    pub range: Option<&'a str>,
    /// The `If-None-Match` header: a 304 when it names the file's current version.
    pub if_none_match: Option<&'a str>,
    /// Whether the answer advertises HTTP/3 (`Alt-Svc`): true over TLS on TCP, where a browser
    /// may switch to QUIC for its next requests.
    pub alt_svc: bool,
}

/// A complete answer: status, header fields (lower-case names, `content-length` included) and
/// the body (empty for HEAD, whose `content-length` still tells the length a GET would get).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResponse {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

impl WebResponse {
    fn new(status: u16, media_type: &str, body: Bytes) -> Self {
        Self { status, headers: vec![("content-type", media_type.to_owned())], body }
    }

    fn text(status: u16, body: &str) -> Self {
        Self::new(status, "text/plain; charset=utf-8", Bytes::from(body.to_owned()))
    }

    fn json(value: serde_json::Value) -> Self {
        Self::new(200, "application/json", Bytes::from(value.to_string())).with("cache-control", "no-store")
    }

    fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The value of header `name`, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// Answers one request. Never panics on any input.
pub fn respond(site: &Site, request: &WebRequest) -> WebResponse {
    let cors = site.config.cors;
    let mut response = match request.method {
        "OPTIONS" if cors => WebResponse::text(204, "")
            .with("access-control-allow-methods", "GET, HEAD, OPTIONS")
            .with("access-control-allow-headers", "range")
            .with("access-control-max-age", "86400"),
        "GET" | "HEAD" => route(site, request),
        _ => WebResponse::text(405, "only GET and HEAD\n").with("allow", "GET, HEAD"),
    };
    if cors {
        response = response.with("access-control-allow-origin", "*").with("access-control-expose-headers", "content-length, content-range");
    }
    if request.alt_svc {
        response = response.with("alt-svc", format!("h3=\":{}\"; ma=86400", site.quic_port));
    }
    response = response.with("x-content-type-options", "nosniff");
    // Cross-origin isolation of the app (SharedArrayBuffer, so wasm threads): the page and its
    // workers take the policies from their own responses; on other responses they do nothing.
    if site.config.cross_origin_isolate {
        response = response.with("cross-origin-opener-policy", "same-origin").with("cross-origin-embedder-policy", "require-corp");
    }
    // RFC 9110 §8.6: never on a 204, nor on a 304 (where it would give the length of the
    // representation the client already holds, which an empty body is not).
    if response.status != 204 && response.status != 304 {
        let length = response.body.len().to_string();
        response = response.with("content-length", length);
    }
    if request.method == "HEAD" {
        response.body = Bytes::new();
    }
    response
}

fn route(site: &Site, request: &WebRequest) -> WebResponse {
    let path = request.target.split_once('?').map_or(request.target, |(path, _)| path);
    match path {
        "/healthz" => WebResponse::text(200, "ok\n"),
        "/cert-hash" => match site.certs.published_hashes().first() {
            Some((hash, not_after)) => WebResponse::json(serde_json::json!({
                "algorithm": "sha-256", "value": hex(hash), "notAfter": rfc3339(*not_after),
            })),
            None => WebResponse::text(404, "the origin uses a PKI certificate: no hash to pin\n"),
        },
        "/config.json" => origin_config(site, request),
        // A manifest changes when its scene is re-packed: revalidated on every use (a 304 by
        // ETag is cheap). Segments keep their bytes for as long as their name.
        p if p.starts_with(CONTENT_PREFIX) => match site.content.get_with_meta(p) {
            Ok(file) => {
                let cache = if p.ends_with(".mpd") { "no-cache" } else { "public, max-age=3600" };
                versioned(request, &file.version, || with_range(request, file.bytes.clone(), content_type(p), cache))
            }
            Err(e) => content_error(e),
        },
        p => serve_web(site, request, p),
    }
}

/// `/config.json`: where the WebTransport session is and which certificate hashes to pin.
fn origin_config(site: &Site, request: &WebRequest) -> WebResponse {
    let host = match &site.config.public_host {
        Some(public) => public.clone(),
        None => {
            // The session URL names the host the page reached us by, which goes into the
            // answer: it must be a valid one.
            let asked = match request.authority {
                Some(authority) => match host_of(authority) {
                    Some(host) => Some(host),
                    None => return WebResponse::text(400, "malformed Host header\n"),
                },
                None => None,
            };
            format!("{}:{}", asked.as_deref().unwrap_or("localhost"), site.quic_port)
        }
    };
    let own: Vec<[u8; 32]> = site.certs.published_hashes().iter().map(|(h, _)| *h).collect();
    let url = format!("https://{}{}", host, site.config.wt_path);
    let mut answer = serde_json::json!({
        "webtransportUrl": url,
        "certificateHashes": pins_json(&own),
        "contentBase": CONTENT_PREFIX,
    });
    // Failover: this origin's endpoint first, then the others, each with the hashes to pin. An
    // endpoint without its own pins shares this origin's certificate (docs/origin.md → "Several
    // origins"). Without `--wt-endpoint` the answer is as it always was.
    if !site.config.wt_endpoints.is_empty() {
        let mut endpoints = vec![serde_json::json!({ "url": url, "certificateHashes": pins_json(&own) })];
        for other in &site.config.wt_endpoints {
            let pins = if other.pins.is_empty() { &own } else { &other.pins };
            endpoints.push(serde_json::json!({ "url": other.url, "certificateHashes": pins_json(pins) }));
        }
        answer["webtransportEndpoints"] = serde_json::Value::Array(endpoints);
    }
    WebResponse::json(answer)
}

/// Certificate hashes as `/config.json` writes them (the `serverCertificateHashes` of WebTransport).
fn pins_json(hashes: &[[u8; 32]]) -> Vec<serde_json::Value> {
    hashes.iter().map(|h| serde_json::json!({ "algorithm": "sha-256", "value": hex(h) })).collect()
}

fn serve_web(site: &Site, request: &WebRequest, path: &str) -> WebResponse {
    let Some(web) = site.web else {
        return WebResponse::text(404, "not found (no web app configured: --web)\n");
    };
    match web.get(path) {
        Ok(file) => versioned(request, &file.version, || with_range(request, file.bytes.clone(), file.media_type, file.cache_control)),
        Err(e) => content_error(e),
    }
}

/// The answer for one version of a file: 304 when the request's `If-None-Match` names it, else
/// `respond()`; either way with its `ETag` and `Last-Modified`.
fn versioned(request: &WebRequest, version: &Version, respond: impl FnOnce() -> WebResponse) -> WebResponse {
    let etag = version.etag();
    let named = request.if_none_match.is_some_and(|v| v.trim() == "*" || v.split(',').any(|tag| tag.trim().trim_start_matches("W/") == etag));
    let response = if named { WebResponse { status: 304, headers: Vec::new(), body: Bytes::new() } } else { respond() };
    response.with("etag", etag).with("last-modified", httpdate(version.modified()))
}

fn content_error(e: ContentError) -> WebResponse {
    match &e {
        ContentError::NotFound => WebResponse::text(404, "no such object\n"),
        ContentError::BadPath => WebResponse::text(400, "invalid object path\n"),
        ContentError::TooLarge { .. } => WebResponse::text(413, &format!("{e}\n")),
        ContentError::Io(err) => {
            tracing::warn!("content read failed: {err}");
            WebResponse::text(500, "could not read the object\n")
        }
        // The object store is down or slow: the client may try again (the player does).
        ContentError::Upstream { timed_out, .. } => {
            tracing::warn!("content read failed: {e}");
            WebResponse::text(e.status(), &format!("{}\n", ContentError::upstream_reason_for_client(*timed_out))).with("retry-after", "1")
        }
    }
}

/// The whole representation (200), or 206 for a single satisfiable `Range: bytes=a-b`, or 416.
fn with_range(request: &WebRequest, bytes: Bytes, media_type: &'static str, cache: &'static str) -> WebResponse {
    let total = bytes.len() as u64;
    let response = match request.range.map_or(RangeRequest::Whole, |v| parse_range(v, total)) {
        RangeRequest::Whole => WebResponse::new(200, media_type, bytes),
        RangeRequest::Part(start, end) => {
            WebResponse::new(206, media_type, bytes.slice(start as usize..=end as usize)).with("content-range", format!("bytes {start}-{end}/{total}"))
        }
        RangeRequest::Unsatisfiable => return WebResponse::text(416, "range not satisfiable\n").with("content-range", format!("bytes */{total}")),
    };
    response.with("accept-ranges", "bytes").with("cache-control", cache)
}

/// What a `Range` header asks of a representation `total` bytes long.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// Send it all (200): a unit other than bytes, which RFC 9110 §14.2 says to ignore, or several
    /// ranges, which a server may answer whole rather than as multipart/byteranges.
    Whole,
    /// Inclusive byte positions (206).
    Part(u64, u64),
    /// A malformed or unsatisfiable byte range (416).
    Unsatisfiable,
}

/// Reads `bytes=a-b`, `bytes=a-`, `bytes=-n`.
pub fn parse_range(value: &str, total: u64) -> RangeRequest {
    let Some(spec) = value.trim().strip_prefix("bytes=") else { return RangeRequest::Whole };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    single_range(spec, total).map_or(RangeRequest::Unsatisfiable, |(start, end)| RangeRequest::Part(start, end))
}

fn single_range(spec: &str, total: u64) -> Option<(u64, u64)> {
    if total == 0 {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().ok()?;
            if n == 0 {
                return None;
            }
            (total.saturating_sub(n), total - 1)
        }
        (s, "") => (s.parse().ok()?, total - 1),
        (s, e) => (s.parse().ok()?, e.parse::<u64>().ok()?.min(total - 1)),
    };
    (start <= end && start < total).then_some((start, end))
}

/// The host of an authority or Host header value (port dropped, IPv6 literals keep their
/// brackets), or None when the value is not an authority.
fn host_of(value: &str) -> Option<String> {
    let authority: hyper::http::uri::Authority = value.parse().ok()?;
    // An authority may carry userinfo ("user@host"); a Host header may not.
    (!value.contains('@') && !authority.host().is_empty()).then(|| authority.host().to_owned())
}

/// An HTTP date (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
fn httpdate(t: std::time::SystemTime) -> String {
    static FORMAT: std::sync::OnceLock<Vec<time::format_description::BorrowedFormatItem<'static>>> = std::sync::OnceLock::new();
    let format = FORMAT.get_or_init(|| {
        time::format_description::parse_borrowed::<2>("[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT")
            .expect("a valid description")
    });
    time::OffsetDateTime::from(t).format(format).unwrap_or_default()
}

fn rfc3339(t: std::time::SystemTime) -> String {
    time::OffsetDateTime::from(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeRequest::*;
        assert_eq!(parse_range("bytes=0-9", 100), Part(0, 9));
        assert_eq!(parse_range("bytes=90-", 100), Part(90, 99));
        assert_eq!(parse_range("bytes=-10", 100), Part(90, 99));
        assert_eq!(parse_range("bytes=50-500", 100), Part(50, 99));
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=x-y", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-", 0), Unsatisfiable);
        // Several ranges are answered whole; an unknown unit is ignored.
        assert_eq!(parse_range("bytes=0-1,3-4", 100), Whole);
        assert_eq!(parse_range("items=0-1", 100), Whole);
    }

    /// `/config.json` of an origin with `args`, parsed.
    fn config_json(args: &[&str]) -> serde_json::Value {
        let answer = get(args, "/config.json");
        assert_eq!(answer.status, 200);
        serde_json::from_slice(&answer.body).unwrap()
    }

    /// The answer to GET `target` of an origin with `args`.
    fn get(args: &[&str], target: &str) -> WebResponse {
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("content");
        std::fs::create_dir(&content).unwrap();
        let mut all = vec!["x", "--content", content.to_str().unwrap()];
        all.extend_from_slice(args);
        let config = Config::parse_from(all).unwrap();
        let certs = CertStore::generate(&dir.path().join("tls"), &[]).unwrap();
        let store = ContentStore::open(&content, 1 << 20).unwrap();
        let site = Site { config: &config, certs: &certs, content: &store, web: None, quic_port: 4433 };
        respond(&site, &WebRequest { method: "GET", target, authority: Some("a.test"), ..Default::default() })
    }

    #[test]
    fn cross_origin_isolation_only_when_asked() {
        for target in ["/config.json", "/healthz", "/content/none.v3c"] {
            let plain = get(&[], target);
            assert_eq!(plain.header("cross-origin-opener-policy"), None, "{target}");
            assert_eq!(plain.header("cross-origin-embedder-policy"), None, "{target}");
            let isolated = get(&["--cross-origin-isolate"], target);
            assert_eq!(isolated.header("cross-origin-opener-policy"), Some("same-origin"), "{target}");
            assert_eq!(isolated.header("cross-origin-embedder-policy"), Some("require-corp"), "{target}");
        }
    }

    #[test]
    fn config_lists_further_endpoints_only_when_given() {
        let plain = config_json(&[]);
        assert_eq!(plain["webtransportUrl"], "https://a.test:4433/holoquic");
        assert!(plain.get("webtransportEndpoints").is_none(), "without --wt-endpoint the answer is as before");
        let own = plain["certificateHashes"][0]["value"].as_str().unwrap().len();
        assert_eq!(own, 64);
        let pin = "cd".repeat(32);
        let pinned = format!("https://c.test:4435/holoquic sha-256={pin}");
        let json = config_json(&["--wt-endpoint", "https://b.test:4434/holoquic", "--wt-endpoint", &pinned]);
        let endpoints = json["webtransportEndpoints"].as_array().unwrap();
        let urls: Vec<_> = endpoints.iter().map(|e| e["url"].as_str().unwrap()).collect();
        assert_eq!(urls, ["https://a.test:4433/holoquic", "https://b.test:4434/holoquic", "https://c.test:4435/holoquic"]);
        // Its own endpoint and an unpinned one carry this origin's hashes; a pinned one its pins.
        assert_eq!(endpoints[0]["certificateHashes"], json["certificateHashes"]);
        assert_eq!(endpoints[1]["certificateHashes"], json["certificateHashes"]);
        assert_eq!(endpoints[2]["certificateHashes"], serde_json::json!([{ "algorithm": "sha-256", "value": pin }]));
    }

    #[test]
    fn host_without_port() {
        assert_eq!(host_of("example.org:4433").as_deref(), Some("example.org"));
        assert_eq!(host_of("[::1]:4433").as_deref(), Some("[::1]"));
        assert_eq!(host_of("example.org").as_deref(), Some("example.org"));
        for bad in ["[", "[x", "", "a b", "evil.org/x?", "user@evil.org", ":4433", "[::1"] {
            assert_eq!(host_of(bad), None, "{bad:?}");
        }
    }
}
