//! The scene as the load client plays it: the objects, qualities and segment timing read from a
//! holoquic MPD (docs/mpd.md), and the object path of any timeline segment of any object.
//!
//! Only what a request pattern needs is read — object ids, `BaseURL`, the `SegmentTemplate`, each
//! Representation's id and peak `bandwidth`, `hq:loopSegments` and `hq:playMode` — with the
//! player's defaults for what is optional. Placement and bounding boxes are not needed: which
//! objects are "in view" is the load client's own rotation, not a ranking.

use anyhow::{anyhow, bail, Context, Result};

const HQ_NAMESPACE: &str = "urn:holoquic:mpd:2026";
/// Largest manifest read: the demo's is 7 kB; a runaway file must not fill memory.
pub const MAX_MPD_BYTES: usize = 1 << 20;

/// How the timeline maps onto the distinct segment files (docs/mpd.md → "Loop").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayMode {
    Loop,
    PingPong,
}

/// One quality rung of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Representation {
    pub id: String,
    /// Peak bits per second (DASH `bandwidth`).
    pub bandwidth: u64,
}

/// One object (`AdaptationSet`).
#[derive(Debug, Clone, PartialEq)]
pub struct SceneObject {
    pub id: String,
    /// The object's directory as an origin path, ending in `/` (manifest directory + `BaseURL`).
    pub base: String,
    /// `SegmentTemplate@media`, with `$RepresentationID$` and `$Number$` (or `$Number%0Nd$`).
    pub media: String,
    pub start_number: u64,
    pub loop_segments: u64,
    pub play_mode: PlayMode,
    /// In increasing quality.
    pub representations: Vec<Representation>,
}

/// A scene: its objects and their common segment duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    pub objects: Vec<SceneObject>,
    pub segment_seconds: f64,
}

