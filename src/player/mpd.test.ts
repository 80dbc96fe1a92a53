import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loopFileIndex, ManifestError, parseDuration, parseManifest, segmentPath } from './mpd';
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

describe('loop mapping', () => {
  it('ping-pongs as in the doc (N = 4: 0 1 2 3 2 1 0 1 …)', () => {
    const seq = Array.from({ length: 9 }, (_, k) => loopFileIndex({ loopSegments: 4, playMode: 'pingpong' }, k));
    expect(seq).toEqual([0, 1, 2, 3, 2, 1, 0, 1, 2]);
    expect(loopFileIndex({ loopSegments: 1, playMode: 'pingpong' }, 5)).toBe(0);
  });
});

describe('bad manifests get clear errors', () => {
  const example = docExample();
  const cases: [string, string, RegExp][] = [
    ['not XML', '<MPD><Period>', /not well-formed/],
    ['wrong root', '<Foo/>', /expected <MPD>/],
    ['dynamic', example.replace('type="static"', 'type="dynamic"'), /static only/],
    ['no placement', example.replace(/hq:bbox="[^"]*"/, ''), /missing attribute hq:bbox/],
    ['bad rotation', example.replace('hq:rotation="0 0.7071068 0 0.7071068"', 'hq:rotation="0 1 0 1"'), /unit quaternion/],
    ['bad number', example.replace('bandwidth="1200000"', 'bandwidth="fast"'), /bandwidth/],
    ['no template', example.replace(/<SegmentTemplate[\s\S]*?\/>/, ''), /missing SegmentTemplate/],
    ['bad play mode', example.replace('hq:playMode="loop"', 'hq:playMode="shuffle"'), /hq:playMode/],
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
