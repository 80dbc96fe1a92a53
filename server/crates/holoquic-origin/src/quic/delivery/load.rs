//! A request waiting for its object. Once the REQUEST is read, a loader worker reads the object
//! and reserves its bytes in the connection's and the origin's budgets; the request polls the
//! result on each round of the loop. While it waits nothing is written on its stream: its
//! RESPONSE comes with the object, and what the client sends meanwhile waits too (REPAIR is
//! applied once the object is there, CANCEL ends the wait). A full loader queue or a full budget
//! is answered 503 (try again), never a wait.

use std::sync::Arc;
#[cfg(test)]
use std::time::Duration;

use bytes::Bytes;
use holoquic_proto::{Delivery, Request};

use super::RequestEnv;
use crate::content::{ContentError, ContentStore};
use crate::quic::budget::{ByteBudget, Reservation};
use crate::quic::loader::{Loader, Ticket};
use crate::quic::symbols::ObjectSymbols;

/// Test-only hook: objects under this prefix take `SLOW_READ` to read, as from a stalled disk.
#[cfg(test)]
pub const SLOW_PREFIX: &str = "/content/slow/";
#[cfg(test)]
pub const SLOW_READ: Duration = Duration::from_millis(1500);
/// Test-only hook: a REQUEST for this path panics on the QUIC thread, in its connection's handling.
#[cfg(test)]
pub const PANIC_PATH: &str = "/content/test-hook/panic";

/// What a waiting request keeps until its object is there.
pub(in crate::quic::delivery) struct Loading {
    pub request: Request,
    pub ticket: Arc<Ticket<Result<Loaded, LoadError>>>,
    pub loader: Arc<Loader>,
    /// The connection's loader-job cap, which the encoder builds of a datagram request count in.
    pub loads: Arc<ByteBudget>,
    /// The datagram prefix of the request (see `RequestStream::datagram_header`).
    pub datagram_header: Vec<u8>,
    /// The client finished its side while the object was read.
    pub client_fin: bool,
    /// Repair symbols per block asked for (REPAIR) while the object was read, if any.
    pub repair: Option<u64>,
}

/// An object read for a request, its bytes reserved.
pub(in crate::quic::delivery) struct Loaded {
    pub object: Bytes,
    /// For a datagram request, the object's symbols (None for an empty object).
    pub symbols: Option<ObjectSymbols>,
    pub held: Reservation,
}

pub(in crate::quic::delivery) enum LoadError {
    Content(ContentError),
    /// The object does not fit the connection's or the origin's byte budget now.
    OverBudget,
}

impl Loading {
    /// Hands the load of `request`'s object to the loader; None when its queue is full or the
    /// connection has as many loads queued as it may.
    pub fn queue(request: Request, env: &RequestEnv<'_>, datagram_header: Vec<u8>) -> Option<Self> {
        let ticket = Ticket::new();
        let theirs = Arc::clone(&ticket);
        let content = Arc::clone(env.loader.content());
        let budgets = [Arc::clone(env.loader.held()), Arc::clone(env.connection_budget)];
        let symbol_size = env.symbol_size.filter(|_| request.delivery == Delivery::Datagram);
        let job_request = request.clone();
        let job = move || {
            // The request ended while this waited in the queue: nobody needs the object.
            if theirs.is_wanted() {
                theirs.fill(load(&content, &job_request, symbol_size, &budgets));
            }
        };
        let queued = env.loader.try_read(env.connection_loads, job);
        let loads = Arc::clone(env.connection_loads);
        queued.then(|| Self { request, ticket, loader: Arc::clone(env.loader), loads, datagram_header, client_fin: false, repair: None })
    }
}

/// The worker's side: reads the object, reserves its bytes, and cuts it into symbols for a
/// datagram request (encoders for repair are built later, on a builder: the source symbols need
/// none and go out first).
fn load(content: &ContentStore, request: &Request, symbol_size: Option<u16>, budgets: &[Arc<ByteBudget>; 2]) -> Result<Loaded, LoadError> {
    #[cfg(test)]
    if request.path.starts_with(SLOW_PREFIX) {
        std::thread::sleep(SLOW_READ);
    }
    let object = content.get(&request.path).map_err(LoadError::Content)?;
    let held = Reservation::take(object.len() as u64, &[&budgets[0], &budgets[1]]).ok_or(LoadError::OverBudget)?;
    let symbols = match symbol_size {
        Some(size) if !object.is_empty() => Some(ObjectSymbols::new(object.clone(), size)),
        _ => None,
    };
    Ok(Loaded { object, symbols, held })
}
