//! The origin's FEC plan (docs/protocol.md §3.3) against the shared vectors of
//! `docs/vectors/fec-planning.json`, which `src/player/fecModel.test.ts` checks the player's model
//! of the plan against too: for each (k, loss, burst) both must plan exactly r repair symbols.

mod common;

use common::read_vector;
use holoquic_proto::fec::{plan_repair, LossReport};

#[test]
fn plans_match_the_shared_vectors() {
    let vectors = read_vector("fec-planning.json");
    let plans = vectors["plans"].as_array().expect("fec-planning.json lists plans");
    assert!(!plans.is_empty());
    for plan in plans {
        let number = |field: &str| plan[field].as_f64().unwrap_or_else(|| panic!("{field} is a number in {plan}"));
        let k = plan["k"].as_u64().unwrap_or_else(|| panic!("k is a whole number in {plan}"));
        let r = plan["r"].as_u64().unwrap_or_else(|| panic!("r is a whole number in {plan}"));
        let loss = LossReport { rate: number("loss"), mean_burst: number("burst") };
        assert_eq!(plan_repair(k, loss), r, "{plan}");
    }
}
