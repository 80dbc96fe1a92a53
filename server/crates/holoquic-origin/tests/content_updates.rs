//! Files that change while the origin serves them, against the real origin binary on 127.0.0.1:
//! a re-packed manifest and a rebuilt web app are served at once (cached, yet revalidated), with
//! an ETag that changes with them and answers If-None-Match.

mod support;

use support::https::Site;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repacked_manifest_is_served_anew_with_a_new_etag() {
    let origin = Site::start(&[]);
    let first = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
    assert_eq!((first.status, &first.body[..]), (200, &b"<MPD generation=\"1\"/>"[..]));
    assert_eq!(first.header("cache-control"), "no-cache", "a manifest must be revalidated");
    let etag = first.header("etag").to_owned();
    assert!(etag.starts_with('"'), "a strong ETag: {etag:?}");
    assert!(!first.header("last-modified").is_empty());

    // Unchanged: the client's copy is still good.
    let again = origin.fetch("/content/demo/manifest.mpd", &[("if-none-match", &etag)]).await.unwrap();
    assert_eq!((again.status, again.body.len(), again.header("etag")), (304, 0, etag.as_str()));

    // Re-packed (renamed into place): new bytes, a new ETag, and the old one no longer matches.
    origin.replace("content/demo/manifest.mpd", b"<MPD generation=\"2\"/>");
    let second = origin.fetch("/content/demo/manifest.mpd", &[("if-none-match", &etag)]).await.unwrap();
    assert_eq!((second.status, &second.body[..]), (200, &b"<MPD generation=\"2\"/>"[..]));
    assert_ne!(second.header("etag"), etag);

    // Rewritten in place, the same length.
    origin.write("content/demo/manifest.mpd", b"<MPD generation=\"3\"/>");
    let third = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
    assert_eq!(&third.body[..], b"<MPD generation=\"3\"/>");
    assert_ne!(third.header("etag"), second.header("etag"));

    // A segment: cached by browsers for an hour, ranges still work with the ETag on them.
    std::fs::create_dir_all(origin.dir.join("content/demo/o/0")).unwrap();
    origin.write("content/demo/o/0/seg-00000.v3c", b"0123456789");
    let part = origin.fetch("/content/demo/o/0/seg-00000.v3c", &[("range", "bytes=2-4")]).await.unwrap();
    assert_eq!((part.status, &part.body[..], part.header("cache-control")), (206, &b"234"[..], "public, max-age=3600"));
    assert!(!part.header("etag").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuilt_web_app_is_served_anew() {
    let origin = Site::start(&[]);
    let first = origin.fetch("/", &[]).await.unwrap();
    assert_eq!((first.status, &first.body[..], first.header("cache-control")), (200, &b"<p>app v1</p>"[..], "no-cache"));
    let cached = origin.fetch("/index.html", &[]).await.unwrap();
    assert_eq!((&cached.body[..], cached.header("etag")), (&b"<p>app v1</p>"[..], first.header("etag")));

    origin.write("web/index.html", b"<p>app v2, longer</p>");
    let second = origin.fetch("/", &[]).await.unwrap();
    assert_eq!(&second.body[..], b"<p>app v2, longer</p>");
    origin.replace("web/index.html", b"<p>app v3</p>");
    let third = origin.fetch("/", &[("if-none-match", second.header("etag"))]).await.unwrap();
    assert_eq!((third.status, &third.body[..]), (200, &b"<p>app v3</p>"[..]));
    let fourth = origin.fetch("/", &[("if-none-match", third.header("etag"))]).await.unwrap();
    assert_eq!(fourth.status, 304);

    assert_eq!(origin.fetch("/missing.js", &[]).await.unwrap().status, 404);
}
