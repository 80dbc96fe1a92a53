//! Tests of one object request, reliable and datagram, driven with bytes and times alone.

use super::*;
use crate::content::ContentStore;
use holoquic_proto::{FecMode, ObjectDatagram};
use raptorq::{Decoder, EncodingPacket, ObjectTransmissionInformation};

struct Fixture {
    dir: std::path::PathBuf,
    loader: Arc<Loader>,
    budget: Arc<ByteBudget>,
    loads: Arc<ByteBudget>,
}

impl Fixture {
    fn new(object: &[u8]) -> Self {
        Self::with_budgets(object, 1 << 30, 1 << 30)
    }
    /// With `held` object bytes for the origin and `connection` for the connection.
    fn with_budgets(object: &[u8], held: u64, connection: u64) -> Self {
        let dir = std::env::temp_dir().join(format!("holoquic-delivery-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(dir.join("d")).unwrap();
        std::fs::write(dir.join("d/obj"), object).unwrap();
        let store = Arc::new(ContentStore::open(&dir, 1 << 24).unwrap());
        Self { dir, loader: Loader::new(store, 64, held).unwrap(), budget: ByteBudget::new(connection), loads: ByteBudget::new(1 << 20) }
    }
    fn env(&self) -> RequestEnv<'_> {
        RequestEnv {
            loader: &self.loader,
            connection_budget: &self.budget,
            connection_loads: &self.loads,
            draining: false,
            symbol_size: Some(1200),
            datagram_prefix: &[0x00],
            may_start: true,
            id_in_use: &|_| false,
        }
    }
}

/// Bytes read from the stream, then the loop's rounds until the loader's workers have done
/// what they were asked (reading the object, building encoders for repair).
fn feed(s: &mut RequestStream, data: &[u8], fin: bool, now: Instant, env: &RequestEnv<'_>) {
    s.on_data(data, fin, now, env);
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.is_loading() || s.waits_for_encoders() {
        assert!(Instant::now() < deadline, "the loader never answered");
        std::thread::sleep(Duration::from_micros(200));
        s.on_time(now);
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn request(delivery: Delivery, fec: FecMode, path: &str) -> Vec<u8> {
    let mut out = Vec::new();
    Message::Request(Request {
        request_id: 9,
        delivery,
        urgency: 2,
        deadline_ms: 0,
        fec_mode: fec,
        loss_ppm: 50_000,
        burst_milli: 2000,
        overhead_permille: 100,
        path: path.into(),
    })
    .encode(&mut out);
    out
}

fn messages(bytes: &[u8]) -> Vec<Message> {
    let mut rest = bytes;
    let mut out = Vec::new();
    while let Ok((m, used)) = Message::decode(rest) {
        out.push(m);
        rest = &rest[used..];
    }
    out
}

fn drain(stream: &mut RequestStream) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let chunk = stream.pending().to_vec();
        if chunk.is_empty() {
            return all;
        }
        all.extend_from_slice(&chunk);
        stream.wrote(chunk.len());
    }
}

#[test]
fn reliable_sends_response_then_bytes_then_fin() {
    let object: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Reliable, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    let bytes = drain(&mut s);
    let (m, used) = Message::decode(&bytes).unwrap();
    assert_eq!(m, Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: 5000 } }));
    assert_eq!(&bytes[used..], &object[..]);
    assert_eq!(s.ending, Ending::Fin);
    assert!(s.is_done());
}

