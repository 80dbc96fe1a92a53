//! Operating the real origin binary: where its settings come from, the admin listener, the
//! access log, SIGHUP and the private directory of its keys.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use holoquic_origin::tls::CertStore;
use support::{http_get, tls_get, Origin};

fn content_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scene")).unwrap();
    std::fs::write(dir.path().join("scene/a.bin"), vec![1u8; 3000]).unwrap();
    dir
}

/// A flag beats its variable, the variable beats the TOML file, the file beats the default:
/// seen in the address the origin binds (three loopback addresses tell the sources apart).
#[test]
fn a_flag_beats_its_variable_which_beats_the_file() {
    let content = content_dir();
    let file = content.path().join("origin.toml");
    let toml = format!("listen = \"127.0.0.3:0\"\ncontent = {:?}\nwt_path = \"/from-file\"\n", content.path().to_str().unwrap());
    std::fs::write(&file, toml).unwrap();
    let config = file.to_str().unwrap();
    let env = [("HOLOQUIC_CONFIG", config), ("HOLOQUIC_LISTEN", "127.0.0.2:0")];
    /// Arguments, environment, and the address the origin should bind.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 3] = [(&["--listen", "127.0.0.1:0"], &env, "127.0.0.1"), (&[], &env, "127.0.0.2"), (&["--config", config], &[], "127.0.0.3")];
    for (args, env, expected) in cases {
        let origin = Origin::start(args, env);
        assert_eq!(origin.quic.ip().to_string(), expected, "args {args:?} env {env:?}");
    }
    // A variable of a repeatable flag takes a comma-separated list; a bad value names the flag.
    let origin = Origin::start(&["--config", config, "--listen", "127.0.0.1:0"], &[("HOLOQUIC_ALLOW_ORIGIN", "https://a.example,https://b.example")]);
    drop(origin);
    let failed = support::command(&["--config", config], &[("HOLOQUIC_MAX_CONNECTIONS", "many")]).output().unwrap();
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("--max-connections"), "{}", String::from_utf8_lossy(&failed.stderr));
}

