import { describe, expect, it } from 'vitest';
import { parseOriginConfig } from './originConfig';

const URL_ = 'https://origin.test:4433/config.json';
const HASH = 'ab'.repeat(32);

describe('parseOriginConfig', () => {
  it('reads the session URL and the pinned hashes as bytes', () => {
    const c = parseOriginConfig({ webtransportUrl: 'https://origin.test:4433/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH }], contentBase: '/content/' }, URL_);
    expect(c.webtransportUrl).toBe('https://origin.test:4433/holoquic');
    expect(c.certificateHashes).toHaveLength(1);
    expect([...c.certificateHashes[0].value]).toEqual(new Array(32).fill(0xab));
  });

  it('takes a configuration without hashes (PKI certificate)', () => {
    expect(parseOriginConfig({ webtransportUrl: 'https://origin.test/holoquic' }, URL_).certificateHashes).toEqual([]);
  });

  it('lists the one endpoint when the origin names no others', () => {
    const c = parseOriginConfig({ webtransportUrl: 'https://a.test/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH }] }, URL_);
    expect(c.endpoints.map((e) => [e.url, e.certificateHashes.length])).toEqual([['https://a.test/holoquic', 1]]);
  });

  it('reads every endpoint of webtransportEndpoints, in order, each with its own hashes', () => {
    const c = parseOriginConfig({
      webtransportUrl: 'https://a.test/holoquic', certificateHashes: [],
      webtransportEndpoints: [{ url: 'https://a.test/holoquic', certificateHashes: [] }, { url: 'https://b.test:4434/holoquic', certificateHashes: [{ algorithm: 'sha-256', value: HASH }] }],
    }, URL_);
    expect(c.endpoints.map((e) => [e.url, e.certificateHashes.length])).toEqual([['https://a.test/holoquic', 0], ['https://b.test:4434/holoquic', 1]]);
    expect(c.webtransportUrl).toBe('https://a.test/holoquic');
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['an empty endpoint list', { webtransportUrl: 'https://o.test/', webtransportEndpoints: [] }, /webtransportEndpoints is not a non-empty list/],
    ['a plain-http endpoint', { webtransportUrl: 'https://o.test/', webtransportEndpoints: [{ url: 'http://b.test/' }] }, /webtransportEndpoints\[0\]\.url .* is not https/],
    ['an endpoint hash too short', { webtransportUrl: 'https://o.test/', webtransportEndpoints: [{ url: 'https://b.test/', certificateHashes: [{ algorithm: 'sha-256', value: 'ab' }] }] }, /webtransportEndpoints\[0\]\.certificateHashes\[0\]\.value/],
    ['null', null, /not a JSON object/],
    ['a list', [], /not a JSON object/],
    ['no session URL', { certificateHashes: [] }, /webtransportUrl is not a string/],
    ['a relative session URL', { webtransportUrl: '/holoquic' }, /is not a URL/],
    ['a plain-http session URL', { webtransportUrl: 'http://origin.test/holoquic' }, /is not https/],
    ['hashes not a list', { webtransportUrl: 'https://o.test/', certificateHashes: HASH }, /not a list/],
    ['another algorithm', { webtransportUrl: 'https://o.test/', certificateHashes: [{ algorithm: 'sha-1', value: HASH }] }, /algorithm/],
    ['a short hash', { webtransportUrl: 'https://o.test/', certificateHashes: [{ algorithm: 'sha-256', value: 'abcd' }] }, /64 hex digits/],
    ['a hash entry that is not an object', { webtransportUrl: 'https://o.test/', certificateHashes: [7] }, /certificateHashes\[0\]/],
  ];
  for (const [name, json, message] of bad) {
    it(`rejects ${name}, naming the URL`, () => {
      expect(() => parseOriginConfig(json, URL_)).toThrow(message);
      expect(() => parseOriginConfig(json, URL_)).toThrow(URL_);
    });
  }
});
