//! The bucket backend of the content store: objects of an S3-compatible bucket under a prefix,
//! read through the content cache (`filecache.rs`).
//!
//! - **Revalidation by ETag.** A cached object is served as it is for `--s3-revalidate` after
//!   the store last confirmed it; after that the next request asks the store with a conditional
//!   GET (`If-None-Match` with the store's ETag): 304 keeps the copy, 200 replaces it, 404 drops
//!   it. A re-published manifest therefore reaches players within that interval, and a segment
//!   costs the store one body transfer however many players ask for it.
//! - **Store down.** A failed revalidation serves the cached copy (stale-if-error) and is not
//!   retried for another interval, so a store that is down costs cached objects nothing; an
//!   uncached object gets 502 (the store refused or failed) or 504 (it did not answer within
//!   `--s3-timeout`). Nothing is remembered about the outage: the first request after the store
//!   returns is served from it.
//! - **One fetch per object at a time.** Requests that miss on an object another request is
//!   already fetching wait for that fetch (at most the timeout) and take its result from the
//!   cache, so ten players starting together cost the store one body per segment, not ten.
//! - **Off the QUIC thread.** `object_store` is async; its requests run on a small tokio runtime
//!   of the bucket's own, and [`Bucket::read`] blocks the calling thread (a loader worker, or an
//!   HTTPS `spawn_blocking` thread) until the answer is in. The bytes are read only once the
//!   object's size is known to be within the limit.
//!
//! Which objects belong together (a manifest and its segments) is what `holoquic-publish`
//! guarantees by its layout (`publish.rs`), not this cache.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3;
use object_store::client::{HttpError, HttpErrorKind};
use object_store::{GetOptions, ObjectStore};

use crate::bucket_client::{object_key, BucketSettings};
use crate::content::ContentError;
use crate::content_metrics::{ContentMetrics, Outcome};
use crate::filecache::{FileCache, Snapshot, Version};

/// Threads of the bucket's runtime: they only drive sockets (callers poll their own requests).
const RUNTIME_THREADS: usize = 1;

pub struct Bucket {
    store: Arc<AmazonS3>,
    prefix: String,
    revalidate: Duration,
    timeout: Duration,
    /// Taken on drop, to be shut down without blocking (the origin drops its content store
    /// inside its own runtime, where a blocking shutdown is refused).
    runtime: Option<tokio::runtime::Runtime>,
    /// Objects being fetched now, by key: later requests wait on the first one's fetch.
    in_flight: Mutex<HashMap<String, Arc<Flight>>>,
}

/// One fetch others wait for: `done` turns true (and waiters are woken) when it ends, however.
#[derive(Default)]
struct Flight {
    done: Mutex<bool>,
    ended: Condvar,
}

/// Ends a fetch that others may wait for, on every way out of `read` (a panic included).
struct Leading<'a> {
    bucket: &'a Bucket,
    key: String,
    flight: Arc<Flight>,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        self.bucket.in_flight.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.key);
        *self.flight.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.flight.ended.notify_all();
    }
}

/// What the store said to a (conditional) GET.
enum Fetched {
    Unchanged,
    Current(Snapshot),
}

impl Bucket {
    pub fn open(bucket: &str, prefix: &str, settings: &BucketSettings) -> anyhow::Result<Self> {
        let store = Arc::new(settings.client(bucket)?);
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(RUNTIME_THREADS).thread_name("content-bucket").enable_all().build()?;
        Ok(Self {
            store,
            prefix: prefix.to_owned(),
            revalidate: settings.revalidate,
            timeout: settings.timeout,
            runtime: Some(runtime),
            in_flight: Mutex::default(),
        })
    }

    /// The object at `relative` (a checked relative path), from `cache` while it is fresh; how
    /// each read was answered goes into `metrics`.
    pub fn read(&self, relative: &Path, limit: u64, cache: &FileCache, metrics: &ContentMetrics) -> Result<Snapshot, ContentError> {
        let relative = relative.to_str().ok_or(ContentError::BadPath)?;
        let key = object_key(&self.prefix, relative);
        let cache_key = Path::new(key.as_ref());
        let cached = cache.cached(cache_key);
        let immutable = crate::publish::in_generation(relative);
        if let Some((snapshot, checked)) = &cached {
            if immutable || checked.elapsed() < self.revalidate {
                metrics.hit();
                return Ok(snapshot.clone());
            }
        }
        let Some(_leading) = self.lead_or_wait(key.as_ref()) else {
            // Another request just fetched it: its result, if the cache took it.
            if let Some((snapshot, _)) = cache.cached(cache_key).filter(|(_, checked)| checked.elapsed() < self.revalidate) {
                metrics.hit();
                return Ok(snapshot);
            }
            return self.read_uncoordinated(&key, cached, limit, cache, metrics);
        };
        self.read_uncoordinated(&key, cached, limit, cache, metrics)
    }

