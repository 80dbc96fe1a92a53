import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { multiply, conjugate } from './quaternion';
import { seeded } from '../testing/seeded';
import { parseTrace } from './trace';
import { POSE_DIR } from '../../scripts/viewport/traces';

const CWI_FILE = POSE_DIR + '/cwi_8i_unity/longdress_P01_V1.csv';

/** Camera forward vector: the local forward axis rotated by the orientation. */
function rotate(q: readonly [number, number, number, number], v: [number, number, number]) {
  const r = multiply(multiply(q, [v[0], v[1], v[2], 0]), conjugate(q));
  return [r[0], r[1], r[2]];
}

describe('parseTrace', () => {
  it('parses with and without a header, converting the Unity left-handed frame', () => {
    const body = '0,1,2,3,0.1,0.2,0.3,0.9\n0.5,1,2,4,0,0,0,1\n';
    const raw = parseTrace(`t_seconds,x,y,z,qx,qy,qz,qw\n${body}`, { convention: 'right-handed' });
    const unity = parseTrace(body, { convention: 'unity-left-handed' });
    expect(raw).toHaveLength(2);
    expect(raw[0].position).toEqual([1, 2, 3]);
    expect(unity[0].position).toEqual([1, 2, -3]);
    const n = Math.hypot(0.1, 0.2, 0.3, 0.9);
    expect(unity[0].orientation[0]).toBeCloseTo(-0.1 / n, 12);
    expect(unity[0].orientation[1]).toBeCloseTo(-0.2 / n, 12);
    expect(unity[0].orientation[2]).toBeCloseTo(0.3 / n, 12);
    expect(unity[0].orientation[3]).toBeCloseTo(0.9 / n, 12);
    expect(unity[1].t).toBe(0.5);
  });

  it('names the line of malformed input', () => {
    const head = 't_seconds,x,y,z,qx,qy,qz,qw\n0,0,0,0,0,0,0,1\n';
    const opts = { convention: 'right-handed' as const, source: 'f.csv' };
    expect(() => parseTrace(`${head}1,0,0,0,0,0,1\n`, opts)).toThrow(/^f\.csv:3: expected 8 fields, got 7/);
    expect(() => parseTrace(`${head}1,0,abc,0,0,0,0,1\n`, opts)).toThrow(/^f\.csv:3: column y is not a finite number/);
    expect(() => parseTrace(`${head}0,0,0,0,0,0,0,1\n`, opts)).toThrow(/^f\.csv:3: time 0 s does not increase/);
    expect(() => parseTrace(`${head}1,0,0,0,0,0,0,0\n`, opts)).toThrow(/^f\.csv:3: quaternion is zero/);
    expect(() => parseTrace('time,x,y,z,qx,qy,qz,qw\n', opts)).toThrow(/^f\.csv:1: header/);
  });

  it('converts a real CWI trace so the viewer faces the content at the origin along -Z', () => {
    const poses = parseTrace(readFileSync(CWI_FILE, 'utf8'), { convention: 'unity-left-handed', source: CWI_FILE });
    expect(poses).toHaveLength(549); // rows listed in pose/index.csv
    const first = poses[0];
    // The README: P01 starts at (0.05, 1.79, -1.09) in Unity, looking along Unity +Z toward the origin.
    expect(first.position[0]).toBeCloseTo(0.05, 2);
    expect(first.position[1]).toBeCloseTo(1.787, 2);
    expect(first.position[2]).toBeCloseTo(1.0947, 4);
    // In the right-handed frame the camera looks along its local -Z; that must point back toward the
    // origin (negative world z), matching Unity forward (-0.16, -0.12, 0.98) mirrored in Z.
    const forward = rotate(first.orientation, [0, 0, -1]);
    expect(forward[0]).toBeCloseTo(-0.16, 1);
    expect(forward[1]).toBeCloseTo(-0.12, 1);
    expect(forward[2]).toBeCloseTo(-0.98, 1);
  });
});

describe('parseTrace under fuzzing', () => {
  it('returns finite, time-ordered unit-quaternion poses or an error naming source and line', () => {
    const valid = readFileSync(CWI_FILE, 'utf8').split('\n').slice(0, 40).join('\n');
    const random = seeded(7);
    const alphabet = ',\n\r .-e0123456789xNaInfity#';
    for (let i = 0; i < 3000; i++) {
      let text = valid;
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        const at = Math.floor(random() * text.length);
        const cut = random() < 0.5 ? 1 : Math.floor(random() * 30);
        text = text.slice(0, at) + alphabet[Math.floor(random() * alphabet.length)] + text.slice(at + cut);
      }
      let poses;
      try {
        poses = parseTrace(text, { convention: 'unity-left-handed', source: 'fuzz.csv' });
      } catch (e) {
        expect((e as Error).message, `case ${i}`).toMatch(/^fuzz\.csv:\d+: /);
        continue;
      }
      for (const [k, p] of poses.entries()) {
        expect([p.t, ...p.position, ...p.orientation].every(Number.isFinite), `case ${i} pose ${k}`).toBe(true);
        expect(Math.abs(Math.hypot(...p.orientation) - 1), `case ${i} pose ${k}`).toBeLessThan(1e-9);
        if (k > 0) expect(p.t, `case ${i} pose ${k}`).toBeGreaterThan(poses[k - 1].t);
      }
    }
  });
});