#[test]
fn datagram_symbols_decode_with_losses_and_repair_on_demand() {
    let object: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    let head = drain(&mut s);
    let Message::Response(Response { status: 200, body: ResponseBody::Datagram { oti, source_symbols, planned_repair, .. } }) = messages(&head)[0].clone()
    else {
        panic!()
    };
    assert_eq!(planned_repair, 0);
    assert_eq!(s.outcome().source_symbols, source_symbols);
    let mut decoder = Decoder::new(ObjectTransmissionInformation::deserialize(&oti));
    // Lose every 10th datagram: without FEC the object cannot be decoded …
    let mut n = 0;
    let mut result = None;
    while let Some(d) = s.peek_datagram() {
        let dg = ObjectDatagram::decode(&d[1..]).unwrap();
        assert_eq!(dg.request_id, 9);
        if n % 10 != 3 {
            result = result.or(decoder.decode(EncodingPacket::deserialize(dg.packet)));
        }
        n += 1;
        s.datagram_sent(0);
        s.on_departed(0);
    }
    assert_eq!(n, source_symbols);
    assert!(result.is_none());
    assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { .. }]));
    // … until repair symbols are asked for.
    let mut repair = Vec::new();
    Message::Repair { symbols: 12 }.encode(&mut repair);
    feed(&mut s, &repair, false, Instant::now(), &f.env());
    while let Some(d) = s.peek_datagram() {
        result = result.or(decoder.decode(EncodingPacket::deserialize(ObjectDatagram::decode(&d[1..]).unwrap().packet)));
        s.datagram_sent(0);
        s.on_departed(0);
    }
    assert_eq!(result.as_deref(), Some(&object[..]));
    assert_eq!(s.outcome().repair_requests, 1);
    // Client FIN: END(completed) and FIN.
    feed(&mut s, &[], true, Instant::now(), &f.env());
    let end = messages(&drain(&mut s));
    assert!(matches!(end[..], [Message::Sent { .. }, Message::End { reason: EndReason::Completed, .. }]), "{end:?}");
    assert!(s.is_done());
}

#[test]
fn symbols_moved_to_the_stream_decode_with_the_datagrams_and_count_as_sent() {
    let object: Vec<u8> = (0..30_000u32).map(|i| (i * 13) as u8).collect();
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    let Message::Response(Response { body: ResponseBody::Datagram { oti, source_symbols, .. }, .. }) = messages(&drain(&mut s))[0].clone() else { panic!() };
    let mut decoder = Decoder::new(ObjectTransmissionInformation::deserialize(&oti));
    let mut result = None;
    let (mut by_datagram, mut by_stream) = (0, 0);
    // Every third symbol goes on the stream, one of them after its datagram was built.
    for n in 0.. {
        if n == 4 {
            assert!(s.peek_datagram().is_some());
        }
        if n % 3 == 1 {
            if !s.symbol_to_stream() {
                break;
            }
            by_stream += 1;
            let [Message::Symbol { packet }] = &messages(&drain(&mut s))[..] else { panic!("one SYMBOL") };
            result = result.or(decoder.decode(EncodingPacket::deserialize(packet)));
            continue;
        }
        let Some(d) = s.peek_datagram() else { break };
        result = result.or(decoder.decode(EncodingPacket::deserialize(ObjectDatagram::decode(&d[1..]).unwrap().packet)));
        by_datagram += 1;
        s.datagram_sent(0);
    }
    assert_eq!(by_datagram + by_stream, source_symbols);
    assert!(by_stream > 0);
    assert_eq!(result.as_deref(), Some(&object[..]));
    s.on_departed(0);
    let [Message::Sent { symbols_sent, .. }] = messages(&drain(&mut s))[..] else { panic!("SENT") };
    assert_eq!(symbols_sent, source_symbols);
    // Nothing left to move, and nothing moves once the request has ended.
    assert!(!s.symbol_to_stream());
    feed(&mut s, &[], true, Instant::now(), &f.env());
    assert!(!s.symbol_to_stream());
}

#[test]
fn sent_waits_until_the_datagrams_left_the_connection() {
    let f = Fixture::new(&vec![3u8; 5000]);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    drain(&mut s);
    let mut handed = 100;
    while s.peek_datagram().is_some() {
        handed += 1;
        s.datagram_sent(handed);
    }
    s.on_departed(handed - 1);
    assert!(drain(&mut s).is_empty(), "the last datagram is still queued in QUIC");
    s.on_departed(handed);
    assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { .. }]));
    // The end of the request asks for its leftovers in QUIC's queue to be dropped.
    feed(&mut s, &[], true, Instant::now(), &f.env());
    let header = s.take_purge().expect("purge after END");
    assert_eq!(header, vec![0x00, 9]);
    assert!(s.take_purge().is_none());
}