    /// Some(guard) when this request fetches `key`; None after waiting for the request that was
    /// fetching it (or the timeout).
    fn lead_or_wait(&self, key: &str) -> Option<Leading<'_>> {
        let flight = {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            match in_flight.get(key) {
                Some(flight) => Arc::clone(flight),
                None => {
                    let flight = Arc::new(Flight::default());
                    in_flight.insert(key.to_owned(), Arc::clone(&flight));
                    return Some(Leading { bucket: self, key: key.to_owned(), flight });
                }
            }
        };
        let done = flight.done.lock().unwrap_or_else(|p| p.into_inner());
        let _ = flight.ended.wait_timeout_while(done, self.timeout, |done| !*done);
        None
    }

    /// One read that asks the store (conditionally when `cached`), and what follows from its answer.
    fn read_uncoordinated(
        &self,
        key: &object_store::path::Path,
        cached: Option<(Snapshot, Instant)>,
        limit: u64,
        cache: &FileCache,
        metrics: &ContentMetrics,
    ) -> Result<Snapshot, ContentError> {
        let cache_key = Path::new(key.as_ref());
        let known = cached.as_ref().and_then(|(snapshot, _)| snapshot.version.store_etag().map(str::to_owned));
        let started = Instant::now();
        let fetched = self.fetch(key, known, limit);
        let (outcome, bytes) = match &fetched {
            Ok(Fetched::Current(snapshot)) => (Outcome::Fetched, snapshot.bytes.len() as u64),
            Ok(Fetched::Unchanged) => (Outcome::NotModified, 0),
            Err(ContentError::NotFound) => (Outcome::NotFound, 0),
            Err(_) => (Outcome::Error, 0),
        };
        metrics.asked_backend(outcome, started.elapsed(), bytes);
        match fetched {
            Ok(Fetched::Current(snapshot)) => Ok(cache.insert(cache_key, snapshot)),
            Ok(Fetched::Unchanged) => {
                let (snapshot, _) = cached.expect("a conditional GET only with a cached copy");
                cache.confirm(cache_key, &snapshot.version);
                Ok(snapshot)
            }
            Err(ContentError::NotFound) => {
                cache.forget(cache_key);
                Err(ContentError::NotFound)
            }
            Err(e @ ContentError::Upstream { .. }) => match cached {
                Some((snapshot, _)) => {
                    tracing::warn!(object = %key, "serving the cached copy: {e}");
                    cache.confirm(cache_key, &snapshot.version);
                    Ok(snapshot)
                }
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// One GET of `key` (conditional when `known` names the cached version), bounded by the
    /// timeout as a whole.
    fn fetch(&self, key: &object_store::path::Path, known: Option<String>, limit: u64) -> Result<Fetched, ContentError> {
        let runtime = self.runtime.as_ref().expect("present until drop");
        let deadline = Instant::now() + self.timeout;
        runtime.block_on(async {
            let options = GetOptions { if_none_match: known, ..Default::default() };
            let answer = tokio::time::timeout_at(deadline.into(), self.store.get_opts(key, options)).await.map_err(|_| timed_out())?;
            let result = match answer {
                Ok(result) => result,
                Err(object_store::Error::NotModified { .. }) => return Ok(Fetched::Unchanged),
                Err(object_store::Error::NotFound { .. }) => return Err(ContentError::NotFound),
                Err(e) => return Err(upstream(e)),
            };
            let meta = result.meta.clone();
            if meta.size > limit {
                return Err(ContentError::TooLarge { limit });
            }
            let bytes = tokio::time::timeout_at(deadline.into(), result.bytes()).await.map_err(|_| timed_out())?.map_err(upstream)?;
            if bytes.len() as u64 != meta.size {
                return Err(ContentError::Upstream { timed_out: false, reason: format!("{} of {} bytes arrived", bytes.len(), meta.size) });
            }
            let version = match &meta.e_tag {
                Some(etag) => Version::of_object(etag, meta.size, meta.last_modified.into()),
                // A store without ETags: size and time stand in (never seen with S3).
                None => Version::of_object(
                    &format!("{:x}-{:x}", meta.size, meta.last_modified.timestamp_nanos_opt().unwrap_or(0)),
                    meta.size,
                    meta.last_modified.into(),
                ),
            };
            Ok(Fetched::Current(Snapshot { bytes, version }))
        })
    }
}

impl Drop for Bucket {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn timed_out() -> ContentError {
    ContentError::Upstream { timed_out: true, reason: "no answer in time".into() }
}

/// A store error as a status: a timeout anywhere in its chain is 504, anything else 502.
fn upstream(error: object_store::Error) -> ContentError {
    let mut timed_out = false;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = source {
        if e.downcast_ref::<HttpError>().is_some_and(|http| http.kind() == HttpErrorKind::Timeout) {
            timed_out = true;
        }
        source = e.source();
    }
    ContentError::Upstream { timed_out, reason: error.to_string() }
}
