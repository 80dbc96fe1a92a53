//! Command line of `holoquic-impair`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use holoquic_impair::loss::{GeParams, LossModel};
use holoquic_impair::nfqueue::KernelDrops;
use holoquic_impair::relay::Relay;
use holoquic_impair::shaper::{RateLimit, Shaper};
use holoquic_impair::stats::{DirectionSnapshot, DirectionStats};

#[derive(Parser)]
#[command(version, about = "Network impairer for holoquic QoE experiments")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// UDP relay (no root needed): clients talk to --listen, packets go to --upstream.
    /// Each direction gets its own loss process, delay and rate limit.
    /// Counters are printed as JSON on SIGINT/SIGTERM.
    Relay(RelayArgs),
    /// NFQUEUE mode (root): impair the packets an iptables `-j NFQUEUE --queue-num N`
    /// rule sends to queue N (one direction per process). Counters on SIGINT/SIGTERM.
    Nfqueue(NfqueueArgs),
}

#[derive(clap::Args)]
struct NfqueueArgs {
    /// Netfilter queue number to serve.
    #[arg(long)]
    queue: u16,
    #[command(flatten)]
    impairment: Impairment,
}

#[derive(clap::Args)]
struct RelayArgs {
    #[command(flatten)]
    impairment: Impairment,
    /// Address clients send to, e.g. 127.0.0.1:4443.
    #[arg(long)]
    listen: SocketAddr,
    /// Address of the real server, e.g. 127.0.0.1:4433.
    #[arg(long)]
    upstream: SocketAddr,
    /// Lose packets only towards the client: the client → upstream direction (for a download,
    /// mostly ACKs) keeps its delay and rate limit but loses nothing. A per-packet loss chain on a
    /// sparse ACK stream stays in its Bad state for seconds of wall time (docs/benchmarks.md →
    /// "Origin"); this isolates the loss the data sees.
    #[arg(long)]
    lossless_upstream: bool,
    /// Rewrite the JSON counters to this file every second.
    #[arg(long)]
    stats_file: Option<PathBuf>,
}

/// Impairment options shared by both modes.
#[derive(clap::Args)]
struct Impairment {
    /// Gilbert-Elliott loss as netem `gemodel`: `p,r,1-h,1-k` in percent, e.g. 1,10,70,0.1 (~6.4 % loss).
    #[arg(long, conflicts_with = "loss")]
    ge: Option<String>,
    /// Run the --ge chain on a clock instead of per packet: Bad periods last this many
    /// milliseconds on average and Good periods as long as keeps the share p/(p+r) of the time
    /// in Bad; each packet is lost with the probability of the state at its arrival.
    #[arg(long, requires = "ge")]
    ge_bad_ms: Option<f64>,
    /// Uniform random loss in percent.
    #[arg(long)]
    loss: Option<f64>,
    /// One-way delay added in each direction, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Rate limit per direction in Mbit/s (token bucket).
    #[arg(long)]
    rate_mbit: Option<f64>,
    /// Queue size of the rate limiter in bytes; packets beyond it are dropped.
    #[arg(long, default_value_t = 150_000)]
    queue_bytes: usize,
    /// Seed of the loss process (the relay's to-client direction uses seed+1).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl Impairment {
    fn shaper(&self, seed: u64) -> Result<Shaper> {
        self.shaper_with_loss(seed, true)
    }

    fn shaper_with_loss(&self, seed: u64, lossy: bool) -> Result<Shaper> {
        let loss = match (&self.ge, self.loss) {
            _ if !lossy => LossModel::None,
            (Some(ge), _) => match self.ge_bad_ms {
                None => LossModel::gilbert_elliott(GeParams::parse_percent(ge)?, seed),
                Some(ms) if !(ms > 0.0 && ms <= 3_600_000.0) => bail!("--ge-bad-ms must be above 0 and at most an hour, got {ms}"),
                Some(ms) => LossModel::timed_gilbert_elliott(GeParams::parse_percent(ge)?, Duration::from_secs_f64(ms / 1000.0), seed)?,
            },
            (None, Some(percent)) => LossModel::uniform(percent, seed)?,
            (None, None) => LossModel::None,
        };
        let rate = match self.rate_mbit {
            // Below 1 kbit/s one packet's transmission time overflows what a Duration holds.
            Some(mbit) if !(0.001..=1e6).contains(&mbit) => bail!("--rate-mbit must be between 0.001 and 1000000, got {mbit}"),
            Some(mbit) => Some(RateLimit { bits_per_second: mbit * 1e6, queue_bytes: self.queue_bytes }),
            None => None,
        };
        Ok(Shaper::new(loss, Duration::from_millis(self.delay_ms), rate))
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Relay(args) => relay(args).await,
        Command::Nfqueue(args) => nfqueue(args).await,
    }
}

/// Registers SIGTERM now (so a signal arriving before the first poll is not
/// fatal) and returns a future that completes on SIGINT or SIGTERM.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = terminate.recv() => {},
        }
    })
}

async fn relay(args: RelayArgs) -> Result<()> {
    let seed = args.impairment.seed;
    let shapers = (args.impairment.shaper_with_loss(seed, !args.lossless_upstream)?, args.impairment.shaper(seed + 1)?);
    let relay = Relay::start(args.listen, args.upstream, shapers.0, shapers.1).await?;
    eprintln!("holoquic-impair: relaying {} -> {}", relay.local_addr, args.upstream);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => {
                if let Some(path) = &args.stats_file {
                    let json = serde_json::to_string(&relay.snapshot())?;
                    let temporary = path.with_extension("tmp");
                    std::fs::write(&temporary, json)?;
                    std::fs::rename(&temporary, path)?;
                }
            }
        }
    }
    println!("{}", serde_json::to_string(&relay.snapshot())?);
    Ok(())
}

async fn nfqueue(args: NfqueueArgs) -> Result<()> {
    let shaper = args.impairment.shaper(args.impairment.seed)?;
    let shutdown = shutdown_signal()?;
    let stats = Arc::new(DirectionStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (worker_stats, worker_stop) = (stats.clone(), stop.clone());
    let queue = args.queue;
    let worker = tokio::task::spawn_blocking(move || holoquic_impair::nfqueue::run(queue, shaper, &worker_stats, &worker_stop));
    tokio::pin!(worker);
    tokio::select! {
        result = &mut worker => return result?.map(|_| ()),
        _ = shutdown => {},
    }
    stop.store(true, Ordering::Relaxed);
    let kernel_dropped = worker.await??;
    println!("{}", serde_json::to_string(&NfqueueReport { direction: stats.snapshot(), kernel_dropped })?);
    Ok(())
}

/// What `nfqueue` prints on shutdown: the direction's counters and the kernel's drops before them.
#[derive(serde::Serialize)]
struct NfqueueReport {
    #[serde(flatten)]
    direction: DirectionSnapshot,
    kernel_dropped: KernelDrops,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Impairment;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        impairment: Impairment,
    }

    fn shaper(args: &[&str]) -> anyhow::Result<()> {
        let w = Wrapper::try_parse_from(std::iter::once("x").chain(args.iter().copied()))?;
        w.impairment.shaper(1).map(|_| ())
    }

    #[test]
    fn rates_a_duration_cannot_hold_are_refused_up_front() {
        assert!(shaper(&["--rate-mbit", "2.5"]).is_ok());
        for bad in ["0", "-1", "1e-300", "NaN", "inf"] {
            let e = shaper(&[&format!("--rate-mbit={bad}")]).expect_err(bad);
            assert!(e.to_string().contains("--rate-mbit"), "{bad}: {e}");
        }
    }
}