impl Scene {
    /// Parses the MPD found at origin path `mpd_path` (e.g. `/content/demo/manifest.mpd`);
    /// segment paths are resolved against its directory.
    pub fn parse(mpd_path: &str, text: &str) -> Result<Self> {
        let doc = roxmltree::Document::parse(text).context("the manifest is not well-formed XML")?;
        let dir = &mpd_path[..mpd_path.rfind('/').map_or(0, |i| i + 1)];
        let presentation = doc.root_element().attribute("mediaPresentationDuration").ok_or_else(|| anyhow!("MPD@mediaPresentationDuration is missing"))?;
        let presentation_s =
            iso_duration_seconds(presentation).ok_or_else(|| anyhow!("MPD@mediaPresentationDuration {presentation:?} is not a positive duration"))?;
        let mut objects = Vec::new();
        let mut segment_seconds = None;
        for set in doc.descendants().filter(|n| n.has_tag_name("AdaptationSet")) {
            let id = set.attribute((HQ_NAMESPACE, "objectId")).ok_or_else(|| anyhow!("an AdaptationSet has no hq:objectId"))?.to_owned();
            let what = |attr: &str| format!("object {id}: {attr}");
            let base_url = set.children().find(|n| n.has_tag_name("BaseURL")).and_then(|n| n.text()).unwrap_or("").trim();
            let template = set.children().find(|n| n.has_tag_name("SegmentTemplate")).ok_or_else(|| anyhow!("{}", what("no SegmentTemplate")))?;
            let number = |attr: &str| -> Result<Option<u64>> {
                template.attribute(attr).map(|v| decimal(v).ok_or_else(|| anyhow!("{} {v:?} is not a decimal integer", what(attr)))).transpose()
            };
            let timescale = number("timescale")?.filter(|&v| v > 0).ok_or_else(|| anyhow!("{}", what("SegmentTemplate@timescale missing or 0")))?;
            let duration = number("duration")?.filter(|&v| v > 0).ok_or_else(|| anyhow!("{}", what("SegmentTemplate@duration missing or 0")))?;
            let media = template.attribute("media").ok_or_else(|| anyhow!("{}", what("SegmentTemplate@media missing")))?.to_owned();
            if !media.contains("$Number") {
                bail!("{}", what("SegmentTemplate@media has no $Number$"));
            }
            let seconds = duration as f64 / timescale as f64;
            if !(0.1..=60.0).contains(&seconds) {
                bail!("{}: segments of {seconds} s (0.1 … 60 allowed)", what("SegmentTemplate"));
            }
            match segment_seconds {
                None => segment_seconds = Some(seconds),
                Some(s) if (s - seconds).abs() > 1e-9 => {
                    bail!("{}: segment duration {seconds} s differs from {s} s of the objects before", what("SegmentTemplate"))
                }
                Some(_) => {}
            }
            let loop_segments = match set.attribute((HQ_NAMESPACE, "loopSegments")) {
                Some(v) => decimal(v).filter(|&n| n > 0).ok_or_else(|| anyhow!("{} {v:?} is not a positive integer", what("hq:loopSegments")))?,
                None => ((presentation_s / seconds).round() as u64).max(1),
            };
            let play_mode = match set.attribute((HQ_NAMESPACE, "playMode")).unwrap_or("loop") {
                "loop" => PlayMode::Loop,
                "pingpong" => PlayMode::PingPong,
                other => bail!("{} {other:?} is neither loop nor pingpong", what("hq:playMode")),
            };
            let mut representations = Vec::new();
            for rep in set.children().filter(|n| n.has_tag_name("Representation")) {
                let rep_id = rep.attribute("id").ok_or_else(|| anyhow!("{}", what("a Representation has no id")))?.to_owned();
                let bandwidth = rep.attribute("bandwidth").and_then(decimal).filter(|&b| b > 0);
                let bandwidth =
                    bandwidth.ok_or_else(|| anyhow!("{}", what(&format!("Representation {rep_id}: bandwidth missing or not a positive integer"))))?;
                let rank = rep.attribute((HQ_NAMESPACE, "qualityRank")).and_then(decimal).unwrap_or(representations.len() as u64);
                representations.push((rank, Representation { id: rep_id, bandwidth }));
            }
            if representations.is_empty() {
                bail!("{}", what("no Representation"));
            }
            representations.sort_by_key(|(rank, _)| *rank);
            objects.push(SceneObject {
                base: format!("{dir}{base_url}"),
                media,
                start_number: number("startNumber")?.unwrap_or(1),
                loop_segments,
                play_mode,
                representations: representations.into_iter().map(|(_, r)| r).collect(),
                id,
            });
        }
        let segment_seconds = segment_seconds.ok_or_else(|| anyhow!("the manifest has no AdaptationSet"))?;
        Ok(Self { objects, segment_seconds })
    }

    /// Number of quality rungs every object has (the smallest count over objects).
    pub fn rungs(&self) -> usize {
        self.objects.iter().map(|o| o.representations.len()).min().unwrap_or(0)
    }

    /// Peak bits per second of the whole scene at rung `quality` (clamped to each object's top).
    pub fn peak_bits_per_second(&self, quality: usize) -> u64 {
        self.objects.iter().map(|o| o.rung(quality).bandwidth).sum()
    }
}

impl SceneObject {
    /// The representation at rung `quality`, or the object's highest below it.
    pub fn rung(&self, quality: usize) -> &Representation {
        &self.representations[quality.min(self.representations.len() - 1)]
    }

    /// The file number timeline segment `k` plays (docs/mpd.md → "Loop").
    pub fn file_number(&self, k: u64) -> u64 {
        let n = self.loop_segments;
        let offset = match self.play_mode {
            PlayMode::Loop => k % n,
            PlayMode::PingPong => {
                let period = if n == 1 { 1 } else { 2 * n - 2 };
                let r = k % period;
                if r < n {
                    r
                } else {
                    period - r
                }
            }
        };
        self.start_number + offset
    }

    /// The origin path of timeline segment `k` at rung `quality`.
    pub fn segment_path(&self, quality: usize, k: u64) -> String {
        let number = self.file_number(k);
        let mut media = self.media.replace("$RepresentationID$", &self.rung(quality).id);
        if let Some(start) = media.find("$Number") {
            if let Some(len) = media[start + 1..].find('$') {
                let token = &media[start..start + len + 2];
                let width = token.strip_prefix("$Number%0").and_then(|t| t.strip_suffix("d$")).and_then(|w| w.parse::<usize>().ok()).unwrap_or(0);
                media = media.replacen(token, &format!("{number:0width$}"), 1);
            }
        }
        format!("{}{media}", self.base)
    }
}