#[test]
fn repair_on_demand_stops_at_the_budget() {
    let object = vec![3u8; 60_000];
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    // No deadline and no FEC: nothing else would ever bound what REPAIR queues.
    feed(&mut s, &request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    let Message::Response(Response { body: ResponseBody::Datagram { source_symbols, .. }, .. }) = messages(&drain(&mut s))[0].clone() else { panic!() };
    let k = source_symbols as u32;
    let mut flood = Vec::new();
    for _ in 0..1000 {
        Message::Repair { symbols: 65_535 }.encode(&mut flood);
    }
    feed(&mut s, &flood, false, Instant::now(), &f.env());
    let mut sent = 0u32;
    while s.peek_datagram().is_some() {
        s.datagram_sent(0);
        sent += 1;
    }
    assert_eq!(sent, k + repair_budget(k), "source symbols plus the repair budget, however much was asked");
    s.on_departed(0);
    let msgs = messages(&drain(&mut s));
    assert!(matches!(msgs.last(), Some(Message::Sent { symbols_sent, .. }) if *symbols_sent == u64::from(sent)), "{msgs:?}");
    assert_eq!(s.outcome().repair_requests, 1000);
    assert_eq!(s.outcome().repair_symbols, u64::from(repair_budget(k)));
    // Asking again adds nothing, and SENT says so.
    let mut again = Vec::new();
    Message::Repair { symbols: 5 }.encode(&mut again);
    feed(&mut s, &again, false, Instant::now(), &f.env());
    assert!(s.peek_datagram().is_none());
    s.on_departed(0);
    assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { symbols_sent, .. }] if symbols_sent == u64::from(sent)));
}

#[test]
fn a_stopped_request_is_done_at_once_and_counted_as_cancelled() {
    let f = Fixture::new(&vec![1u8; 60_000]);
    for delivery in [Delivery::Datagram, Delivery::Reliable] {
        let mut s = RequestStream::new(4, 0, Instant::now());
        feed(&mut s, &request(delivery, FecMode::Planned, "/content/d/obj"), false, Instant::now(), &f.env());
        s.on_stopped();
        assert!(s.is_done(), "{delivery:?}");
        assert!(s.outcome().cancelled, "{delivery:?}");
        assert!(s.peek_datagram().is_none());
    }
    // Stopped after it ended on its own: not a cancel.
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Reliable, FecMode::None, "/content/d/missing"), false, Instant::now(), &f.env());
    s.on_stopped();
    assert!(!s.outcome().cancelled);
}

#[test]
fn planned_fec_queues_repair_up_front() {
    let object = vec![1u8; 60_000];
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Datagram, FecMode::Planned, "/content/d/obj"), false, Instant::now(), &f.env());
    let Message::Response(Response { body: ResponseBody::Datagram { source_symbols, planned_repair, .. }, .. }) = messages(&drain(&mut s))[0].clone() else {
        panic!()
    };
    assert!(planned_repair >= 2, "5 % bursty loss needs repair");
    let mut count = 0;
    while s.peek_datagram().is_some() {
        s.datagram_sent(0);
        s.on_departed(0);
        count += 1;
    }
    assert_eq!(count, source_symbols + planned_repair);
}

#[test]
fn errors_are_answered_with_a_status() {
    let f = Fixture::new(b"x");
    let status = |bytes: &[u8], env: &RequestEnv<'_>| {
        let mut s = RequestStream::new(4, 0, Instant::now());
        feed(&mut s, bytes, false, Instant::now(), env);
        match messages(&drain(&mut s)).first() {
            Some(Message::Response(r)) => r.status,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/missing"), &f.env()), 404);
    assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/../etc/passwd"), &f.env()), 400);
    assert_eq!(status(&[0x02, 0x01, 0x05], &f.env()), 400);
    assert_eq!(status(&[0x01, 0x02, 0xff, 0xff], &f.env()), 400);
    let busy = RequestEnv { may_start: false, ..f.env() };
    assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &busy), 429);
    let dup = RequestEnv { id_in_use: &|id| id == 9, ..f.env() };
    assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &dup), 400);
    let no_datagrams = RequestEnv { symbol_size: None, ..f.env() };
    assert_eq!(status(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), &no_datagrams), 400);
    assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &no_datagrams), 200);
}

