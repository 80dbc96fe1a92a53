//! Publishing a packed scene to a bucket so that no reader ever mixes two generations of it.
//!
//! The rule is the one docs/origin.md gives for any content store ("Content updates"): the
//! segments of a new generation get names the old manifest does not use, they are all written
//! before the manifest that names them, and the manifest is replaced last, in one write. Here the
//! names come from the content: every file but the top-level manifests goes under
//! `PREFIX/g-<hash>/…`, where the hash covers every file of the scene, and each manifest's
//! `<BaseURL>`s are rewritten to point into that generation. An S3 PUT is atomic (a reader sees
//! the old object or the new one), so a player holding either manifest finds exactly its
//! segments, and one that fetched nothing yet finds the new scene complete.
//!
//! Publishing the same scene again is the same generation: objects already there (same size)
//! are not sent again. The generation the replaced manifest named is kept (players hold that
//! manifest for a while); older ones are deleted after the new manifest is in place.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::StreamExt;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use sha2::{Digest, Sha256};

use crate::bucket_client::object_key;

/// Files of one scene at most (a scene of 100 objects × 5 qualities × 100 segments is 50 000).
const MAX_FILES: usize = 200_000;
/// Uploads in flight at once.
const PARALLEL_UPLOADS: usize = 8;
/// Generation folders start with this, then 16 hex digits.
const GENERATION_PREFIX: &str = "g-";

/// What a publish did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub generation: String,
    pub manifests: Vec<String>,
    /// Segment (and other) objects sent, and those already in the bucket.
    pub uploaded: usize,
    pub already_there: usize,
    /// Older generations deleted.
    pub pruned: Vec<String>,
}

