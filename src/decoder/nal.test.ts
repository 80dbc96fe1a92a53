import { describe, expect, it } from 'vitest';
import { accessUnits, codecString, splitLengthPrefixed } from './nal';

/** NAL units behind 4-byte big-endian lengths, as V3C stores video sub-bitstreams. */
function lengthPrefixed(...units: number[][]): Uint8Array {
  return Uint8Array.from(units.flatMap((u) => [0, 0, (u.length >> 8) & 0xff, u.length & 0xff, ...u]));
}

// AVC: SPS (High, level 3.1), PPS, an IDR slice, then a picture of two slices (the second one
// has first_mb_in_slice = 1, i.e. its first slice-header bits are 010).
const sps = [0x67, 0x64, 0x00, 0x1f, 0xac];
const pps = [0x68, 0xee, 0x3c];
const idr = [0x65, 0x88, 0x84];
const slice0 = [0x41, 0x9a, 0x02];
const slice1 = [0x41, 0x40, 0x11];

describe('splitLengthPrefixed', () => {
  it('splits and rejects lengths past the end', () => {
    expect(splitLengthPrefixed(lengthPrefixed(sps, pps)).map((u) => u.length)).toEqual([5, 3]);
    expect(() => splitLengthPrefixed(Uint8Array.from([0, 0, 0, 9, 1, 2]))).toThrow(/past the end/);
    expect(() => splitLengthPrefixed(Uint8Array.from([0, 0]))).toThrow(/truncated/);
  });
});

describe('accessUnits', () => {
  it('groups AVC NAL units into pictures, parameter sets with the key picture', () => {
    const units = accessUnits('avc', lengthPrefixed(sps, pps, idr, slice0, slice1));
    expect(units.map((u) => u.key)).toEqual([true, false]);
    expect(Array.from(units[0].data)).toEqual([0, 0, 0, 1, ...sps, 0, 0, 0, 1, ...pps, 0, 0, 0, 1, ...idr]);
    expect(Array.from(units[1].data)).toEqual([0, 0, 0, 1, ...slice0, 0, 0, 0, 1, ...slice1]);
  });

  it('groups HEVC NAL units by first_slice_segment_in_pic_flag', () => {
    const vps = [0x40, 0x01, 0x0c], hsps = [0x42, 0x01, 0x01], hpps = [0x44, 0x01, 0xc1];
    const cra = [0x2a, 0x01, 0x80], trail0 = [0x02, 0x01, 0x80], trail1 = [0x02, 0x01, 0x40];
    const units = accessUnits('hevc', lengthPrefixed(vps, hsps, hpps, cra, trail0, trail1, trail0));
    expect(units.map((u) => u.key)).toEqual([true, false, false]);
    expect(units.map((u) => u.data.length)).toEqual([28, 14, 7]);
  });
});

describe('codecString', () => {
  it('reads avc1.PPCCLL from the SPS', () => {
    expect(codecString('avc', lengthPrefixed(pps, sps))).toBe('avc1.64001f');
  });

  it('spells HEVC Main 10, level 4 (120), progressive + frame-only constraints', () => {
    // vps id 0, 1 sub-layer, nesting; profile space 0, Main tier, profile 2; compatibility flag 2;
    // constraint bytes 90 00 00 00 00 00; level_idc 120.
    const main10 = [0x42, 0x01, 0x01, 0x02, 0x20, 0x00, 0x00, 0x00, 0x90, 0, 0, 0, 0, 0, 120, 0xa0];
    expect(codecString('hevc', lengthPrefixed(main10))).toBe('hev1.2.4.L120.90');
  });

  it('fails clearly without an SPS', () => {
    expect(() => codecString('avc', lengthPrefixed(pps))).toThrow(/sequence parameter set/);
  });
});