#[test]
fn deadline_purges_queued_datagrams() {
    let object = vec![7u8; 50_000];
    let f = Fixture::new(&object);
    let mut s = RequestStream::new(4, 0, Instant::now());
    let mut req = Vec::new();
    Message::Request(Request {
        request_id: 1,
        delivery: Delivery::Datagram,
        urgency: 0,
        deadline_ms: 100,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: "/content/d/obj".into(),
    })
    .encode(&mut req);
    let t0 = Instant::now();
    feed(&mut s, &req, false, t0, &f.env());
    s.datagram_sent(0);
    s.on_departed(0);
    s.on_time(t0 + Duration::from_millis(50));
    assert!(s.has_datagrams());
    s.on_time(t0 + Duration::from_millis(150));
    assert!(!s.has_datagrams());
    let msgs = messages(&drain(&mut s));
    assert!(matches!(msgs.last(), Some(Message::End { reason: EndReason::DeadlinePassed, symbols_sent: 1, purged }) if *purged > 0), "{msgs:?}");
    assert!(s.outcome().deadline_missed);
}

#[test]
fn oversized_garbage_is_refused_with_bounded_buffering() {
    let f = Fixture::new(b"x");
    let mut s = RequestStream::new(4, 0, Instant::now());
    // A REQUEST header announcing a huge body that never completes.
    let mut bytes = vec![0x01, 0x80, 0x10, 0x00, 0x00];
    bytes.extend(std::iter::repeat_n(0u8, 3000));
    feed(&mut s, &bytes, false, Instant::now(), &f.env());
    assert!(matches!(messages(&drain(&mut s))[..], [Message::Response(Response { status: 400, .. })]));
}

/// What a client may put on a request stream, in any order: messages of every type with any
/// field values (including the origin's own), raw bytes, and the passing of time.
#[derive(Debug, Clone)]
enum ClientOp {
    Send(Message),
    Garbage(Vec<u8>),
    /// Let QUIC take up to this many datagrams (and report them on the wire).
    Drain(usize),
    AdvanceMs(u64),
}

