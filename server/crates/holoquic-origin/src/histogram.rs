//! A Prometheus histogram with fixed bucket bounds, recorded with relaxed atomics.
//!
//! Written here rather than taken from `prometheus-client` or `metrics`: the origin's counters
//! are already plain atomics rendered by `metrics`, the QUIC thread records on its hot path
//! where a lock or an allocation per observation would cost, and a fixed-bucket histogram is a
//! few atomic adds. A crate would bring a registry of its own beside ours, for three histograms.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// Cumulative-on-render bucket counts, their count and their sum.
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds, ascending; an implicit `+Inf` bucket follows.
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative): `bounds.len() + 1` of them.
    buckets: Box<[AtomicU64]>,
    /// Sum of the observations, as `f64` bits.
    sum_bits: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        debug_assert!(bounds.windows(2).all(|w| w[0] < w[1]), "bucket bounds ascend");
        Self { bounds, buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(), sum_bits: AtomicU64::new(0f64.to_bits()) }
    }

    /// Records one value (Prometheus buckets are `le`: a value equal to a bound counts in it).
    pub fn observe(&self, value: f64) {
        if value.is_nan() {
            return;
        }
        let index = self.bounds.partition_point(|bound| *bound < value);
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        // Never contended for long: the QUIC thread is the only writer of the object histograms.
        let _ = self.sum_bits.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| Some((f64::from_bits(bits) + value).to_bits()));
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    pub fn sum(&self) -> f64 {
        f64::from_bits(self.sum_bits.load(Ordering::Relaxed))
    }

    /// `# HELP`, `# TYPE` and the `_bucket`/`_sum`/`_count` samples of one metric family, one
    /// histogram per label set (`labels` like `delivery="reliable"`, or empty).
    pub fn render_family(out: &mut String, name: &str, help: &str, series: &[(&str, &Histogram)]) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (labels, h) in series {
            let sep = if labels.is_empty() { "" } else { "," };
            let mut cumulative = 0;
            for (i, bucket) in h.buckets.iter().enumerate() {
                cumulative += bucket.load(Ordering::Relaxed);
                let le = h.bounds.get(i).map_or_else(|| "+Inf".to_owned(), |b| b.to_string());
                let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}");
            }
            let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
            let _ = writeln!(out, "{name}_sum{braces} {}\n{name}_count{braces} {cumulative}", h.sum());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_le_inclusive() {
        let h = Histogram::new(&[1.0, 2.0]);
        for v in [0.5, 1.0, 1.5, 3.0, -4.0] {
            h.observe(v);
        }
        h.observe(f64::NAN);
        assert_eq!(h.count(), 5);
        assert_eq!(h.sum(), 2.0);
        let mut out = String::new();
        Histogram::render_family(&mut out, "x", "help", &[("k=\"v\"", &h)]);
        let expected = "# HELP x help\n# TYPE x histogram\nx_bucket{k=\"v\",le=\"1\"} 3\nx_bucket{k=\"v\",le=\"2\"} 4\nx_bucket{k=\"v\",le=\"+Inf\"} 5\nx_sum{k=\"v\"} 2\nx_count{k=\"v\"} 5\n";
        assert_eq!(out, expected);
    }
}
