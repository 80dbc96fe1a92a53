//! `holoquic-publish DIR s3://BUCKET/PREFIX`: uploads a packed scene to a bucket, segments first
//! and manifests last, so the origins serving the bucket never hand a player a manifest of one
//! generation with segments of another (`publish.rs`). `holoquic-pack --out s3://…` runs it.
//!
//! The bucket is reached with the origin's `--s3-*` settings (the same flags, `HOLOQUIC_S3_*`
//! variables, `s3_*` keys of the origin's TOML file, and the standard AWS variables).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Result};
use clap::{CommandFactory, FromArgMatches, Parser};
use holoquic_origin::bucket_client::BucketArgs;
use holoquic_origin::config::{env_variable, with_file_defaults};
use holoquic_origin::content::ContentSource;

#[derive(Debug, Parser)]
#[command(name = "holoquic-publish", version, about = "Publish a packed scene to an S3-compatible bucket: segments first, the manifest last")]
struct Cli {
    /// The packed scene: the packager's output directory (a manifest at its top, segments below).
    #[arg(value_name = "DIR")]
    scene: PathBuf,
    /// Where the scene goes, e.g. `s3://media/content/demo`: the origin with `--content s3://media/content` serves it as `/content/demo/manifest.mpd`.
    #[arg(value_name = "s3://BUCKET/PREFIX")]
    destination: String,
    /// The origin's TOML file, for its `s3_*` keys (other keys are ignored).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    bucket: BucketArgs,
}

/// The command line with the origin's variable for every `--s3-*` flag.
fn command() -> clap::Command {
    Cli::command().mut_args(|arg| {
        let id = arg.get_id().as_str();
        if id.starts_with("s3_") || id == "config" {
            let variable = env_variable(id);
            arg.env(variable)
        } else {
            arg
        }
    })
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime");
    if let Err(e) = runtime.block_on(run()) {
        eprintln!("holoquic-publish: {e:#}");
        std::process::exit(1);
    }
}

async fn run() -> Result<()> {
    let args: Vec<_> = std::env::args_os().collect();
    let first = command().get_matches_from(&args);
    let mut cmd = command();
    if let Some(file) = first.get_one::<PathBuf>("config") {
        cmd = with_file_defaults(cmd, file, true)?;
    }
    let cli = Cli::from_arg_matches(&cmd.get_matches_from(&args))?;
    let ContentSource::Bucket { bucket, prefix } = ContentSource::parse(&cli.destination).map_err(anyhow::Error::msg)? else {
        bail!("{}: not a bucket URL (s3://BUCKET/PREFIX); a local scene needs no publishing", cli.destination);
    };
    if !cli.scene.is_dir() {
        bail!("{}: not a directory", cli.scene.display());
    }
    let store = Arc::new(cli.bucket.settings()?.client(&bucket)?);
    let done = holoquic_origin::publish::publish(&cli.scene, store, &prefix).await?;
    println!(
        "holoquic-publish: s3://{bucket}/{prefix}: generation {} ({} objects sent, {} already there), manifest {}{}",
        done.generation,
        done.uploaded,
        done.already_there,
        done.manifests.join(", "),
        if done.pruned.is_empty() { String::new() } else { format!("; deleted old generations {}", done.pruned.join(", ")) }
    );
    Ok(())
}
