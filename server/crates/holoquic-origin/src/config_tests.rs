//! Tests of the configuration: defaults, the file, the one naming rule across flags, variables
//! and TOML keys, and the flag table in docs/origin.md. (Precedence over real environment
//! variables is tested on the real binary, in tests/operations.rs: setting variables here would
//! leak into every other test of the process.)

use super::*;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn path(d: &tempfile::TempDir) -> &str {
    d.path().to_str().unwrap()
}

#[test]
fn defaults_and_flags() {
    let d = dir();
    let c = Config::parse_from(["x", "--content", path(&d)]).unwrap();
    assert_eq!(c.listen, "[::]:4433".parse().unwrap());
    assert_eq!(c.wt_path, "/holoquic");
    assert_eq!(c.cc, CongestionControl::Bbr2);
    assert_eq!(c.loss_tolerance, DEFAULT_LOSS_TOLERANCE);
    assert_eq!(c.initial_rtt, DEFAULT_INITIAL_RTT);
    assert_eq!(c.limits, Limits::default());
    assert_eq!(c.https, HttpsLimits::default());
    assert_eq!(c.admin_listen, None);
    assert_eq!(c.access_log_format, AccessLogFormat::Text);
    assert!(!c.cors);
    let c = Config::parse_from(["x", "--content", path(&d), "--cc", "cubic", "--allow-origin", "https://a", "--allow-origin", "https://b", "--cors"]).unwrap();
    assert_eq!(c.cc, CongestionControl::Cubic);
    assert_eq!(c.allowed_origins, vec!["https://a", "https://b"]);
    assert!(c.cors);
    let c = Config::parse_from(["x", "--content", path(&d), "--cors=false", "--access-log-format", "json"]).unwrap();
    assert!(!c.cors);
    assert_eq!(c.access_log_format, AccessLogFormat::Json);
}

#[test]
fn file_values_apply_and_flags_win() {
    let d = dir();
    let file = d.path().join("origin.toml");
    let toml = format!(
        "listen = \"127.0.0.1:9000\"\ncontent = {:?}\ncc = \"cubic\"\nwt_path = \"/wt\"\ncors = true\nallow_origin = [\"https://a\", \"https://b\"]\nloss_tolerance = 0.25\nmax_connections = 7\n",
        path(&d)
    );
    std::fs::write(&file, toml).unwrap();
    let c = Config::parse_from(["x", "--config", file.to_str().unwrap(), "--wt-path", "/other", "--allow-origin", "https://c"]).unwrap();
    assert_eq!(c.listen, "127.0.0.1:9000".parse().unwrap());
    assert_eq!(c.cc, CongestionControl::Cubic);
    assert_eq!(c.wt_path, "/other", "the flag wins over the file");
    assert_eq!(c.allowed_origins, vec!["https://c"], "a repeated flag replaces the file's array");
    assert!(c.cors);
    assert_eq!(c.loss_tolerance, 0.25);
    assert_eq!(c.limits.max_connections, 7);
    let c = Config::parse_from(["x", "--config", file.to_str().unwrap()]).unwrap();
    assert_eq!(c.allowed_origins, vec!["https://a", "https://b"]);
}

#[test]
fn bad_input_is_a_clear_error() {
    let d = dir();
    let content = path(&d);
    let error = |args: &[&str]| Config::parse_from(args).unwrap_err().to_string();
    assert!(error(&["x", "--content", "/does/not/exist"]).contains("does not exist"));
    assert!(error(&["x", "--content", content, "--wt-path", "nope"]).contains("--wt-path"));
    assert!(error(&["x", "--content", content, "--loss-tolerance", "0.9"]).contains("--loss-tolerance"));
    assert!(Config::parse_from(["x", "--content", content, "--loss-tolerance", "NaN"]).is_err());
    assert!(error(&["x", "--content", content, "--initial-rtt-ms", "0"]).contains("--initial-rtt-ms"));
    assert!(error(&["x", "--content", content, "--initial-rtt-ms", "5000"]).contains("--initial-rtt-ms"));
    let c = Config::parse_from(["x", "--content", content, "--initial-rtt-ms", "100"]).unwrap();
    assert_eq!(c.initial_rtt, std::time::Duration::from_millis(100));
    assert!(Config::parse_from(["x", "--content", content, "--https-idle-timeout", "0"]).unwrap_err().to_string().contains("--https-idle-timeout"));
    assert!(Config::parse_from(["x", "--content", content, "--https-max-connections", "0"]).is_err());
    let c = Config::parse_from(["x", "--content", content, "--https-header-timeout", "2.5", "--https-max-streams", "8"]).unwrap();
    assert_eq!((c.https.header_timeout, c.https.max_streams), (std::time::Duration::from_millis(2500), 8));
    let file = d.path().join("bad.toml");
    let with_file = |text: &str| {
        std::fs::write(&file, text).unwrap();
        Config::parse_from(["x", "--content", content, "--config", file.to_str().unwrap()]).map(|_| ()).unwrap_err().to_string()
    };
    assert!(with_file("unknown_key = 1\n").contains("unknown key `unknown_key`"));
    // The flag spelling is not a key: one naming, and the error says which.
    assert!(with_file("wt-path = \"/x\"\n").contains("e.g. `wt_path`"));
    assert!(with_file("config = \"other.toml\"\n").contains("unknown key `config`"));
    assert!(with_file("wt_path = [\"/a\", \"/b\"]\n").contains("takes one value"));
    assert!(with_file("listen = { a = 1 }\n").contains("must be a string, number or boolean"));
    assert!(with_file("max_connections = \"many\"\n").contains("--max-connections"));
}