/// Publishes the scene directory `dir` (the packager's output: `*.mpd` at its top, segments
/// below) to `store` under `prefix`.
pub async fn publish(dir: &Path, store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Published> {
    let files = scene_files(dir)?;
    let (manifests, segments): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| !f.contains('/') && f.ends_with(".mpd"));
    if manifests.is_empty() {
        bail!("{}: no manifest (*.mpd) at the top of the directory: is it a packed scene?", dir.display());
    }
    let generation = generation_of(dir, manifests.iter().chain(&segments))?;
    let rewritten = manifests
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).with_context(|| format!("reading {name}"))?;
            rebase_manifest(&text, &generation).with_context(|| format!("{}/{name}", dir.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let previous = previous_generation(&*store, prefix, &manifests[0]).await;

    // 1. Every segment of the generation, before any manifest names it.
    let generation_prefix = if prefix.is_empty() { generation.clone() } else { format!("{prefix}/{generation}") };
    let mut uploads = tokio::task::JoinSet::new();
    let (mut uploaded, mut already_there) = (0, 0);
    for relative in segments {
        if uploads.len() >= PARALLEL_UPLOADS {
            tally(uploads.join_next().await, &mut uploaded, &mut already_there)?;
        }
        let (store, path, key) = (Arc::clone(&store), dir.join(&relative), object_key(&generation_prefix, &relative));
        uploads.spawn(async move { upload_once(&*store, &path, &key).await });
    }
    while let Some(done) = uploads.join_next().await {
        tally(Some(done), &mut uploaded, &mut already_there)?;
    }
    // 2. The manifests, last: from here on readers get the new generation.
    for (name, text) in manifests.iter().zip(rewritten) {
        store.put(&object_key(prefix, name), PutPayload::from(text.into_bytes())).await.with_context(|| format!("uploading {name}"))?;
    }
    // 3. Generations older than the one just replaced.
    let keep: BTreeSet<&str> = [Some(generation.as_str()), previous.as_deref()].into_iter().flatten().collect();
    let mut pruned = Vec::new();
    for old in generations(&*store, prefix).await? {
        if !keep.contains(old.as_str()) {
            delete_all(&*store, &object_key(prefix, &old)).await.with_context(|| format!("deleting the old generation {old}"))?;
            pruned.push(old);
        }
    }
    Ok(Published { generation, manifests, uploaded, already_there, pruned })
}

/// Every regular file under `dir` as a `/`-separated relative path, sorted; hidden names (a
/// staging leftover, `.git`) are skipped.
fn scene_files(dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let here = dir.join(&relative);
        for entry in std::fs::read_dir(&here).with_context(|| format!("reading the directory {}", here.display()))? {
            let entry = entry?;
            let name = entry.file_name().into_string().map_err(|n| anyhow!("{}: a name that is not UTF-8: {n:?}", here.display()))?;
            if name.starts_with('.') {
                continue;
            }
            let kind = std::fs::metadata(entry.path())?.file_type();
            let path = relative.join(&name);
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                files.push(path.to_str().expect("UTF-8 names").to_owned());
                if files.len() > MAX_FILES {
                    bail!("{}: more than {MAX_FILES} files: is it a packed scene?", dir.display());
                }
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `g-` and 16 hex digits of a SHA-256 over every file's name, length and bytes.
fn generation_of<'a>(dir: &Path, files: impl Iterator<Item = &'a String>) -> Result<String> {
    let mut names: Vec<&String> = files.collect();
    names.sort();
    let mut hash = Sha256::new();
    for name in names {
        let bytes = std::fs::read(dir.join(name)).with_context(|| format!("reading {name}"))?;
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    let digest = hash.finalize();
    Ok(format!("{GENERATION_PREFIX}{}", digest[..8].iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// The manifest with every relative `<BaseURL>` moved into `generation/`. Each AdaptationSet must
/// carry its own BaseURL (the packager writes one), or its segments could not be moved.
pub fn rebase_manifest(text: &str, generation: &str) -> Result<String> {
    let sets = text.matches("<AdaptationSet").count();
    let bases = text.matches("<BaseURL>").count();
    if sets == 0 || sets != bases {
        bail!("the manifest has {sets} AdaptationSet(s) and {bases} <BaseURL>(s): publishing needs exactly one BaseURL in each AdaptationSet");
    }
    let mut out = String::with_capacity(text.len() + bases * (generation.len() + 1));
    let mut rest = text;
    while let Some(at) = rest.find("<BaseURL>") {
        let (before, after) = rest.split_at(at + "<BaseURL>".len());
        out.push_str(before);
        let value = after[..after.find('<').unwrap_or(after.len())].trim();
        if value.contains("://") || value.starts_with('/') {
            bail!("an absolute <BaseURL> cannot be published into a generation");
        }
        out.push_str(generation);
        out.push('/');
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// The generation the manifest now in the bucket names, if any (None also when the store
/// cannot tell: then nothing is kept but the new generation's own).
async fn previous_generation(store: &dyn ObjectStore, prefix: &str, manifest: &str) -> Option<String> {
    let text = store.get(&object_key(prefix, manifest)).await.ok()?.bytes().await.ok()?;
    let text = std::str::from_utf8(&text).ok()?;
    let start = text.find("<BaseURL>")? + "<BaseURL>".len();
    let value = text[start..].trim_start();
    let generation = value.split('/').next()?;
    is_generation(generation).then(|| generation.to_owned())
}

/// Whether `relative` (a content path) lies in a published generation's folder: such objects
/// never change (the folder's name is a hash of the scene's bytes), so a cached copy needs no
/// revalidation — and a store that hangs cannot hold it up.
pub fn in_generation(relative: &str) -> bool {
    relative.split('/').any(is_generation)
}

fn is_generation(name: &str) -> bool {
    name.strip_prefix(GENERATION_PREFIX).is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The generation folders under `prefix`.
async fn generations(store: &dyn ObjectStore, prefix: &str) -> Result<Vec<String>> {
    let listed = store.list_with_delimiter(Some(&Key::from(prefix))).await.context("listing the scene's generations")?;
    Ok(listed.common_prefixes.iter().filter_map(|p| p.filename().map(str::to_owned)).filter(|name| is_generation(name)).collect())
}

/// Uploads `path` to `key` unless an object of its size is there (same generation, same bytes);
/// true when it was sent.
async fn upload_once(store: &dyn ObjectStore, path: &Path, key: &Key) -> Result<bool> {
    let bytes = tokio::fs::read(path).await.with_context(|| format!("reading {}", path.display()))?;
    if store.head(key).await.is_ok_and(|meta| meta.size == bytes.len() as u64) {
        return Ok(false);
    }
    store.put(key, PutPayload::from(bytes)).await.with_context(|| format!("uploading {key}"))?;
    Ok(true)
}

fn tally(done: Option<Result<Result<bool>, tokio::task::JoinError>>, uploaded: &mut usize, already_there: &mut usize) -> Result<()> {
    match done {
        Some(Ok(Ok(true))) => *uploaded += 1,
        Some(Ok(Ok(false))) => *already_there += 1,
        Some(Ok(Err(e))) => return Err(e),
        Some(Err(e)) => bail!("an upload task failed: {e}"),
        None => {}
    }
    Ok(())
}

async fn delete_all(store: &dyn ObjectStore, prefix: &Key) -> Result<()> {
    let mut listing = store.list(Some(prefix));
    while let Some(meta) = listing.next().await {
        store.delete(&meta?.location).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_in_a_generation_folder_are_known_immutable() {
        assert!(in_generation("demo/g-cf8d2db1eb10adc9/figure-3/4/seg-00000.v3c"));
        assert!(!in_generation("demo/manifest.mpd"));
        assert!(!in_generation("demo/g-cf8d2db1/seg.v3c"), "not a generation's 16 hex digits");
        assert!(!in_generation("demo/g-cf8d2db1eb10adcx/seg.v3c"));
    }

    #[test]
    fn base_urls_move_into_the_generation() {
        let mpd = "<MPD><Period><AdaptationSet id=\"0\"><BaseURL>figure-0/</BaseURL></AdaptationSet>\n<AdaptationSet id=\"1\"><BaseURL> figure-1/</BaseURL></AdaptationSet></Period></MPD>";
        let out = rebase_manifest(mpd, "g-0123456789abcdef").unwrap();
        assert_eq!(out.matches("<BaseURL>g-0123456789abcdef/").count(), 2, "{out}");
        assert!(out.contains("g-0123456789abcdef/figure-0/</BaseURL>") && out.contains("g-0123456789abcdef/ figure-1/"), "{out}");
        assert_eq!(out.replace("g-0123456789abcdef/", ""), mpd, "nothing else changes");
    }

    #[test]
    fn manifests_whose_segments_cannot_move_are_refused() {
        let missing = "<MPD><AdaptationSet id=\"0\"></AdaptationSet></MPD>";
        assert!(rebase_manifest(missing, "g-0").unwrap_err().to_string().contains("exactly one BaseURL"));
        let absolute = "<MPD><AdaptationSet><BaseURL>https://cdn.test/x/</BaseURL></AdaptationSet></MPD>";
        assert!(rebase_manifest(absolute, "g-0").unwrap_err().to_string().contains("absolute"));
        assert!(rebase_manifest("<MPD/>", "g-0").is_err());
    }

    #[test]
    fn the_generation_follows_the_content() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("o/0")).unwrap();
        std::fs::write(dir.path().join("manifest.mpd"), "m").unwrap();
        std::fs::write(dir.path().join("o/0/seg-00000.v3c"), "a").unwrap();
        std::fs::write(dir.path().join(".hidden"), "x").unwrap();
        let files = scene_files(dir.path()).unwrap();
        assert_eq!(files, ["manifest.mpd", "o/0/seg-00000.v3c"]);
        let first = generation_of(dir.path(), files.iter()).unwrap();
        assert!(is_generation(&first), "{first}");
        assert_eq!(generation_of(dir.path(), files.iter()).unwrap(), first, "the same scene, the same generation");
        std::fs::write(dir.path().join("o/0/seg-00000.v3c"), "b").unwrap();
        assert_ne!(generation_of(dir.path(), files.iter()).unwrap(), first);
    }
}
