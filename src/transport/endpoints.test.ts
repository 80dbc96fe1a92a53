import { describe, expect, it } from 'vitest';
import { MAX_WEBTRANSPORT_ENDPOINTS, mergeEndpoints } from './endpoints';
import { parseOriginConfig } from './originConfig';

const HASH_A = 'aa'.repeat(32);
const HASH_B = 'bb'.repeat(32);

/** A real /config.json answer as the origin writes it, parsed as the session parses it. */
function config(json: unknown) {
  return parseOriginConfig(json, 'https://a.test/config.json');
}

const shape = (list: ReturnType<typeof mergeEndpoints>) => list.map((e) => [e.url, e.certificateHashes.map((h) => h.value[0])]);

describe('mergeEndpoints', () => {
  const origin = config({
    webtransportUrl: 'https://a.test/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH_A }],
    webtransportEndpoints: [
      { url: 'https://a.test/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH_A }] },
      { url: 'https://b.test:4434/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH_B }] },
    ],
  });

  it("puts /config.json's endpoints first, in its order, then the manifest's others pinned like the origin's own", () => {
    const merged = mergeEndpoints(origin, ['https://c.test/holoquic', 'https://d.test/holoquic']);
    expect(shape(merged)).toEqual([
      ['https://a.test/holoquic', [0xaa]], ['https://b.test:4434/holoquic', [0xbb]], ['https://c.test/holoquic', [0xaa]], ['https://d.test/holoquic', [0xaa]],
    ]);
  });

  it("lets /config.json win for an endpoint both list: its place and its pins, compared as URLs", () => {
    // The manifest names b first and a in another spelling (explicit default port, upper case).
    const merged = mergeEndpoints(origin, ['https://B.test:4434/holoquic', 'https://a.test:443/holoquic']);
    expect(shape(merged)).toEqual([['https://a.test/holoquic', [0xaa]], ['https://b.test:4434/holoquic', [0xbb]]]);
  });

  it("uses the manifest's list alone, unpinned, where the host has no /config.json (a static host)", () => {
    expect(shape(mergeEndpoints(null, ['https://a.test/holoquic', 'https://b.test/holoquic']))).toEqual([['https://a.test/holoquic', []], ['https://b.test/holoquic', []]]);
  });

  it('gives no endpoint without /config.json or manifest endpoints (HTTP/2 only)', () => {
    expect(mergeEndpoints(null, [])).toEqual([]);
  });

  it("is /config.json's list unchanged when the manifest lists none", () => {
    expect(mergeEndpoints(origin, [])).toEqual(origin.endpoints);
  });

  it(`keeps at most ${MAX_WEBTRANSPORT_ENDPOINTS} endpoints, the origin's first`, () => {
    const many = Array.from({ length: 40 }, (_, i) => `https://m${i}.test/holoquic`);
    const merged = mergeEndpoints(origin, many);
    expect(merged).toHaveLength(MAX_WEBTRANSPORT_ENDPOINTS);
    expect(merged.slice(0, 3).map((e) => e.url)).toEqual(['https://a.test/holoquic', 'https://b.test:4434/holoquic', 'https://m0.test/holoquic']);
  });
});