fn client_op() -> impl proptest::strategy::Strategy<Value = ClientOp> {
    use proptest::prelude::*;
    let path = prop_oneof![Just("/content/d/obj".to_string()), Just("/content/d/none".to_string()), Just("/content/../x".to_string()), "\\PC{0,40}"];
    let delivery = prop_oneof![Just(Delivery::Reliable), Just(Delivery::Datagram)];
    let fec = prop_oneof![Just(FecMode::None), Just(FecMode::Planned), Just(FecMode::Fixed)];
    let request = (any::<u64>(), delivery, any::<u8>(), 0u64..3000, fec, any::<u32>(), any::<u32>(), any::<u32>(), path).prop_map(
        |(request_id, delivery, urgency, deadline_ms, fec_mode, loss_ppm, burst_milli, overhead_permille, path)| {
            Message::Request(Request { request_id: request_id >> 2, delivery, urgency, deadline_ms, fec_mode, loss_ppm, burst_milli, overhead_permille, path })
        },
    );
    let message = prop_oneof![
        3 => request,
        // Mostly counts the origin takes (1 … 65 535), sometimes ones it must refuse.
        3 => (1u64..=65_535).prop_map(|symbols| Message::Repair { symbols }),
        1 => any::<u64>().prop_map(|symbols| Message::Repair { symbols: symbols >> 2 }),
        1 => Just(Message::Cancel),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Message::Sent { symbols_sent: a.into(), next_esi: b.into() }),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(|packet| Message::Symbol { packet }),
    ];
    prop_oneof![
        6 => message.prop_map(ClientOp::Send),
        1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(ClientOp::Garbage),
        3 => (0usize..200).prop_map(ClientOp::Drain),
        1 => (0u64..1500).prop_map(ClientOp::AdvanceMs),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
    /// Whatever a client sends, in whatever pieces: no panic, the datagrams of a request never
    /// exceed its source symbols plus the repair budget, what waits to be written stays small
    /// (apart from a reliable object's own bytes), and the client's FIN ends the request.
    #[test]
    fn any_client_input_leaves_a_bounded_request(
        start in proptest::option::of((proptest::bool::ANY, 0u8..3)),
        ops in proptest::collection::vec(client_op(), 1..30),
        chunk in 1usize..300,
    ) {
        let object = vec![5u8; 30_000];
        let f = Fixture::new(&object);
        let t0 = Instant::now();
        let mut now = t0;
        let mut s = RequestStream::new(4, 0, t0);
        let mut datagrams = 0u64;
        let mut handed = 0u64;
        let mut bytes = Vec::new();
        let mut fed = 0;
        // Half the cases start with a request that is served, so what follows reaches the
        // running states and not only the refusal of a bad first message.
        if let Some((reliable, fec)) = start {
            let fec_mode = [FecMode::None, FecMode::Planned, FecMode::Fixed][usize::from(fec)];
            let delivery = if reliable { Delivery::Reliable } else { Delivery::Datagram };
            Message::Request(Request { request_id: 1, delivery, urgency: 3, deadline_ms: 0, fec_mode, loss_ppm: 50_000, burst_milli: 2000,
                overhead_permille: 500, path: "/content/d/obj".into() }).encode(&mut bytes);
        }
        for op in ops {
            match op {
                ClientOp::Send(m) => m.encode(&mut bytes),
                ClientOp::Garbage(g) => bytes.extend(g),
                ClientOp::AdvanceMs(ms) => {
                    now += Duration::from_millis(ms);
                    s.on_time(now);
                }
                ClientOp::Drain(n) => {
                    for _ in 0..n {
                        if s.peek_datagram().is_none() {
                            break;
                        }
                        handed += 1;
                        s.datagram_sent(handed);
                        datagrams += 1;
                    }
                    s.on_departed(handed);
                }
            }
            while fed < bytes.len() {
                let end = (fed + chunk).min(bytes.len());
                feed(&mut s, &bytes[fed..end], false, now, &f.env());
                fed = end;
            }
            if !s.has_reliable_body() {
                proptest::prop_assert!(s.pending().len() <= 4096, "{} bytes waiting", s.pending().len());
            }
            let written = s.pending().len().min(chunk);
            s.wrote(written);
        }
        // K = 25 source symbols of 1200 bytes in one block, and a repair budget of 2K = 50.
        proptest::prop_assert!(datagrams <= 75, "{datagrams} datagrams");
        feed(&mut s, &[], true, now, &f.env());
        drain(&mut s);
        proptest::prop_assert!(s.is_done(), "the client's FIN left the request open");
    }
}

/// The RESPONSE status of a request fed to `s` (waiting for the loader).
fn status_of(s: &mut RequestStream) -> u16 {
    match messages(&drain(s)).first() {
        Some(Message::Response(r)) => r.status,
        other => panic!("{other:?}"),
    }
}

