//! The loader: worker threads that do, for the QUIC loop, what may take long — reading an object
//! from disk, building RaptorQ encoders — so the loop, which paces every connection, never waits
//! on a disk or a CPU-heavy build. Reads and builds have their own workers and queues, so a storm
//! of repair requests (each may need a build of up to a second) never delays another client's
//! reads. Work goes in through a bounded queue (`try_read` / `try_build` refuse when it is full:
//! the request is answered 503 or tries again next round, the loop never blocks on a full queue);
//! each job leaves its result in a [`Ticket`] the request polls on the loop's next round, and
//! wakes the loop through an eventfd so that round comes at once rather than at its next timer.
//!
//! Each connection has its own cap on the jobs it may have queued or running (a [`ByteBudget`]
//! counted in jobs, `--max-queued-loads-per-connection`): one connection asking for many objects
//! at once cannot fill the queue every other connection needs; its excess is refused like a full
//! queue's.
//!
//! Why not a crate: std's `sync_channel` is the bounded queue, and the wake-up has to be a file
//! descriptor the loop's `ppoll` can wait on beside its socket, which no channel crate gives.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use super::budget::{ByteBudget, Reservation};
use crate::content::ContentStore;

/// Read workers: reads mostly wait on the disk, so two overlap.
const READERS: usize = 2;
/// Read workers when the content is in a bucket: each read waits a network round trip to the
/// store (milliseconds, not the disk's microseconds), so more of them overlap.
const BUCKET_READERS: usize = 8;
/// Encoder-building workers: a build is all CPU, and one keeps a core free for the QUIC loop on a
/// small host.
const BUILDERS: usize = 1;

type Job = Box<dyn FnOnce() + Send + 'static>;

/// The worker pools, the origin-wide byte budget, and the content store the jobs read from.
pub struct Loader {
    reads: Lane,
    builds: Lane,
    wake: Arc<Wake>,
    content: Arc<ContentStore>,
    held: Arc<ByteBudget>,
}

/// One bounded queue and its workers.
struct Lane {
    jobs: Mutex<Option<SyncSender<Job>>>,
}

impl Lane {
    fn start(name: &str, workers: usize, queue: usize, wake: &Arc<Wake>) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..workers {
            let (rx, wake) = (Arc::clone(&rx), Arc::clone(wake));
            std::thread::Builder::new().name(format!("quic-{name}-{n}")).spawn(move || loop {
                // The lock is held only while waiting for a job, not while running it.
                let job = match rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok(job) = job else { return }; // the loader was dropped
                                                   // A job that panics drops its ticket unfilled, which its request reads as a
                                                   // failed load (500); the worker goes on.
                if std::panic::catch_unwind(AssertUnwindSafe(job)).is_err() {
                    tracing::error!("a loader job panicked");
                }
                wake.signal();
            })?;
        }
        Ok(Self { jobs: Mutex::new(Some(tx)) })
    }

    /// Queues `job` if `connection` has a job slot left and the queue has room; the slot is
    /// given back when the job has run (or is dropped unrun).
    fn try_run(&self, connection: &Arc<ByteBudget>, job: Job) -> bool {
        let Some(slot) = Reservation::take(1, &[connection]) else { return false };
        let job: Job = Box::new(move || {
            let _slot = slot;
            job();
        });
        let Ok(jobs) = self.jobs.lock() else { return false };
        match jobs.as_ref().map(|tx| tx.try_send(job)) {
            Some(Ok(())) => true,
            Some(Err(TrySendError::Full(_) | TrySendError::Disconnected(_))) | None => false,
        }
    }

    /// Closing the queue ends the workers once they finish what they run.
    fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
    }
}

