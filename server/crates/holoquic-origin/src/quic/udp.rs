//! UDP output in batches: consecutive QUIC packets to the same peer leave in one `sendmsg` with
//! generic segmentation offload (`UDP_SEGMENT`, Linux ≥ 4.18) — one system call and one trip
//! through the network stack for up to `MAX_SEGMENTS` packets, which is where most of the origin's
//! CPU went when every packet had its own `sendto`. Without kernel support (or if the kernel
//! refuses a batch) packets are sent one by one.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// `UDP_SEGMENT` from linux/udp.h (not in the libc crate).
const UDP_SEGMENT: libc::c_int = 103;
/// Packets per batch: the kernel accepts up to 64 segments and 64 KiB per call.
pub const MAX_SEGMENTS: usize = 32;

/// Packets of equal size (the last may be shorter) for one peer, back to back.
#[derive(Debug, Default)]
pub struct Batch {
    pub data: Vec<u8>,
    pub to: Option<SocketAddr>,
    /// Size of every packet but possibly the last.
    pub segment: usize,
    pub count: usize,
}

impl Batch {
    /// Whether a packet of `len` bytes for `to` can join (GSO needs equal sizes and the same
    /// destination; only the last packet may be shorter).
    pub fn accepts(&self, len: usize, to: SocketAddr) -> bool {
        self.count == 0 || (self.to == Some(to) && self.count < MAX_SEGMENTS && len <= self.segment && self.data.len() == self.count * self.segment)
    }

    pub fn push(&mut self, packet: &[u8], to: SocketAddr) {
        if self.count == 0 {
            self.to = Some(to);
            self.segment = packet.len();
        }
        self.data.extend_from_slice(packet);
        self.count += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Full: no more packets can join, whatever their size.
    pub fn is_full(&self) -> bool {
        self.count >= MAX_SEGMENTS || self.data.len() != self.count * self.segment
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.to = None;
        self.segment = 0;
        self.count = 0;
    }
}

pub struct UdpOut {
    pub socket: UdpSocket,
    gso: bool,
}

impl UdpOut {
    pub fn new(socket: UdpSocket) -> Self {
        let gso = supports_gso(&socket);
        tracing::debug!(gso, "UDP output");
        Self { socket, gso }
    }

    /// Sends the batch (GSO when there is more than one packet and the kernel can). `WouldBlock`
    /// means nothing was sent.
    pub fn send(&mut self, batch: &Batch) -> io::Result<()> {
        let Some(to) = batch.to else { return Ok(()) };
        if batch.count > 1 && self.gso {
            match send_segmented(&self.socket, &batch.data, to, batch.segment) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(e),
                // EIO/EINVAL: the device or path cannot segment; send packets one by one from now on.
                Err(e) => {
                    tracing::warn!("UDP GSO failed ({e}); sending packets one by one");
                    self.gso = false;
                }
            }
        }
        for (i, packet) in batch.data.chunks(batch.segment).enumerate() {
            match self.socket.send_to(packet, to) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && i == 0 => return Err(e),
                // The tail of a batch the buffer could not take is dropped like a network loss
                // (rare: only without GSO, which is all-or-nothing).
                Err(e) => tracing::debug!("send_to {to}: {e}"),
            }
        }
        Ok(())
    }
}

/// Whether the socket accepts a `UDP_SEGMENT` option (the kernel supports GSO).
fn supports_gso(socket: &UdpSocket) -> bool {
    let size: libc::c_int = 1200;
    // SAFETY: valid fd, pointer to a c_int of the given length.
    let r = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_UDP,
            UDP_SEGMENT,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return false;
    }
    // Back to "no segmentation" by default; batches ask for it per call.
    let zero: libc::c_int = 0;
    // SAFETY: as above.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_UDP,
            UDP_SEGMENT,
            (&zero as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    true
}

/// One `sendmsg` with a `UDP_SEGMENT` control message: the kernel cuts `data` into `segment`-byte
/// datagrams.
fn send_segmented(socket: &UdpSocket, data: &[u8], to: SocketAddr, segment: usize) -> io::Result<()> {
    let (addr, addr_len) = sockaddr(to);
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: msghdr is plain data; every pointer set below outlives the sendmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&addr as *const libc::sockaddr_storage) as *mut libc::c_void;
    msg.msg_namelen = addr_len;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: the control buffer has room for one cmsg carrying a u16 (CMSG_SPACE above).
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_UDP;
        (*cmsg).cmsg_type = UDP_SEGMENT;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<u16>(), segment as u16);
    }
    // SAFETY: msg is fully initialised and points at live buffers.
    let r = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large enough for either family.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_in fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_in6 fits in sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_batch_arrives_as_separate_datagrams() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let to = receiver.local_addr().unwrap();
        let mut out = UdpOut::new(UdpSocket::bind("127.0.0.1:0").unwrap());
        let mut batch = Batch::default();
        for i in 0..5u8 {
            let len = if i == 4 { 300 } else { 1200 };
            assert!(batch.accepts(len, to));
            batch.push(&vec![i; len], to);
        }
        assert!(batch.is_full(), "a short packet ends the batch");
        assert!(!batch.accepts(100, to));
        out.send(&batch).unwrap();
        let mut buf = [0u8; 2000];
        for i in 0..5u8 {
            let (n, _) = receiver.recv_from(&mut buf).unwrap();
            assert_eq!(n, if i == 4 { 300 } else { 1200 });
            assert!(buf[..n].iter().all(|&b| b == i));
        }
    }

    #[test]
    fn batches_never_mix_destinations_or_grow_packets() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut batch = Batch::default();
        batch.push(&[0; 1000], a);
        assert!(!batch.accepts(1000, b));
        assert!(!batch.accepts(1001, a));
        assert!(batch.accepts(1000, a));
    }
}