#[test]
fn objects_beyond_a_byte_budget_get_503_and_held_bytes_come_back() {
    // The connection may hold 5000 bytes: one 4000-byte object fits, a second does not.
    let f = Fixture::with_budgets(&[1u8; 4000], 1 << 20, 5000);
    let mut first = RequestStream::new(4, 0, Instant::now());
    feed(&mut first, &request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    assert_eq!(status_of(&mut first), 200);
    assert_eq!(f.budget.held(), 4000);
    let mut second = RequestStream::new(8, 0, Instant::now());
    feed(&mut second, &request(Delivery::Reliable, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    assert_eq!(status_of(&mut second), 503);
    assert!(second.outcome().shed && second.is_done());
    drop(first);
    assert_eq!((f.budget.held(), f.loader.held().held()), (0, 0), "an ended request gives its bytes back");
    // The origin's budget refuses the same way.
    let g = Fixture::with_budgets(&[1u8; 4000], 3000, 1 << 20);
    let mut s = RequestStream::new(4, 0, Instant::now());
    feed(&mut s, &request(Delivery::Reliable, FecMode::None, "/content/d/obj"), false, Instant::now(), &g.env());
    assert_eq!(status_of(&mut s), 503);
}

#[test]
fn a_full_loader_queue_gets_503_at_once() {
    let f = Fixture::new(&[1u8; 100]);
    // Block every worker, then fill the queue.
    let gate = Arc::new(std::sync::Mutex::new(()));
    let held = gate.lock().unwrap();
    // The workers take jobs while the queue fills: fill it again once they have all blocked on
    // the gate (a few rounds apart), so the queue stays full when the request comes.
    let mut queued = 0;
    for _ in 0..5 {
        while {
            let gate = Arc::clone(&gate);
            f.loader.try_read(&f.loads, move || drop(gate.lock()))
        } {
            queued += 1;
            assert!(queued < 1000);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A last top-up right before the request.
    while {
        let gate = Arc::clone(&gate);
        f.loader.try_read(&f.loads, move || drop(gate.lock()))
    } {
        queued += 1;
        assert!(queued < 1000);
    }
    let mut s = RequestStream::new(4, 0, Instant::now());
    s.on_data(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
    assert_eq!(status_of(&mut s), 503, "answered at once, without waiting for a worker");
    assert!(s.outcome().shed);
    drop(held);
}

#[test]
fn a_request_waits_silently_for_its_object_and_its_deadline_still_holds() {
    let f = Fixture::new(&[1u8; 100]);
    std::fs::create_dir_all(f.dir.join("slow")).unwrap();
    std::fs::write(f.dir.join("slow/obj"), [2u8; 100]).unwrap();
    let t0 = Instant::now();
    let mut bytes = Vec::new();
    Message::Request(Request {
        request_id: 1,
        delivery: Delivery::Reliable,
        urgency: 0,
        deadline_ms: 200,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: format!("{SLOW_PREFIX}obj"),
    })
    .encode(&mut bytes);
    let mut s = RequestStream::new(4, 0, t0);
    s.on_data(&bytes, true, t0, &f.env());
    assert!(s.is_loading() && s.pending().is_empty(), "nothing is written while the object is read");
    s.on_time(t0 + Duration::from_millis(100));
    assert!(s.is_loading());
    s.on_time(t0 + Duration::from_millis(250));
    assert_eq!(s.ending, Ending::Reset(webtransport_error_to_h3(WT_DEADLINE)), "the deadline passed while the object was read");
    assert!(s.outcome().deadline_missed && s.is_done());
}

#[test]
fn a_stream_without_a_request_is_reset_after_the_timeout() {
    let f = Fixture::new(&[1u8; 100]);
    let t0 = Instant::now();
    let mut silent = RequestStream::new(4, 0, t0);
    let mut partial = RequestStream::new(8, 0, t0);
    let bytes = request(Delivery::Reliable, FecMode::None, "/content/d/obj");
    partial.on_data(&bytes[..5], false, t0, &f.env());
    let mut asked = RequestStream::new(12, 0, t0);
    feed(&mut asked, &bytes, false, t0 + Duration::from_secs(1), &f.env());
    for s in [&mut silent, &mut partial, &mut asked] {
        s.on_time(t0 + REQUEST_TIMEOUT - Duration::from_millis(1));
        assert_eq!(s.ending, Ending::Open, "not yet");
        s.on_time(t0 + REQUEST_TIMEOUT);
    }
    assert_eq!(silent.ending, Ending::Reset(webtransport_error_to_h3(WT_REQUEST_TIMEOUT)));
    assert_eq!(partial.ending, Ending::Reset(webtransport_error_to_h3(WT_REQUEST_TIMEOUT)));
    assert!(silent.is_done() && partial.is_done());
    assert_eq!(status_of(&mut asked), 200, "a request that came in time is served");
}