/// `/metrics` is on the admin listener, with the histograms, and on neither public listener.
#[test]
fn metrics_are_served_on_the_admin_listener_only() {
    let content = content_dir();
    let dir = content.path().to_str().unwrap();
    let origin = Origin::start(&["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--content", dir], &[]);
    let admin = origin.admin.expect("admin address on the ready line");
    let (status, body) = http_get(admin, "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("# TYPE holoquic_connections_total counter\n"), "{body}");
    assert!(body.contains("# TYPE holoquic_object_latency_seconds histogram\n"), "{body}");
    assert!(body.contains("holoquic_object_size_bytes_bucket{le=\"+Inf\"} 0\n"), "{body}");
    assert_eq!(http_get(admin, "/healthz"), (200, "ok\n".into()));
    assert_eq!(http_get(admin, "/content/scene/a.bin").0, 404, "the admin listener serves no content");
    assert_eq!(http_get(origin.http.unwrap(), "/metrics").0, 404);
    assert_eq!(tls_get(origin.quic, "/metrics").1, 404);
    assert_eq!(tls_get(origin.quic, "/healthz").1, 200);
}

/// With `--access-log FILE --access-log-format json` every HTTP request is one JSON line.
#[test]
fn json_access_log_lines_parse() {
    let content = content_dir();
    let dir = content.path().to_str().unwrap();
    let log = content.path().join("access.log");
    let args =
        ["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--content", dir, "--access-log", log.to_str().unwrap(), "--access-log-format", "json"];
    let origin = Origin::start(&args, &[]);
    let http = origin.http.unwrap();
    assert_eq!(http_get(http, "/content/scene/a.bin").0, 200);
    assert_eq!(http_get(http, "/content/scene/missing").0, 404);
    assert_eq!(tls_get(origin.quic, "/healthz").1, 200);
    assert!(origin.terminate().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}"))).collect();
    assert_eq!(lines.len(), 3, "{text}");
    for line in &lines {
        for key in ["timestamp", "kind", "path", "status", "bytes", "duration_ms", "client", "transport"] {
            assert!(line.get(key).is_some(), "{key} missing in {line}");
        }
        assert!(line["client"].as_str().unwrap().starts_with("127.0.0.1:"));
    }
    let summary: Vec<_> = lines
        .iter()
        .map(|l| (l["path"].as_str().unwrap(), l["status"].as_u64().unwrap(), l["bytes"].as_u64().unwrap(), l["transport"].as_str().unwrap()))
        .collect();
    assert_eq!(summary[0], ("/content/scene/a.bin", 200, 3000, "http/1.1"));
    assert_eq!((summary[1].0, summary[1].1), ("/content/scene/missing", 404));
    assert_eq!((summary[2].0, summary[2].1, summary[2].3), ("/healthz", 200, "http/1.1+tls"));
}

/// SIGHUP reads the PKI files again: a new TLS connection gets the new certificate; a corrupt
/// file on the next SIGHUP leaves the new one in service.
#[test]
fn sighup_reloads_the_certificate_and_keeps_it_when_the_new_one_is_corrupt() {
    let content = content_dir();
    let pairs = tempfile::tempdir().unwrap();
    let first = CertStore::generate(&pairs.path().join("1"), &[]).unwrap().current();
    let second = CertStore::generate(&pairs.path().join("2"), &[]).unwrap().current();
    let (cert, key) = (content.path().join("cert.pem"), content.path().join("key.pem"));
    let install = |from: &holoquic_origin::tls::CertPair| {
        std::fs::copy(&from.cert_pem, &cert).unwrap();
        std::fs::copy(&from.key_pem, &key).unwrap();
    };
    install(&first);
    let args = ["--listen", "127.0.0.1:0", "--content", content.path().to_str().unwrap(), "--cert", cert.to_str().unwrap(), "--key", key.to_str().unwrap()];
    let origin = Origin::start(&args, &[]);
    assert_eq!(tls_get(origin.quic, "/healthz").0, first.der_sha256);

    install(&second);
    origin.signal(libc::SIGHUP);
    let seen = origin.wait_log("SIGHUP: reloaded the certificate", 0);
    assert_eq!(tls_get(origin.quic, "/healthz").0, second.der_sha256, "a new connection sees the new certificate");

    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
    origin.signal(libc::SIGHUP);
    origin.wait_log("SIGHUP: keeping the certificate in service", seen);
    assert_eq!(tls_get(origin.quic, "/healthz").0, second.der_sha256, "the corrupt one was not taken");
    assert!(origin.terminate().success());
}

/// The generated key lives in a fresh 0700 directory of ours, not at a name another user could
/// prepare: a symbolic link planted at the predictable name `holoquic-origin-<pid>` before the
/// origin runs receives nothing. The directory is gone after SIGTERM.
#[test]
fn generated_keys_live_in_a_private_directory_removed_on_sigterm() {
    let content = content_dir();
    let base = tempfile::tempdir().unwrap();
    let trap = tempfile::tempdir().unwrap();
    let mut cmd = support::command(&["--listen", "127.0.0.1:0", "--content", content.path().to_str().unwrap()], &[]);
    cmd.env("TMPDIR", base.path()).env_remove("XDG_RUNTIME_DIR");
    plant_link_at_pid_name(&mut cmd, base.path(), trap.path());
    let origin = Origin::spawn(cmd);

    let entries: Vec<_> = std::fs::read_dir(base.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(entries.iter().any(|p| std::fs::symlink_metadata(p).unwrap().file_type().is_symlink()), "the link was planted: {entries:?}");
    let private: Vec<_> = entries.iter().filter(|p| std::fs::symlink_metadata(p).unwrap().is_dir()).collect();
    assert_eq!(private.len(), 1, "one private directory besides the planted link: {entries:?}");
    let private = private[0].clone();
    let meta = std::fs::symlink_metadata(&private).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    // SAFETY: geteuid cannot fail.
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });
    let key = std::fs::symlink_metadata(private.join("key-1.pem")).expect("the key is in the private directory");
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_dir(trap.path()).unwrap().count(), 0, "nothing was written through the planted link");

    assert!(origin.terminate().success());
    assert!(!private.exists(), "the private directory is removed on SIGTERM");
}

/// Makes the child, between fork and exec (when its pid is known), create the link
/// `base/holoquic-origin-<pid>` → `target`: what a local attacker could prepare for a name
/// derived from the pid.
fn plant_link_at_pid_name(cmd: &mut std::process::Command, base: &Path, target: &Path) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    // Everything the child uses is allocated here, before the fork.
    let prefix = base.join("holoquic-origin-").as_os_str().as_bytes().to_vec();
    let mut target = target.as_os_str().as_bytes().to_vec();
    target.push(0);
    let mut link = vec![0u8; prefix.len() + 24];
    // SAFETY: only getpid, stack formatting into a buffer allocated before fork, and symlink run
    // in the child: async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let mut pid = libc::getpid() as u32;
            let mut digits = [0u8; 12];
            let mut n = 0;
            loop {
                digits[n] = b'0' + (pid % 10) as u8;
                n += 1;
                pid /= 10;
                if pid == 0 {
                    break;
                }
            }
            link[..prefix.len()].copy_from_slice(&prefix);
            for i in 0..n {
                link[prefix.len() + i] = digits[n - 1 - i];
            }
            link[prefix.len() + n] = 0;
            libc::symlink(target.as_ptr().cast(), link.as_ptr().cast());
            Ok(())
        });
    }
}
