//! The relay over real loopback UDP sockets, with a plain UDP echo server as
//! the upstream peer.

use std::time::{Duration, Instant};

use holoquic_impair::loss::LossModel;
use holoquic_impair::relay::Relay;
use holoquic_impair::shaper::Shaper;
use tokio::net::UdpSocket;
use tokio::time::timeout;

async fn echo_server() -> std::net::SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buffer = [0u8; 2048];
        while let Ok((len, from)) = socket.recv_from(&mut buffer).await {
            socket.send_to(&buffer[..len], from).await.unwrap();
        }
    });
    addr
}

/// Reads echoes until each client has been quiet for `quiet`, checking routing.
async fn drain(clients: &[UdpSocket; 2], received: &mut [u64; 2], quiet: Duration) {
    let mut buffer = [0u8; 64];
    for (index, client) in clients.iter().enumerate() {
        while let Ok(Ok((len, _))) = timeout(quiet, client.recv_from(&mut buffer)).await {
            assert_eq!(buffer[0] as usize, index, "echo routed to the wrong client");
            assert_eq!(len, 3);
            received[index] += 1;
        }
    }
}

fn clean(delay_ms: u64) -> Shaper {
    Shaper::new(LossModel::None, Duration::from_millis(delay_ms), None)
}

#[tokio::test]
async fn each_client_gets_its_own_upstream_and_losses_match_the_counters() {
    let upstream = echo_server().await;
    let lossy = Shaper::new(LossModel::uniform(20.0, 11).unwrap(), Duration::ZERO, None);
    let relay = Relay::start("127.0.0.1:0".parse().unwrap(), upstream, lossy, clean(0)).await.unwrap();
    let clients = [UdpSocket::bind("127.0.0.1:0").await.unwrap(), UdpSocket::bind("127.0.0.1:0").await.unwrap()];
    let mut received = [0u64; 2];
    // Small batches keep loopback socket buffers far from full, so every loss
    // comes from the impairer and the counters explain all missing echoes.
    for batch in 0..25u32 {
        for (index, client) in clients.iter().enumerate() {
            for sequence in 0..20u32 {
                let tag = [index as u8, batch as u8, sequence as u8];
                client.send_to(&tag, relay.local_addr).await.unwrap();
            }
        }
        drain(&clients, &mut received, Duration::from_millis(50)).await;
    }
    // Echoes still in flight after the last short drain are counted here.
    drain(&clients, &mut received, Duration::from_millis(500)).await;
    let stats = relay.snapshot();
    assert_eq!(stats.clients, 2);
    assert_eq!(stats.to_upstream.seen, 1000);
    assert_eq!(stats.to_client.dropped_loss, 0);
    assert_eq!(received[0] + received[1], 1000 - stats.to_upstream.dropped_loss);
    assert_eq!(stats.to_client.seen, received[0] + received[1]);
    let loss = stats.to_upstream.dropped_loss as f64 / 1000.0;
    assert!((0.14..0.26).contains(&loss), "uniform 20 % loss measured as {loss}");
}

#[tokio::test]
async fn one_way_delay_applies_in_both_directions() {
    let upstream = echo_server().await;
    let relay = Relay::start("127.0.0.1:0".parse().unwrap(), upstream, clean(30), clean(20)).await.unwrap();
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let started = Instant::now();
    client.send_to(b"ping", relay.local_addr).await.unwrap();
    let mut buffer = [0u8; 16];
    let (len, _) = timeout(Duration::from_secs(5), client.recv_from(&mut buffer)).await.unwrap().unwrap();
    assert_eq!(&buffer[..len], b"ping");
    assert!(started.elapsed() >= Duration::from_millis(50), "round trip {:?}", started.elapsed());
    let stats = relay.snapshot();
    assert_eq!((stats.to_upstream.delayed, stats.to_client.delayed), (1, 1));
}
