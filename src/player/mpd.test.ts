import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_WEBTRANSPORT_ENDPOINTS } from '../transport/endpoints';
import { loopFileIndex, ManifestError, parseDuration, parseManifest, segmentPath, WEBTRANSPORT_SCHEME } from './mpd';
import { seeded } from '../testing/seeded';
import { parseXml, XmlError } from './xml';

/** The full example of docs/mpd.md, taken from the document itself so the two cannot drift. */
function docExample(): string {
  const doc = readFileSync(new URL('../../docs/mpd.md', import.meta.url), 'utf8');
  const m = /## Full example\s+```xml\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/mpd.md has no full example');
  return m[1];
}

describe('parseManifest on the docs/mpd.md example', () => {
  const scene = parseManifest(docExample());

  it('reads the scene and the object placement', () => {
    expect(scene.scene).toBe('demo');
    expect(scene.segmentDuration).toBe(1);
    expect(scene.passDuration).toBe(10);
    expect(scene.objects).toHaveLength(1);
    const o = scene.objects[0];
    expect(o.id).toBe('figure-0');
    expect(o.codecs).toBe('v3c1.avc');
    expect(o.position).toEqual([2, 0, 0]);
    expect(o.rotation[3]).toBeCloseTo(0.7071068);
    expect(o.bbox).toEqual({ min: [1.55, 0, -0.45], max: [2.45, 1.85, 0.45] });
    expect(o.loopSegments).toBe(10);
  });

  it('reads the quality ladder in increasing order', () => {
    const ladder = scene.objects[0].representations;
    expect(ladder.map((r) => r.id)).toEqual(['0', '1', '2', '3', '4']);
    expect(ladder.map((r) => r.bandwidth)).toEqual([1_200_000, 2_600_000, 5_000_000, 9_000_000, 16_000_000]);
    expect(ladder[4].avgBandwidth).toBe(14_000_000);
  });

  it('names segments as the doc says (second 23, loop of 10 → file 3)', () => {
    expect(segmentPath(scene.objects[0], '2', 7)).toBe('figure-0/2/seg-00007.v3c');
    expect(segmentPath(scene.objects[0], '2', 23)).toBe('figure-0/2/seg-00003.v3c');
  });
});

