/**
 * The holoquic MPD profile (docs/mpd.md) read into a scene model: objects, their placement and
 * bounding boxes, quality ladders, the WebTransport endpoints it lists, and how a timeline
 * segment maps to a file path.
 */
import type { SceneModel, SceneObject } from '../model/scene';
import { MAX_WEBTRANSPORT_ENDPOINTS } from '../transport/endpoints';
import { parseXml, XmlError, type XmlElement } from './xml';

export class ManifestError extends Error {
  override name = 'ManifestError';
}


/** Parses an ISO 8601 duration of the form PnDTnHnMnS (the forms MPDs use). */
export function parseDuration(text: string): number {
  const m = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) throw new ManifestError(`invalid duration "${text}"`);
  const [d, h, min, s] = m.slice(1).map((v) => (v ? Number(v) : 0));
  return ((d * 24 + h) * 60 + min) * 60 + s;
}

const child = (e: XmlElement, name: string) => e.children.find((c) => c.name === name);
const children = (e: XmlElement, name: string) => e.children.filter((c) => c.name === name);

function required(e: XmlElement, name: string, where: string): string {
  const v = e.attributes[name];
  if (v === undefined) throw new ManifestError(`${where}: missing attribute ${name}`);
  return v;
}

function numbers(text: string, count: number, what: string): number[] {
  const parts = text.trim().split(/\s+/).map(Number);
  if (parts.length !== count || parts.some((n) => !Number.isFinite(n))) {
    throw new ManifestError(`${what}: expected ${count} numbers, got "${text}"`);
  }
  return parts;
}

/** xs:unsignedInt-like: decimal digits only (no sign, exponent, hex or blanks), safe as a JS number. */
function unsignedInt(text: string, what: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new ManifestError(`${what}: not a non-negative integer: "${text}"`);
  return n;
}

/** The renderer sizes its point pools from this: beyond 2^24 points a frame nothing could draw it. */
const MAX_POINTS_PER_FRAME = 2 ** 24;

function boundedPoints(n: number, what: string): number {
  if (n > MAX_POINTS_PER_FRAME) throw new ManifestError(`${what}: hq:pointsPerFrame ${n} is over ${MAX_POINTS_PER_FRAME}`);
  return n;
}

/**
 * `hq:v3cLevelIdc`, when present: a `ptl_level_idc` (0 … 255). One that names no level the
 * player knows is kept as it is: the player then refuses that Representation (decodable.ts).
 */
function v3cLevel(text: string | undefined, what: string): { v3cLevelIdc?: number } {
  if (text === undefined) return {};
  const idc = unsignedInt(text, what);
  if (idc > 255) throw new ManifestError(`${what}: ${idc} is not a level idc (0 … 255)`);
  return { v3cLevelIdc: idc };
}

function positiveInt(text: string, what: string): number {
  const n = unsignedInt(text, what);
  if (n === 0) throw new ManifestError(`${what}: must be greater than 0`);
  return n;
}

