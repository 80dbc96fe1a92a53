//! The origin's one port for both protocols: UDP for QUIC and TCP for HTTPS on the same number
//! (browsers find HTTP/3 by `Alt-Svc: h3=":PORT"`, and operators open one port). With port 0 the
//! kernel picks a free UDP port, and the TCP port of that number may be taken (a listener, or a
//! client socket of another program): the origin then binds another UDP port and tries again, a
//! few times, rather than failing to start.

use std::net::{SocketAddr, TcpListener, UdpSocket};

use anyhow::{Context, Result};

/// UDP ports tried when `--listen` asks for port 0 and the TCP twin is taken.
pub const PORT_TRIES: usize = 8;

/// Binds UDP on `listen`, then TCP on the same address and port.
pub fn bind_pair(listen: SocketAddr) -> Result<(UdpSocket, TcpListener)> {
    bind_pair_with(listen, TcpListener::bind)
}

/// [`bind_pair`] with the TCP bind given (the tests take a port before binding it).
pub fn bind_pair_with(listen: SocketAddr, mut bind_tcp: impl FnMut(SocketAddr) -> std::io::Result<TcpListener>) -> Result<(UdpSocket, TcpListener)> {
    let mut attempt = 1;
    loop {
        let udp = UdpSocket::bind(listen).with_context(|| format!("binding UDP {listen}"))?;
        let tcp_addr = udp.local_addr()?;
        match bind_tcp(tcp_addr) {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && listen.port() == 0 && attempt < PORT_TRIES => {
                tracing::info!(port = tcp_addr.port(), attempt, "TCP port of the chosen UDP port is taken; choosing another");
                attempt += 1;
            }
            Err(e) => return Err(e).with_context(|| format!("binding TCP {tcp_addr}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_port_0_a_taken_tcp_port_is_skipped() {
        // The first two UDP ports chosen get their TCP twin taken (for real) just before the
        // origin binds it: the third pair is used.
        let mut taken = Vec::new();
        let (udp, tcp) = bind_pair_with("127.0.0.1:0".parse().unwrap(), |addr| {
            if taken.len() < 2 {
                taken.push(TcpListener::bind(addr).expect("the test takes the port first"));
            }
            TcpListener::bind(addr)
        })
        .expect("started after two collisions");
        let port = udp.local_addr().unwrap().port();
        assert_eq!(tcp.local_addr().unwrap().port(), port, "one number for both protocols");
        assert_eq!(taken.len(), 2);
        assert!(taken.iter().all(|t| t.local_addr().unwrap().port() != port));
    }

    #[test]
    fn a_fixed_port_that_is_taken_is_an_error_and_collisions_end_after_the_tries() {
        let holder = TcpListener::bind("127.0.0.1:0").unwrap();
        let fixed = holder.local_addr().unwrap();
        let error = bind_pair(fixed).expect_err("the TCP port is taken");
        assert!(format!("{error:#}").contains("in use"), "{error:#}");
        let mut tries = 0;
        let error = bind_pair_with("127.0.0.1:0".parse().unwrap(), |_| {
            tries += 1;
            Err(std::io::ErrorKind::AddrInUse.into())
        })
        .expect_err("every try collided");
        assert_eq!(tries, PORT_TRIES, "{error:#}");
    }
}