/// A decimal integer: digits only (docs/mpd.md → "Parsing rules").
fn decimal(text: &str) -> Option<u64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

/// Seconds of an ISO 8601 duration of the forms the packager writes (`PT10S`, `PT1M30.5S`,
/// `PT1H`); `None` for anything else or a duration that is not positive.
fn iso_duration_seconds(text: &str) -> Option<f64> {
    let mut rest = text.strip_prefix("PT")?;
    let mut total = 0.0;
    while !rest.is_empty() {
        let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let value: f64 = rest[..end].parse().ok()?;
        let unit = match rest.as_bytes()[end] {
            b'H' => 3600.0,
            b'M' => 60.0,
            b'S' => 1.0,
            _ => return None,
        };
        total += value * unit;
        rest = &rest[end + 1..];
    }
    (total > 0.0 && total.is_finite()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mpd(object_attrs: &str, template: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:hq="urn:holoquic:mpd:2026" mediaPresentationDuration="PT4S">
<Period><AdaptationSet id="0" hq:objectId="fig" {object_attrs}><BaseURL>fig/</BaseURL>{template}
<Representation id="1" hq:qualityRank="1" bandwidth="2000"/><Representation id="0" hq:qualityRank="0" bandwidth="1000"/>
</AdaptationSet></Period></MPD>"#
        )
    }

    const TEMPLATE: &str = r#"<SegmentTemplate timescale="30" duration="30" startNumber="0" media="$RepresentationID$/seg-$Number%05d$.v3c"/>"#;

    #[test]
    fn reads_objects_rungs_in_quality_order_and_paths() {
        let scene = Scene::parse("/content/demo/manifest.mpd", &mpd(r#"hq:loopSegments="4" hq:playMode="pingpong""#, TEMPLATE)).unwrap();
        assert_eq!(scene.segment_seconds, 1.0);
        let o = &scene.objects[0];
        assert_eq!(o.representations.iter().map(|r| r.bandwidth).collect::<Vec<_>>(), [1000, 2000]);
        assert_eq!(o.segment_path(1, 0), "/content/demo/fig/1/seg-00000.v3c");
        // Pingpong over 4 files: 0 1 2 3 2 1 0 1 …; a quality above the top is the top.
        let files: Vec<u64> = (0..8).map(|k| o.file_number(k)).collect();
        assert_eq!(files, [0, 1, 2, 3, 2, 1, 0, 1]);
        assert_eq!(o.segment_path(9, 4), "/content/demo/fig/1/seg-00002.v3c");
        assert_eq!(scene.peak_bits_per_second(0), 1000);
    }

    #[test]
    fn defaults_follow_the_player() {
        let template = r#"<SegmentTemplate timescale="24" duration="48" media="$RepresentationID$/$Number$.bin"/>"#;
        let scene = Scene::parse("/m.mpd", &mpd("", template)).unwrap();
        let o = &scene.objects[0];
        assert_eq!((scene.segment_seconds, o.loop_segments, o.start_number, o.play_mode), (2.0, 2, 1, PlayMode::Loop));
        assert_eq!(o.segment_path(0, 3), "/fig/0/2.bin");
    }

    #[test]
    fn bad_manifests_name_what_is_wrong() {
        let err = |text: &str| Scene::parse("/m.mpd", text).unwrap_err().to_string();
        assert!(err("<MPD").contains("XML"));
        assert!(err(&mpd("", "")).contains("no SegmentTemplate"));
        assert!(err(&mpd(r#"hq:playMode="shuffle""#, TEMPLATE)).contains("hq:playMode"));
        assert!(err(&mpd("", &TEMPLATE.replace(r#"timescale="30""#, r#"timescale="-3""#))).contains("timescale"));
        assert!(err(&mpd("", &TEMPLATE.replace("$Number%05d$", "x"))).contains("$Number$"));
        assert!(err(&mpd("", TEMPLATE).replace("PT4S", "P1D")).contains("mediaPresentationDuration"));
    }
}