export function parseManifest(xml: string): SceneModel {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (e) {
    if (e instanceof XmlError) throw new ManifestError(`manifest is not well-formed XML: ${e.message}`);
    throw e;
  }
  if (root.name !== 'MPD') throw new ManifestError(`root element is <${root.name}>, expected <MPD>`);
  const updatePeriodS = growingUpdatePeriod(root);
  const periods = children(root, 'Period');
  if (periods.length !== 1) throw new ManifestError(`expected exactly one Period, found ${periods.length}`);
  const passDuration = parseDuration(required(root, 'mediaPresentationDuration', 'MPD'));
  if (!(passDuration > 0 && Number.isFinite(passDuration))) {
    throw new ManifestError(`mediaPresentationDuration must be a positive, finite duration (got ${passDuration} s)`);
  }

  let segmentDuration = 0;
  const objects = children(periods[0], 'AdaptationSet').map((set, index) => {
    const where = `AdaptationSet #${index}`;
    const id = required(set, 'hq:objectId', where);
    const template = child(set, 'SegmentTemplate');
    if (!template) throw new ManifestError(`${where} (${id}): missing SegmentTemplate`);
    const timescale = positiveInt(required(template, 'timescale', id), `${id} timescale`);
    const duration = positiveInt(required(template, 'duration', id), `${id} duration`);
    const seconds = duration / timescale;
    // Requests go a buffer's worth of segments ahead: segments much shorter than a second would
    // multiply them, much longer ones make every switch slow. 0.1 … 60 s covers any sane scene.
    if (!(seconds >= 0.1 && seconds <= 60)) throw new ManifestError(`${id}: segment duration ${seconds} s is outside 0.1 … 60 s`);
    if (segmentDuration && seconds !== segmentDuration) {
      throw new ManifestError(`${id}: segment duration ${seconds} s differs from other objects (${segmentDuration} s)`);
    }
    segmentDuration = seconds;
    const bbox = numbers(required(set, 'hq:bbox', id), 6, `${id} hq:bbox`);
    const rotation = numbers(required(set, 'hq:rotation', id), 4, `${id} hq:rotation`) as [number, number, number, number];
    if (Math.abs(Math.hypot(...rotation) - 1) > 1e-3) throw new ManifestError(`${id}: hq:rotation is not a unit quaternion`);
    const playMode = set.attributes['hq:playMode'] ?? 'loop';
    if (playMode !== 'loop' && playMode !== 'pingpong') throw new ManifestError(`${id}: unknown hq:playMode "${playMode}"`);
    const loopAttr = set.attributes['hq:loopSegments'];
    const loopSegments = loopAttr !== undefined
      ? unsignedInt(loopAttr, `${id} hq:loopSegments`)
      : Math.round(passDuration / seconds);
    if (!(loopSegments >= 1 && Number.isSafeInteger(loopSegments))) throw new ManifestError(`${id}: no segments, or too many (${loopSegments})`);
    const scale = Number(required(set, 'hq:scale', id));
    if (!(scale > 0 && Number.isFinite(scale))) throw new ManifestError(`${id}: hq:scale must be a positive number, got "${set.attributes['hq:scale']}"`);
    const media = required(template, 'media', id);
    // Without $Number$ every segment of the timeline would name the same file.
    if (!/\$Number(%0\d+d)?\$/.test(media)) throw new ManifestError(`${id}: SegmentTemplate@media "${media}" has no $Number$`);
    const representations = children(set, 'Representation').map((r, i) => {
      const rid = required(r, 'id', `${id} Representation #${i}`);
      const bandwidth = positiveInt(required(r, 'bandwidth', `${id}/${rid}`), `${id}/${rid} bandwidth`);
      return {
        id: rid,
        rank: unsignedInt(r.attributes['hq:qualityRank'] ?? String(i), `${id}/${rid} hq:qualityRank`),
        bandwidth,
        avgBandwidth: r.attributes['hq:avgBandwidth'] !== undefined ? positiveInt(r.attributes['hq:avgBandwidth'], `${id}/${rid} hq:avgBandwidth`) : bandwidth,
        pointsPerFrame: boundedPoints(unsignedInt(r.attributes['hq:pointsPerFrame'] ?? '0', `${id}/${rid} hq:pointsPerFrame`), `${id}/${rid}`),
        ...v3cLevel(r.attributes['hq:v3cLevelIdc'], `${id}/${rid} hq:v3cLevelIdc`),
      };
    });
    if (!representations.length) throw new ManifestError(`${id}: no Representation`);
    // Quality indices are positions in the ladder and ids name directories: both must be unique.
    if (new Set(representations.map((r) => r.id)).size !== representations.length) throw new ManifestError(`${id}: two Representations share an id`);
    if (new Set(representations.map((r) => r.rank)).size !== representations.length) throw new ManifestError(`${id}: two Representations share an hq:qualityRank`);
    representations.sort((a, b) => a.rank - b.rank);
    const base = child(set, 'BaseURL')?.text.trim() ?? '';
    return {
      id,
      codecs: set.attributes.codecs ?? '',
      position: numbers(required(set, 'hq:position', id), 3, `${id} hq:position`) as [number, number, number],
      rotation,
      scale,
      bbox: { min: bbox.slice(0, 3) as [number, number, number], max: bbox.slice(3) as [number, number, number] },
      representations,
      loopSegments,
      playMode,
      startNumber: unsignedInt(template.attributes.startNumber ?? '1', `${id} startNumber`),
      mediaTemplate: base + media,
    } satisfies SceneObject;
  });
  if (!objects.length) throw new ManifestError('the Period has no AdaptationSet (no objects)');
  const ids = new Set(objects.map((o) => o.id));
  if (ids.size !== objects.length) throw new ManifestError('two objects share an hq:objectId');
  const webtransportEndpoints = manifestEndpoints(root);
  return {
    scene: root.attributes['hq:scene'] ?? '', segmentDuration, passDuration, objects, webtransportEndpoints,
    ...(updatePeriodS !== undefined ? { updatePeriodS } : {}),
  };
}