impl Loader {
    /// Starts the workers; at most `queue` jobs wait in each lane (beyond that `try_read` and
    /// `try_build` refuse), and requests may hold at most `max_held_bytes` object bytes in all.
    pub fn new(content: Arc<ContentStore>, queue: usize, max_held_bytes: u64) -> std::io::Result<Arc<Self>> {
        let wake = Arc::new(Wake::new()?);
        let readers = if content.is_remote() { BUCKET_READERS } else { READERS };
        let reads = Lane::start("reader", readers, queue, &wake)?;
        let builds = Lane::start("builder", BUILDERS, queue, &wake)?;
        Ok(Arc::new(Self { reads, builds, wake, content, held: ByteBudget::new(max_held_bytes) }))
    }

    /// Queues a read for a reader; false when the queue is full (or the loader stopped) or
    /// `connection` has as many jobs queued or running as it may.
    pub fn try_read(&self, connection: &Arc<ByteBudget>, job: impl FnOnce() + Send + 'static) -> bool {
        self.reads.try_run(connection, Box::new(job))
    }

    /// Queues an encoder build for a builder; false when the queue is full or `connection` has
    /// no job slot left.
    pub fn try_build(&self, connection: &Arc<ByteBudget>, job: impl FnOnce() + Send + 'static) -> bool {
        self.builds.try_run(connection, Box::new(job))
    }

    pub fn content(&self) -> &Arc<ContentStore> {
        &self.content
    }

    /// The origin-wide budget of object bytes held by requests.
    pub fn held(&self) -> &Arc<ByteBudget> {
        &self.held
    }

    /// The descriptor that turns readable when a job has finished (see `clear_wake`).
    pub fn wake_fd(&self) -> RawFd {
        self.wake.fd.as_raw_fd()
    }

    /// Re-arms the wake-up after the loop woke for it.
    pub fn clear_wake(&self) {
        self.wake.clear();
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.reads.close();
        self.builds.close();
    }
}

/// An eventfd: workers add to it, the loop's `ppoll` sees it readable, the loop reads it back to 0.
struct Wake {
    fd: OwnedFd,
}

impl Wake {
    fn new() -> std::io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a non-negative result is a new descriptor we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nobody else.
        Ok(Self { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd. A full counter (never, in
        // practice) only means the loop is already due to wake.
        unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64; EAGAIN (nothing signalled) is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut count as *mut u64).cast(), 8) };
    }
}

/// Where a job leaves its result for the request that queued it. The request holds one `Arc`,
/// the job the other: when the request ends first, the job sees it is alone and skips its work;
/// when the job ends without a result (it panicked), the request sees it is alone and unfilled.
pub struct Ticket<T> {
    result: Mutex<Option<T>>,
}

/// What the request sees when it polls its ticket.
pub enum Poll<T> {
    Pending,
    Ready(T),
    /// The job ended without a result.
    Lost,
}

impl<T> Ticket<T> {
    pub fn new() -> Arc<Self> {
        Arc::new(Self { result: Mutex::new(None) })
    }

    /// The job's side: whether anyone still waits for the result.
    pub fn is_wanted(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1
    }

    pub fn fill(&self, value: T) {
        if let Ok(mut slot) = self.result.lock() {
            *slot = Some(value);
        }
    }