/// Every setting follows the rule: flag `--a-b`, variable `HOLOQUIC_A_B`, TOML key `a_b`. A new
/// field of `Cli` is checked here without anyone listing it.
#[test]
fn every_flag_has_its_variable_and_toml_key() {
    let cmd = command();
    let mut checked = 0;
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        assert_eq!(arg.get_long(), Some(id.replace('_', "-").as_str()), "flag of {id}");
        assert_eq!(arg.get_env().and_then(|v| v.to_str()), Some(env_variable(id).as_str()), "variable of {id}");
        assert!(arg.get_help().is_some(), "{id} needs a doc comment (it is its line in --help and docs/origin.md)");
        if id == "config" {
            continue; // the file cannot name itself
        }
        let d = dir();
        let file = d.path().join("one.toml");
        let repeatable = matches!(arg.get_action(), ArgAction::Append);
        std::fs::write(&file, if repeatable { format!("{id} = [\"1\"]\n") } else { format!("{id} = \"1\"\n") }).unwrap();
        let with_file = with_file_defaults(command(), &file, false).unwrap_or_else(|e| panic!("TOML key {id}: {e:#}"));
        let arg = with_file.get_arguments().find(|a| a.get_id() == id).unwrap();
        assert_eq!(arg.get_default_values(), ["1"], "TOML key {id} sets its flag's default");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} settings: is command() missing the derived arguments?");
}

/// The flag table of docs/origin.md, generated from the command so it lists every setting with
/// its variable and key; on a mismatch the failure prints the table to paste between the markers.
#[test]
fn docs_list_every_flag() {
    let mut table = String::from("| flag | environment | TOML key | meaning |\n|---|---|---|---|\n");
    for arg in command().get_arguments() {
        let id = arg.get_id().as_str();
        let value = arg.get_value_names().map(|v| format!(" {}", v[0])).unwrap_or_default();
        let key = if id == "config" { "—".to_owned() } else { format!("`{id}`") };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default().replace('|', "\\|");
        table.push_str(&format!("| `--{}{}` | `{}` | {} | {} |\n", id.replace('_', "-"), value.replace('|', "\\|"), env_variable(id), key, help));
    }
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../docs/origin.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let (begin, end) = ("<!-- flags: generated by config_tests.rs docs_list_every_flag -->\n", "<!-- flags end -->");
    let start = doc.find(begin).expect("begin marker in docs/origin.md") + begin.len();
    let stop = doc[start..].find(end).expect("end marker") + start;
    assert!(doc[start..stop] == table, "docs/origin.md's flag table is out of date; between the markers put:\n{table}");
}

#[test]
fn wt_endpoints_with_and_without_pins() {
    let d = dir();
    let hash = "ab".repeat(32);
    assert!(Config::parse_from(["x", "--content", path(&d)]).unwrap().wt_endpoints.is_empty());
    let pinned = format!("https://b.test:4434/holoquic sha-256={hash}");
    let c = Config::parse_from(["x", "--content", path(&d), "--wt-endpoint", "https://a.test/holoquic", "--wt-endpoint", &pinned]).unwrap();
    assert_eq!(
        c.wt_endpoints,
        vec![
            WtEndpoint { url: "https://a.test/holoquic".into(), pins: vec![] },
            WtEndpoint { url: "https://b.test:4434/holoquic".into(), pins: vec![[0xab; 32]] },
        ]
    );
    let error = |value: &str| Config::parse_from(["x", "--content", path(&d), "--wt-endpoint", value]).unwrap_err().to_string();
    assert!(error("http://a.test/holoquic").contains("not an https:// URL"));
    assert!(error("https:///holoquic").contains("needs a host"));
    assert!(error("https://a.test/x#frag").contains("no user or fragment"));
    assert!(error("https://a.test/x sha-256=abcd").contains("64 hex digits"));
    assert!(error("https://a.test/x md5=00").contains("sha-256="));
}

#[test]
fn content_in_a_bucket() {
    let c = Config::parse_from(["x", "--content", "s3://media/holo/quic/", "--s3-region", "eu-west-1", "--s3-revalidate", "2.5"]).unwrap();
    assert_eq!(c.content, ContentSource::Bucket { bucket: "media".into(), prefix: "holo/quic".into() });
    assert_eq!((c.bucket.region.as_deref(), c.bucket.revalidate, c.bucket.timeout), (Some("eu-west-1"), Duration::from_millis(2500), Duration::from_secs(5)));
    assert_eq!(Config::parse_from(["x", "--content", "s3://media"]).unwrap().content, ContentSource::Bucket { bucket: "media".into(), prefix: String::new() });
    let error = |args: &[&str]| Config::parse_from(args).unwrap_err().to_string();
    assert!(error(&["x", "--content", "s3://Media/x"]).contains("bucket name"));
    assert!(error(&["x", "--content", "s3://media/../x"]).contains("prefix"));
    assert!(error(&["x", "--content", "s3://media", "--s3-timeout", "0"]).contains("--s3-timeout"));
    let secret = Config::parse_from(["x", "--content", "s3://media", "--s3-access-key-id", "AK", "--s3-secret-access-key", "hunter2"]).unwrap();
    assert_eq!(secret.bucket.secret_access_key.as_deref(), Some("hunter2"));
    assert!(!format!("{secret:?}").contains("hunter2"), "the secret never reaches a log");
}
