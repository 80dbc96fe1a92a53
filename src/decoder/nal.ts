/**
 * What WebCodecs needs from a V-PCC video sub-bitstream, which V3C stores as NAL units behind
 * 4-byte big-endian lengths: the units grouped into access units (one `EncodedVideoChunk` per
 * picture, key or delta), each as an Annex-B byte stream (start codes, no `description` needed),
 * and the codec string (`avc1.PPCCLL`, `hev1.…`) read from the sequence parameter set.
 */

export type VideoCodecName = 'avc' | 'hevc';

export interface AccessUnit {
  /** Annex-B bytes of the access unit's NAL units. */
  data: Uint8Array;
  /** Contains an IDR (AVC) or IRAP (HEVC) picture: can start decoding. */
  key: boolean;
}

/** Splits 4-byte length-prefixed NAL units; throws when a length runs past the end. */
export function splitLengthPrefixed(data: Uint8Array): Uint8Array[] {
  const units: Uint8Array[] = [];
  for (let pos = 0; pos < data.length; ) {
    if (data.length - pos < 4) throw new Error('video sub-bitstream: truncated NAL unit length');
    const length = ((data[pos] << 24) | (data[pos + 1] << 16) | (data[pos + 2] << 8) | data[pos + 3]) >>> 0;
    pos += 4;
    if (length === 0 || length > data.length - pos) throw new Error('video sub-bitstream: NAL unit length runs past the end');
    units.push(data.subarray(pos, pos + length));
    pos += length;
  }
  return units;
}

interface NalInfo {
  vcl: boolean;
  /** A VCL unit whose slice starts a new picture. */
  firstSliceOfPicture: boolean;
  /** A non-VCL unit that, after a VCL unit, starts the next access unit. */
  startsAccessUnit: boolean;
  key: boolean;
}

function nalInfo(codec: VideoCodecName, nal: Uint8Array): NalInfo {
  if (codec === 'avc') {
    const type = nal[0] & 0x1f;
    const vcl = type >= 1 && type <= 5;
    // first_mb_in_slice is ue(v): its first bit is 1 exactly when it is 0.
    return {
      vcl,
      firstSliceOfPicture: vcl && nal.length > 1 && (nal[1] & 0x80) !== 0,
      startsAccessUnit: (type >= 6 && type <= 9) || (type >= 14 && type <= 18),
      key: type === 5,
    };
  }
  const type = (nal[0] >> 1) & 0x3f;
  const vcl = type <= 31;
  return {
    vcl,
    // first_slice_segment_in_pic_flag: first bit after the 2-byte header.
    firstSliceOfPicture: vcl && nal.length > 2 && (nal[2] & 0x80) !== 0,
    startsAccessUnit: (type >= 32 && type <= 35) || type === 39 || (type >= 41 && type <= 44) || (type >= 48 && type <= 55),
    key: type >= 16 && type <= 23,
  };
}

/** Groups NAL units into access units (ISO/IEC 14496-10 §7.4.1.2.3, 23008-2 §7.4.2.4.4). */
export function accessUnits(codec: VideoCodecName, lengthPrefixed: Uint8Array): AccessUnit[] {
  const groups: { units: Uint8Array[]; key: boolean; hasVcl: boolean }[] = [];
  let current: { units: Uint8Array[]; key: boolean; hasVcl: boolean } | undefined;
  for (const nal of splitLengthPrefixed(lengthPrefixed)) {
    const info = nalInfo(codec, nal);
    const boundary = current?.hasVcl && ((info.vcl && info.firstSliceOfPicture) || info.startsAccessUnit);
    if (!current || boundary) {
      current = { units: [], key: false, hasVcl: false };
      groups.push(current);
    }
    current.units.push(nal);
    current.hasVcl ||= info.vcl;
    current.key ||= info.key;
  }
  return groups.filter((g) => g.hasVcl).map((g) => ({ data: toAnnexB(g.units), key: g.key }));
}

function toAnnexB(units: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(units.reduce((n, u) => n + 4 + u.length, 0));
  let pos = 0;
  for (const u of units) {
    out.set([0, 0, 0, 1], pos);
    out.set(u, pos + 4);
    pos += 4 + u.length;
  }
  return out;
}

const hex2 = (v: number) => v.toString(16).padStart(2, '0');

/** The RBSP of a NAL unit payload (emulation prevention bytes 00 00 03 → 00 00 removed). */
function rbsp(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  let zeros = 0;
  for (const b of bytes) {
    if (zeros >= 2 && b === 3) {
      zeros = 0;
      continue;
    }
    out.push(b);
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return Uint8Array.from(out);
}

/** The WebCodecs codec string of a stream, from its first sequence parameter set. */
export function codecString(codec: VideoCodecName, lengthPrefixed: Uint8Array): string {
  const units = splitLengthPrefixed(lengthPrefixed);
  if (codec === 'avc') {
    const sps = units.find((u) => (u[0] & 0x1f) === 7);
    if (!sps || sps.length < 4) throw new Error('AVC video sub-bitstream without a sequence parameter set');
    return `avc1.${hex2(sps[1])}${hex2(sps[2])}${hex2(sps[3])}`;
  }
  const sps = units.find((u) => ((u[0] >> 1) & 0x3f) === 33);
  if (!sps) throw new Error('HEVC video sub-bitstream without a sequence parameter set');
  // After the 2-byte header: vps id u(4), max sub layers u(3), nesting u(1), then
  // profile_tier_level: space u(2), tier u(1), profile u(5), 32 compatibility flags, 6 bytes of
  // constraint flags, level u(8) (ISO/IEC 14496-15 Annex E spells the string from these).
  const p = rbsp(sps.subarray(2, 2 + 24));
  if (p.length < 13) throw new Error('HEVC sequence parameter set too short');
  const space = p[1] >> 6, tier = (p[1] >> 5) & 1, profile = p[1] & 0x1f;
  let compat = ((p[2] << 24) | (p[3] << 16) | (p[4] << 8) | p[5]) >>> 0;
  let reversed = 0;
  for (let i = 0; i < 32; i++, compat >>>= 1) reversed = ((reversed << 1) | (compat & 1)) >>> 0;
  const constraints = Array.from(p.subarray(6, 12));
  while (constraints.length && constraints[constraints.length - 1] === 0) constraints.pop();
  const spaceLetter = space ? String.fromCharCode(64 + space) : '';
  return [`hev1.${spaceLetter}${profile}`, reversed.toString(16), `${tier ? 'H' : 'L'}${p[12]}`, ...constraints.map(hex2)].join('.');
}
