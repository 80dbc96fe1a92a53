//! Byte budgets: how many object bytes requests may hold at once, per connection and for the
//! whole origin. A request reserves its object's length when the object has been read and gives
//! it back when it ends (the reservation is dropped with it); a read that does not fit either
//! budget is answered with 503 instead of growing the origin's memory without bound.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What one connection's requests may hold at once: object bytes
/// (`--max-held-bytes-per-connection`) and loader jobs queued or running
/// (`--max-queued-loads-per-connection`, a budget counted in jobs).
#[derive(Debug, Clone)]
pub struct ConnectionBudgets {
    pub bytes: Arc<ByteBudget>,
    pub loads: Arc<ByteBudget>,
}

impl ConnectionBudgets {
    pub fn new(limits: &crate::config::Limits) -> Self {
        Self { bytes: ByteBudget::new(limits.max_held_bytes_per_connection), loads: ByteBudget::new(limits.max_queued_loads_per_connection as u64) }
    }
}

/// A number of units (bytes, or loader jobs) that reservations may take up to `limit`, shared between threads: the
/// loop's connections reserve through the loader's workers, and reservations are released on
/// whichever thread drops them.
#[derive(Debug)]
pub struct ByteBudget {
    limit: u64,
    held: AtomicU64,
}

impl ByteBudget {
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(Self { limit, held: AtomicU64::new(0) })
    }

    /// Bytes reserved now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }

    /// Takes `bytes` if they fit under the limit (all or nothing).
    fn take(&self, bytes: u64) -> bool {
        self.held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| held.checked_add(bytes).filter(|&total| total <= self.limit)).is_ok()
    }

    fn give_back(&self, bytes: u64) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// Bytes held in every budget it was taken from (a connection's and the origin's), until dropped.
#[derive(Debug)]
pub struct Reservation {
    bytes: u64,
    budgets: Vec<Arc<ByteBudget>>,
}

impl Reservation {
    /// Takes `bytes` from every budget, or from none when one of them has no room.
    pub fn take(bytes: u64, budgets: &[&Arc<ByteBudget>]) -> Option<Self> {
        let mut taken: Vec<Arc<ByteBudget>> = Vec::with_capacity(budgets.len());
        for budget in budgets {
            if !budget.take(bytes) {
                for done in &taken {
                    done.give_back(bytes);
                }
                return None;
            }
            taken.push(Arc::clone(budget));
        }
        Some(Self { bytes, budgets: taken })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        for budget in &self.budgets {
            budget.give_back(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_fit_every_budget_or_take_nothing() {
        let connection = ByteBudget::new(100);
        let origin = ByteBudget::new(150);
        let a = Reservation::take(80, &[&connection, &origin]).unwrap();
        assert!(Reservation::take(30, &[&connection, &origin]).is_none(), "the connection's budget is full");
        assert_eq!((connection.held(), origin.held()), (80, 80), "a refused reservation leaves nothing behind");
        let other = ByteBudget::new(100);
        assert!(Reservation::take(80, &[&other, &origin]).is_none(), "the origin's budget is full");
        assert_eq!(other.held(), 0);
        let b = Reservation::take(70, &[&other, &origin]).unwrap();
        assert_eq!(origin.held(), 150);
        drop(a);
        drop(b);
        assert_eq!((connection.held(), origin.held(), other.held()), (0, 0, 0));
    }
}