    /// The request's side: the result once there.
    pub fn poll(self: &Arc<Self>) -> Poll<T> {
        // Whether the job is gone is read BEFORE the slot: a job that fills the slot and ends
        // between the two reads is then seen with its result. Read after, a result filled in
        // that instant would be taken for a job that died (a spurious 500 under CPU load).
        let job_gone = Arc::strong_count(self) == 1;
        // Pairs with the release of the job's `Arc` drop, so its fill is visible here.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let taken = self.result.lock().ok().and_then(|mut slot| slot.take());
        match taken {
            Some(value) => Poll::Ready(value),
            None if job_gone => Poll::Lost,
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn loader(queue: usize) -> (Arc<Loader>, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("holoquic-loader-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let content = Arc::new(ContentStore::open(&dir, 1 << 20).unwrap());
        (Loader::new(content, queue, 1 << 20).unwrap(), dir)
    }

    fn unlimited() -> Arc<ByteBudget> {
        ByteBudget::new(u64::MAX)
    }

    fn wait_readable(fd: RawFd, timeout: Duration) -> bool {
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) == 1 }
    }

    #[test]
    fn a_finished_job_fills_its_ticket_and_wakes_the_loop() {
        let (loader, dir) = loader(4);
        let ticket = Ticket::new();
        let theirs = Arc::clone(&ticket);
        assert!(loader.try_read(&unlimited(), move || theirs.fill(42)));
        assert!(wait_readable(loader.wake_fd(), Duration::from_secs(5)), "the wake fd turned readable");
        loader.clear_wake();
        assert!(matches!(ticket.poll(), Poll::Ready(42)));
        assert!(!wait_readable(loader.wake_fd(), Duration::ZERO), "cleared");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A job fills its ticket and ends while the loop polls it: the poll must see the result or
    /// Pending, never Lost (the loop answers Lost with 500). Polled as the loop does, from
    /// another thread, thousands of times; the wrong read order loses some of them.
    #[test]
    fn a_ticket_filled_as_it_is_polled_is_never_lost() {
        const ROUNDS: usize = 20_000;
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Ticket<usize>>>();
        let worker = std::thread::spawn(move || {
            for (n, ticket) in rx.iter().enumerate() {
                ticket.fill(n);
            }
        });
        let mut lost = 0;
        for n in 0..ROUNDS {
            let ticket = Ticket::new();
            tx.send(Arc::clone(&ticket)).unwrap();
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match ticket.poll() {
                    Poll::Ready(got) => break assert_eq!(got, n),
                    Poll::Lost => break lost += 1,
                    Poll::Pending => assert!(Instant::now() < deadline, "the worker never filled ticket {n}"),
                }
            }
        }
        drop(tx);
        worker.join().unwrap();
        assert_eq!(lost, 0, "tickets filled while polled were read as lost");
    }

    #[test]
    fn a_full_queue_refuses_and_a_panicking_job_loses_its_ticket() {
        let (loader, dir) = loader(1);
        let any = unlimited();
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        // Every reader blocks on the gate and one more job fills the queue: the next is refused.
        let mut queued = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while queued < READERS + 1 {
            let gate = Arc::clone(&gate);
            if loader.try_read(&any, move || drop(gate.lock())) {
                queued += 1;
            } else {
                assert!(Instant::now() < deadline, "the readers never took their jobs");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert!(!loader.try_read(&any, || {}), "the queue is full");
        assert!(loader.try_build(&any, || {}), "builds have their own queue");
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(5);
        let ticket = loop {
            let ticket: Arc<Ticket<u32>> = Ticket::new();
            let theirs = Arc::clone(&ticket);
            if loader.try_read(&any, move || {
                let _keep = theirs;
                panic!("injected");
            }) {
                break ticket;
            }
            assert!(Instant::now() < deadline, "the queue never drained");
            std::thread::sleep(Duration::from_millis(1));
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !matches!(ticket.poll(), Poll::Lost) {
            assert!(Instant::now() < deadline, "the lost job was not noticed");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_connection_at_its_cap_is_refused_while_others_are_served_and_its_slots_come_back() {
        let (loader, dir) = loader(64);
        let (greedy, other) = (ByteBudget::new(2), ByteBudget::new(2));
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        for _ in 0..2 {
            let gate = Arc::clone(&gate);
            assert!(loader.try_read(&greedy, move || drop(gate.lock())));
        }
        assert!(!loader.try_read(&greedy, || {}), "a third job of one connection is refused");
        assert!(!loader.try_build(&greedy, || {}), "builds count against the same cap");
        assert!(loader.try_read(&other, || {}), "another connection still gets in");
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(5);
        while greedy.held() > 0 {
            assert!(Instant::now() < deadline, "the slots were not given back");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(loader.try_read(&greedy, || {}), "done jobs free their slots");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
