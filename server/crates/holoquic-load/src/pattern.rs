//! The request pattern every session plays: per segment, one request per object of the scene,
//! the "in view" ones reliable and the rest datagram objects, with the player's urgencies.
//!
//! Which objects are in view rotates with the session and the segment, so every object is
//! fetched both ways and the load on the origin does not depend on one object's size.

use std::time::Duration;

use holoquic_proto::{Delivery, FecMode, Request};

use crate::scene::Scene;

/// Everything a session needs to issue its requests.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub scene: Scene,
    /// Rung of every request.
    pub quality: usize,
    /// Objects of each segment requested reliably (the first this many of the rotation).
    pub reliable_per_segment: usize,
    /// Segments each session requests.
    pub segments: u64,
    /// Time between two segments' requests: the segment duration.
    pub segment_interval: Duration,
    /// From request to deadline.
    pub deadline: Duration,
    pub fec_mode: FecMode,
    pub loss_ppm: u32,
    pub overhead_permille: u32,
    /// Ask for repair on demand.
    pub repair: bool,
}

impl Pattern {
    /// The requests of segment `k` of session `session` (request ids are set by the session).
    pub fn segment_requests(&self, session: usize, k: u64) -> Vec<Request> {
        let n = self.scene.objects.len();
        (0..n)
            .map(|rank| {
                let object = &self.scene.objects[(session + k as usize + rank) % n];
                let delivery = if rank < self.reliable_per_segment { Delivery::Reliable } else { Delivery::Datagram };
                Request {
                    request_id: 0,
                    delivery,
                    urgency: urgency(delivery, rank),
                    // Reliable objects carry no deadline, as the player sends them: the origin keeps
                    // sending them past it (a late object stalls playback rather than goes missing).
                    deadline_ms: if delivery == Delivery::Datagram { self.deadline.as_millis() as u64 } else { 0 },
                    fec_mode: if delivery == Delivery::Datagram { self.fec_mode } else { FecMode::None },
                    loss_ppm: self.loss_ppm,
                    burst_milli: 0,
                    overhead_permille: if self.fec_mode == FecMode::Fixed { self.overhead_permille } else { 0 },
                    path: object.segment_path(self.quality, k),
                }
            })
            .collect()
    }
}

/// The player's urgency of a request ranked `rank` (0 = most visible) that is not behind
/// (`requestUrgency` in src/player/plan.ts): reliable 0 … 2, datagram 4 … 6.
fn urgency(delivery: Delivery, rank: usize) -> u8 {
    let in_band = rank.min(2) as u8;
    match delivery {
        Delivery::Reliable => in_band,
        Delivery::Datagram => 4 + in_band,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(objects: usize, reliable: usize) -> Pattern {
        let sets: String = (0..objects)
            .map(|i| {
                format!(
                    r#"<AdaptationSet hq:objectId="o{i}"><BaseURL>o{i}/</BaseURL><SegmentTemplate timescale="1" duration="1" startNumber="0" media="$RepresentationID$/$Number$"/><Representation id="0" bandwidth="8"/></AdaptationSet>"#
                )
            })
            .collect();
        let text = format!(r#"<MPD xmlns:hq="urn:holoquic:mpd:2026" mediaPresentationDuration="PT3S"><Period>{sets}</Period></MPD>"#);
        Pattern {
            scene: Scene::parse("/c/m.mpd", &text).unwrap(),
            quality: 0,
            reliable_per_segment: reliable,
            segments: 3,
            segment_interval: Duration::from_secs(1),
            deadline: Duration::from_millis(1500),
            fec_mode: FecMode::Planned,
            loss_ppm: 0,
            overhead_permille: 0,
            repair: true,
        }
    }

    #[test]
    fn in_view_objects_rotate_and_are_reliable_with_the_player_s_urgencies() {
        let p = pattern(4, 2);
        let describe = |session, k| -> Vec<(String, Delivery, u8, u64)> {
            p.segment_requests(session, k).into_iter().map(|r| (r.path, r.delivery, r.urgency, r.deadline_ms)).collect()
        };
        let first = describe(0, 0);
        assert_eq!(first[0], ("/c/o0/0/0".into(), Delivery::Reliable, 0, 0));
        assert_eq!(first[1], ("/c/o1/0/0".into(), Delivery::Reliable, 1, 0));
        assert_eq!(first[2], ("/c/o2/0/0".into(), Delivery::Datagram, 6, 1500));
        assert_eq!(describe(1, 0)[0].0, "/c/o1/0/0");
        assert_eq!(describe(0, 1)[0].0, "/c/o1/0/1");
        assert!(pattern(4, 0).segment_requests(0, 0).iter().all(|r| r.delivery == Delivery::Datagram));
    }
}