/** Shortest and longest re-read period the player accepts (below it a manifest could be polled hard). */
const UPDATE_PERIOD_S = { min: 0.5, max: 600 };

/**
 * A growing scene's manifest (docs/mpd.md → "A growing scene") is `MPD@type="dynamic"` with
 * `minimumUpdatePeriod`: the seconds after which to read it again. Undefined for a static MPD,
 * which never changes. A dynamic MPD without the period would never announce its growth, so it
 * is refused rather than played as if finished.
 */
function growingUpdatePeriod(root: XmlElement): number | undefined {
  const type = root.attributes.type ?? 'static';
  if (type === 'static') return undefined;
  if (type !== 'dynamic') throw new ManifestError(`MPD@type "${type}" is neither static nor dynamic`);
  const text = root.attributes.minimumUpdatePeriod;
  if (text === undefined) throw new ManifestError('a dynamic MPD needs minimumUpdatePeriod (how often to read it again)');
  const seconds = parseDuration(text);
  if (!(seconds >= UPDATE_PERIOD_S.min && seconds <= UPDATE_PERIOD_S.max)) {
    throw new ManifestError(`minimumUpdatePeriod ${seconds} s is outside ${UPDATE_PERIOD_S.min} … ${UPDATE_PERIOD_S.max} s`);
  }
  return seconds;
}

/** `SupplementalProperty@schemeIdUri` of an MPD-level WebTransport endpoint (docs/mpd.md). */
export const WEBTRANSPORT_SCHEME = 'urn:holoquic:webtransport:2026';

/**
 * The session URLs of the MPD's WebTransport `SupplementalProperty`s, in document order: each an
 * absolute https URL (WebTransport has no other scheme), at most `MAX_WEBTRANSPORT_ENDPOINTS`.
 * Properties of other schemes are ignored, as DASH asks of a supplemental descriptor.
 */
function manifestEndpoints(root: XmlElement): string[] {
  const urls = children(root, 'SupplementalProperty')
    .filter((p) => p.attributes.schemeIdUri === WEBTRANSPORT_SCHEME)
    .map((p, i) => {
      const where = `WebTransport endpoint #${i}`;
      const value = required(p, 'value', where).trim();
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        throw new ManifestError(`${where}: "${value}" is not an absolute URL`);
      }
      if (url.protocol !== 'https:') throw new ManifestError(`${where}: "${value}" is not https`);
      return value;
    });
  if (urls.length > MAX_WEBTRANSPORT_ENDPOINTS) throw new ManifestError(`${urls.length} WebTransport endpoints, more than ${MAX_WEBTRANSPORT_ENDPOINTS}`);
  return urls;
}

/** File number (before startNumber) of timeline segment `k` (docs/mpd.md "Loop"). */
export function loopFileIndex(object: Pick<SceneObject, 'loopSegments' | 'playMode'>, k: number): number {
  const n = object.loopSegments;
  if (object.playMode === 'loop' || n === 1) return k % n;
  const period = 2 * n - 2;
  const r = k % period;
  return r < n ? r : period - r;
}

/** Path of timeline segment `k` at `representationId`, relative to the manifest's directory. */
export function segmentPath(object: SceneObject, representationId: string, k: number): string {
  const number = object.startNumber + loopFileIndex(object, k);
  return object.mediaTemplate
    .replaceAll('$RepresentationID$', representationId)
    .replace(/\$Number(?:%0(\d+)d)?\$/g, (_, width: string | undefined) =>
      width ? String(number).padStart(Number(width), '0') : String(number),
    );
}
