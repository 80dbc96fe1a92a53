import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { SegmentDecoder } from '../model/decoder';
import { keepDecodable } from './decodable';
import { parseManifest } from './mpd';
import { Player } from './player';

/** docs/mpd.md's full example, its five rungs declaring levels 1.0, 1.0, 2.0, 3.0, 3.0 (or `levels`). */
function manifest(levels: (number | undefined)[] = [30, 30, 60, 90, 90]): string {
  const doc = readFileSync(new URL('../../docs/mpd.md', import.meta.url), 'utf8');
  let rung = 0;
  return /## Full example\s+```xml\n([\s\S]*?)```/.exec(doc)![1].replace(/ hq:v3cLevelIdc="\d+"/g, () => {
    const level = levels[rung++];
    return level === undefined ? '' : ` hq:v3cLevelIdc="${level}"`;
  });
}

/** The pool's default: atlases up to 4096 × 4096. */
const DECODES_4096 = 4096 * 4096;

describe('Representations above the level the decoder takes are not chosen (docs/mpd.md, hq:v3cLevelIdc)', () => {
  it('reads each Representation\'s declared level', () => {
    const object = parseManifest(manifest()).objects[0];
    expect(object.representations.map((r) => r.v3cLevelIdc)).toEqual([30, 30, 60, 90, 90]);
    expect(parseManifest(manifest([undefined, 30, 60, 90, 90])).objects[0].representations[0].v3cLevelIdc).toBeUndefined();
    expect(() => parseManifest(manifest([300, 30, 60, 90, 90]))).toThrow(/hq:v3cLevelIdc: 300 is not a level idc/);
  });

  it('cuts the ladder to the levels whose atlases the decoder takes, keeping ids and order', () => {
    const scene = keepDecodable(parseManifest(manifest()), DECODES_4096);
    // Level 3.0 allows 35 651 584 samples (8192 × 4352): more than 4096 × 4096.
    expect(scene.objects[0].representations.map((r) => r.id)).toEqual(['0', '1', '2']);
    // A decoder of 2048² (4 194 304 samples) takes level 1.0 (2 228 224), not 2.0 (8 912 896).
    expect(keepDecodable(parseManifest(manifest()), 2048 * 2048).objects[0].representations.map((r) => r.id)).toEqual(['0', '1']);
  });

  it('keeps Representations of manifests that declare no level, and refuses an unknown level', () => {
    const old = keepDecodable(parseManifest(manifest([undefined, undefined, undefined, undefined, undefined])), DECODES_4096);
    expect(old.objects[0].representations).toHaveLength(5);
    const unknown = keepDecodable(parseManifest(manifest([30, 33, 60, 90, 90])), DECODES_4096);
    expect(unknown.objects[0].representations.map((r) => r.id)).toEqual(['0', '2']);
    // A decoder that says nothing of its atlas limit: nothing is cut.
    expect(keepDecodable(parseManifest(manifest()), undefined).objects[0].representations).toHaveLength(5);
  });

  it('fails with a clear error when no Representation of an object fits', () => {
    expect(() => keepDecodable(parseManifest(manifest([90, 90, 90, 105, 105])), DECODES_4096)).toThrow(
      /figure-0: no Representation this player decodes: every one declares a V3C level \(3\.0: 35651584 samples, 3\.5: 35651584 samples\) allowing atlases larger than the 16777216 samples its decoder takes/,
    );
  });

  it('a Player refuses such a manifest at load, before fetching any segment (served over a real socket)', async () => {
    const asked: string[] = [];
    const server = createServer((request, response) => {
      asked.push(request.url ?? '');
      if (request.url === '/content/demo/manifest.mpd') response.end(manifest([90, 90, 90, 90, 90]));
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const decoder: SegmentDecoder = { maxAtlasSamples: DECODES_4096, decode: () => Promise.reject(new Error('nothing may be decoded')) };
      const player = new Player({ manifestUrl: `http://127.0.0.1:${port}/content/demo/manifest.mpd`, decoder });
      await expect(player.load()).rejects.toThrow(/no Representation this player decodes/);
      expect(player.state).toBe('failed');
      expect(asked).toEqual(['/content/demo/manifest.mpd']);
    } finally {
      server.close();
    }
  });
});
