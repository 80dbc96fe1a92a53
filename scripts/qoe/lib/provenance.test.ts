import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_STAMP, measuredCommit, stampBuild } from './provenance';

describe('the code a run measured', () => {
  it('is the checkout when the runner built the app, and what the build stamped when it did not', () => {
    const dist = mkdtempSync(join(tmpdir(), 'dist-'));
    expect(measuredCommit(dist, 'bbb', true)).toBe('bbb');
    stampBuild(dist, 'aaa');
    // The checkout moved on to bbb after the app was built from aaa: the run measures aaa.
    expect(measuredCommit(dist, 'bbb', false)).toBe('aaa');
  });

  it('says so when an app built earlier carries no stamp', () => {
    const dist = mkdtempSync(join(tmpdir(), 'dist-'));
    expect(measuredCommit(dist, 'bbb', false)).toBe('bbb (app built earlier from an unrecorded commit)');
    writeFileSync(join(dist, BUILD_STAMP), '\n');
    expect(measuredCommit(dist, 'bbb', false)).toBe('bbb (app built earlier from an unrecorded commit)');
  });
});
