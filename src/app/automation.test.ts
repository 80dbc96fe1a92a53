import { describe, expect, it } from 'vitest';
import { playerOptionsFrom, readPageParams } from './automation';

describe('readPageParams', () => {
  it('defaults to the page origin, the demo manifest, qpr-fec, no autoplay, rendering on', () => {
    const p = readPageParams('', 'https://player.example');
    expect(p).toMatchObject({
      origin: 'https://player.example', manifestUrl: 'https://player.example/content/demo/manifest.mpd',
      mode: 'qpr-fec', poseConvention: 'webxr', autoplay: false, render: true,
    });
    expect(p.durationS).toBeUndefined();
  });

  it('reads every parameter of the headless contract', () => {
    const p = readPageParams(
      '?origin=https://10.77.0.1:4433&manifest=/content/s/manifest.mpd&mode=qpr&abr=hybrid&k=1&buffer=2&pose=/p.csv&poseConvention=unity&duration=30&autoplay=1&render=0',
      'http://127.0.0.1:8080',
    );
    expect(p).toMatchObject({
      origin: 'https://10.77.0.1:4433', manifestUrl: 'https://10.77.0.1:4433/content/s/manifest.mpd', mode: 'qpr',
      abr: 'hybrid', reliableCount: 1, bufferTargetS: 2, pose: '/p.csv', poseConvention: 'unity', durationS: 30,
      autoplay: true, render: false,
    });
    expect(playerOptionsFrom(p)).toMatchObject({ mode: 'qpr', reliableCount: 1, bufferTargetS: 2, durationS: 30 });
    expect(readPageParams('?reliability=q75', 'http://x').reliability).toBe('Q75');
    expect(playerOptionsFrom(readPageParams('?buffer=3&volatile-buffer=3', 'http://x'))).toMatchObject({ bufferTargetS: 3, volatileBufferTargetS: 3 });
    expect(playerOptionsFrom(readPageParams('?fec-target=0.7', 'http://x'))).toMatchObject({ fecTarget: 0.7 });
    expect(playerOptionsFrom(readPageParams('?qoe-kept=400', 'http://x'))).toMatchObject({ qoeSegmentsKept: 400 });
  });

  it('names the parameter that is malformed', () => {
    expect(() => readPageParams('?mode=fast', 'http://x')).toThrow(/mode=fast/);
    expect(() => readPageParams('?k=-1', 'http://x')).toThrow(/k=-1/);
    expect(() => readPageParams('?volatile-buffer=0', 'http://x')).toThrow(/volatile-buffer=0/);
    expect(() => readPageParams('?buffer=abc', 'http://x')).toThrow(/buffer=abc/);
    expect(() => readPageParams('?poseConvention=lefty', 'http://x')).toThrow(/poseConvention/);
    expect(() => readPageParams('?reliability=Q101', 'http://x')).toThrow(/reliability=Q101/);
    expect(() => readPageParams('?fec-target=1', 'http://x')).toThrow(/fec-target=1/);
    expect(() => readPageParams('?qoe-kept=1.5', 'http://x')).toThrow(/qoe-kept=1.5/);
  });
});