describe('WebTransport endpoints in the MPD', () => {
  const example = docExample();
  const withoutEndpoints = example.replace(/\s*<SupplementalProperty [^>]*\/>/g, '');
  const endpoint = (url: string, scheme = WEBTRANSPORT_SCHEME) => `<SupplementalProperty schemeIdUri="${scheme}" value="${url}"/>`;
  const withEndpoints = (...properties: string[]) => withoutEndpoints.replace('</MPD>', `${properties.join('\n')}\n</MPD>`);

  it("reads the example's endpoints in document order", () => {
    expect(parseManifest(example).webtransportEndpoints).toEqual(['https://a.example.net:4433/holoquic', 'https://b.example.net:4433/holoquic']);
  });

  it('gives none when the MPD lists none, and ignores properties of other schemes', () => {
    expect(parseManifest(withoutEndpoints).webtransportEndpoints).toEqual([]);
    expect(parseManifest(withEndpoints(endpoint('https://x.test/', 'urn:example:other'), endpoint('https://c.test/holoquic'))).webtransportEndpoints)
      .toEqual(['https://c.test/holoquic']);
  });

  const bad: [string, string, RegExp][] = [
    ['a plain-http endpoint', withEndpoints(endpoint('http://c.test/holoquic')), /WebTransport endpoint #0: "http:\/\/c.test\/holoquic" is not https/],
    ['a relative endpoint', withEndpoints(endpoint('https://c.test/holoquic'), endpoint('/holoquic')), /WebTransport endpoint #1: "\/holoquic" is not an absolute URL/],
    ['an endpoint without a value', withEndpoints(`<SupplementalProperty schemeIdUri="${WEBTRANSPORT_SCHEME}"/>`), /WebTransport endpoint #0: missing attribute value/],
    ['too many endpoints', withEndpoints(...Array.from({ length: MAX_WEBTRANSPORT_ENDPOINTS + 1 }, (_, i) => endpoint(`https://o${i}.test/holoquic`))), /17 WebTransport endpoints, more than 16/],
  ];
  for (const [name, xml, message] of bad) {
    it(`refuses ${name}`, () => expect(() => parseManifest(xml)).toThrow(message));
  }
});

describe('loop mapping', () => {
  it('ping-pongs as in the doc (N = 4: 0 1 2 3 2 1 0 1 …)', () => {
    const seq = Array.from({ length: 9 }, (_, k) => loopFileIndex({ loopSegments: 4, playMode: 'pingpong' }, k));
    expect(seq).toEqual([0, 1, 2, 3, 2, 1, 0, 1, 2]);
    expect(loopFileIndex({ loopSegments: 1, playMode: 'pingpong' }, 5)).toBe(0);
  });
});

describe('a growing scene (docs/mpd.md → "A growing scene")', () => {
  it('a dynamic MPD is re-read every minimumUpdatePeriod; a static one is final', () => {
    const example = docExample();
    expect(parseManifest(example).updatePeriodS).toBeUndefined();
    const growing = example.replace('type="static"',
      'type="dynamic" minimumUpdatePeriod="PT2S" availabilityStartTime="2026-11-26T12:00:00Z" publishTime="2026-11-26T12:03:00Z"');
    const scene = parseManifest(growing);
    expect(scene.updatePeriodS).toBe(2);
    // Everything else reads as from the static MPD.
    expect({ ...scene, updatePeriodS: undefined }).toEqual({ ...parseManifest(example), updatePeriodS: undefined });
  });
});

describe('bad manifests get clear errors', () => {
  const example = docExample();
  const cases: [string, string, RegExp][] = [
    ['not XML', '<MPD><Period>', /not well-formed/],
    ['wrong root', '<Foo/>', /expected <MPD>/],
    ['dynamic without an update period', example.replace('type="static"', 'type="dynamic"'), /dynamic MPD needs minimumUpdatePeriod/],
    ['an update period of 10 ms', example.replace('type="static"', 'type="dynamic" minimumUpdatePeriod="PT0.01S"'), /minimumUpdatePeriod 0.01 s is outside/],
    ['another type', example.replace('type="static"', 'type="live"'), /neither static nor dynamic/],
    ['no placement', example.replace(/hq:bbox="[^"]*"/, ''), /missing attribute hq:bbox/],
    ['bad rotation', example.replace('hq:rotation="0 0.7071068 0 0.7071068"', 'hq:rotation="0 1 0 1"'), /unit quaternion/],
    ['bad number', example.replace('bandwidth="1200000"', 'bandwidth="fast"'), /bandwidth/],
    ['no template', example.replace(/<SegmentTemplate[\s\S]*?\/>/, ''), /missing SegmentTemplate/],
    ['bad play mode', example.replace('hq:playMode="loop"', 'hq:playMode="shuffle"'), /hq:playMode/],
    ['zero bandwidth', example.replace('bandwidth="1200000"', 'bandwidth="0"'), /bandwidth: must be greater than 0/],
    ['exponent in an integer', example.replace('bandwidth="1200000"', 'bandwidth="1.2e6"'), /not a non-negative integer/],
    ['empty integer', example.replace('startNumber="0"', 'startNumber=""'), /startNumber: not a non-negative integer/],
    ['scale not positive', example.replace('hq:scale="0.0018"', 'hq:scale="-0.0018"'), /hq:scale must be a positive number/],
    ['template without $Number$', example.replace('seg-$Number%05d$.v3c', 'seg.v3c'), /has no \$Number\$/],
    ['duplicate quality rank', example.replace('hq:qualityRank="1"', 'hq:qualityRank="0"'), /share an hq:qualityRank/],
    ['duplicate representation id', example.replace('id="1" hq:qualityRank="1"', 'id="0" hq:qualityRank="1"'), /share an id/],
    ['segments of a millisecond', example.replace('duration="30" startNumber', 'duration="1" startNumber').replace('timescale="30"', 'timescale="1000"'), /segment duration 0.001 s is outside/],
    ['a billion points a frame', example.replace('hq:pointsPerFrame="30000"', 'hq:pointsPerFrame="1000000000"'), /pointsPerFrame 1000000000 is over/],
    ['endless presentation', example.replace('PT10S', `P${'9'.repeat(400)}D`), /positive, finite duration/],
  ];
  for (const [name, xml, message] of cases) {
    it(name, () => expect(() => parseManifest(xml)).toThrow(message));
  }
  it('are ManifestErrors', () => expect(() => parseManifest('<MPD/>')).toThrow(ManifestError));
});

describe('durations and XML', () => {
  it('parses ISO 8601 durations', () => {
    expect(parseDuration('PT10S')).toBe(10);
    expect(parseDuration('PT1M30.5S')).toBe(90.5);
    expect(parseDuration('P1DT1H')).toBe(90_000);
    for (const bad of ['10S', 'P', 'PT', 'PTxS']) expect(() => parseDuration(bad)).toThrow(ManifestError);
  });

  it('handles entities, comments, CDATA and rejects malformed documents', () => {
    const e = parseXml('<?xml version="1.0"?><!-- c --><a x="1 &amp; 2"><b>t&lt;<![CDATA[<raw>]]></b><c/></a>');
    expect(e.attributes.x).toBe('1 & 2');
    expect(e.children.map((c) => c.name)).toEqual(['b', 'c']);
    expect(e.children[0].text).toBe('t<<raw>');
    for (const bad of ['<a>', '<a></b>', '<a x="1" x="2"/>', '<a/><b/>', '<!DOCTYPE a><a/>', '<a>&bogus;</a>', 'text']) {
      expect(() => parseXml(bad), bad).toThrow(XmlError);
    }
    expect(() => parseXml('<a>'.repeat(40) + '</a>'.repeat(40))).toThrow(/nested too deeply/);
  });
});

/** Values a hostile or broken packager could put in any attribute. */
const HOSTILE_VALUES = ['', ' ', '0', '-1', '-0', '0.5', 'NaN', 'Infinity', '1e309', '1e-300', '1e300', '0x10', 'x', '1 2 3',
  '99999999999999999999', '$Number$', '$RepresentationID$', '&amp;', '0 0 0 0', '1 0 0 0 0 0'];
const HOSTILE_CHARS = '<>"=/&; \n0-.e9x$%';

function mutate(source: string, random: () => number): string {
  let text = source;
  const at = () => Math.floor(random() * text.length);
  for (let n = 1 + Math.floor(random() * 4); n > 0; n--) {
    const kind = Math.floor(random() * 4);
    if (kind === 0) {
      const i = at();
      text = text.slice(0, i) + HOSTILE_CHARS[Math.floor(random() * HOSTILE_CHARS.length)] + text.slice(i + 1);
    } else if (kind === 1) {
      const i = at();
      text = text.slice(0, i) + text.slice(i + 1 + Math.floor(random() * 40));
    } else if (kind === 2) {
      const i = at();
      text = text.slice(0, i) + text.slice(i, i + 1 + Math.floor(random() * 200)) + text.slice(i);
    } else {
      const values = [...text.matchAll(/="([^"]*)"/g)];
      if (!values.length) continue;
      const m = values[Math.floor(random() * values.length)];
      const value = HOSTILE_VALUES[Math.floor(random() * HOSTILE_VALUES.length)];
      text = text.slice(0, m.index! + 2) + value + text.slice(m.index! + 2 + m[1].length);
    }
  }
  return text;
}

const finite = (values: number[]) => values.every(Number.isFinite);

/** What the player relies on in a scene model it was given (docs/mpd.md). */
function checkModel(scene: ReturnType<typeof parseManifest>): void {
  expect(scene.segmentDuration > 0 && Number.isFinite(scene.segmentDuration)).toBe(true);
  expect(scene.passDuration > 0 && Number.isFinite(scene.passDuration)).toBe(true);
  expect(scene.objects.length).toBeGreaterThan(0);
  for (const url of scene.webtransportEndpoints ?? []) expect(new URL(url).protocol, url).toBe('https:');
  for (const o of scene.objects) {
    expect(finite([...o.position, ...o.rotation, ...o.bbox.min, ...o.bbox.max]), o.id).toBe(true);
    expect(o.scale > 0 && Number.isFinite(o.scale), `${o.id} scale ${o.scale}`).toBe(true);
    expect(Number.isSafeInteger(o.loopSegments) && o.loopSegments >= 1, `${o.id} loopSegments ${o.loopSegments}`).toBe(true);
    expect(Number.isSafeInteger(o.startNumber), `${o.id} startNumber`).toBe(true);
    expect(o.representations.length).toBeGreaterThan(0);
    expect(new Set(o.representations.map((r) => r.id)).size, `${o.id} representation ids`).toBe(o.representations.length);
    expect(new Set(o.representations.map((r) => r.rank)).size, `${o.id} ranks`).toBe(o.representations.length);
    for (const r of o.representations) {
      expect(Number.isSafeInteger(r.bandwidth) && r.bandwidth > 0, `${o.id}/${r.id} bandwidth ${r.bandwidth}`).toBe(true);
      expect(Number.isSafeInteger(r.avgBandwidth) && r.avgBandwidth > 0, `${o.id}/${r.id} avgBandwidth`).toBe(true);
      expect(Number.isSafeInteger(r.pointsPerFrame), `${o.id}/${r.id} pointsPerFrame`).toBe(true);
      // Distinct timeline segments must name distinct files while the loop lasts.
      const paths = new Set([0, 1].map((k) => segmentPath(o, r.id, k)));
      expect(paths.size, `${o.id} media template ${o.mediaTemplate}`).toBe(Math.min(2, o.loopSegments));
    }
  }
}

describe('parseManifest under fuzzing', () => {
  it('returns a usable scene model or a ManifestError for 4000 mutations of the example', () => {
    const example = docExample();
    const random = seeded(20261124);
    let accepted = 0;
    for (let i = 0; i < 4000; i++) {
      const text = mutate(example, random);
      let scene: ReturnType<typeof parseManifest>;
      try {
        scene = parseManifest(text);
      } catch (e) {
        if (!(e instanceof ManifestError)) throw new Error(`case ${i}: ${String(e)}\n${text}`);
        continue;
      }
      accepted++;
      try {
        checkModel(scene);
      } catch (e) {
        throw new Error(`case ${i} was accepted but is unusable: ${(e as Error).message}\n${text}`);
      }
    }
    // Mutations that touch only ignored text (comments, unknown attributes) still parse.
    expect(accepted).toBeGreaterThan(0);
  });
});
