//! `holoquic-load`: N concurrent WebTransport sessions against a holoquic origin, each playing a
//! scene's request pattern, and a report of what arrived on time (docs/origin.md → "Load
//! testing"; numbers in docs/benchmarks.md).
//!
//! Map of the crate, one job a module:
//!
//! | module | job |
//! |---|---|
//! | `options` | the command line and its checks |
//! | `scene` | the MPD: objects, rungs, segment timing, segment paths |
//! | `pattern` | the requests of a segment: in-view objects reliable, the rest datagrams, urgencies, deadlines |
//! | `run` | a whole run: manifest, sessions over the ramp, progress lines, the report |
//! | `event_loop` | one UDP socket, one thread: packets to their connection, timers, sends |
//! | `session` | one QUIC connection and its WebTransport session; its requests and their tally |
//! | `object` | one request's stream messages and datagrams: complete, late, lost; repair on demand |
//! | `report` | tallies, latency percentiles, throughput, origin memory; text and JSON |
//!
//! The wire formats are holoquic-proto's, as the origin uses them; QUIC is quiche's.
//!
//! Exit status: 0 after a report; 2 for a malformed option (clap's usage error), 1 when the run
//! cannot start (an option that does not fit the scene or machine, no origin, no manifest); 3
//! with `--strict` when an object was late or lost or a session failed.

mod event_loop;
mod object;
mod options;
mod pattern;
mod report;
mod run;
mod scene;
mod session;

use clap::Parser;

fn main() {
    let options = options::Options::parse();
    if let Err(message) = options.check() {
        eprintln!("holoquic-load: {message}");
        std::process::exit(1);
    }
    let report = match run::run(&options) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("holoquic-load: {e:#}");
            std::process::exit(1);
        }
    };
    if options.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
    } else {
        print!("{}", report.text(options.per_session));
    }
    let clean = report.total.late == 0 && report.total.lost == 0 && report.sessions_failed == 0;
    if options.strict && !clean {
        std::process::exit(3);
    }
}
