import { describe, expect, it } from 'vitest';
import { bootstrapSource, needsBootstrap } from './moduleWorker';

describe('where a module worker may start from', () => {
  const page = 'https://app.example/player/index.html';

  it('starts a script of the page origin, a blob: or a data: URL directly', () => {
    expect(needsBootstrap(new URL('https://app.example/assets/w.js'), page)).toBe(false);
    expect(needsBootstrap(new URL('blob:https://app.example/0b1c'), page)).toBe(false);
    expect(needsBootstrap(new URL('data:text/javascript,1'), page)).toBe(false);
  });

  it('bootstraps a script of another origin, and another port is another origin', () => {
    expect(needsBootstrap(new URL('https://cdn.example/holoquic/assets/w.js'), page)).toBe(true);
    expect(needsBootstrap(new URL('https://app.example:8443/assets/w.js'), page)).toBe(true);
  });

  it('has a bootstrap that imports the script by its absolute URL, quoted safely', () => {
    const source = bootstrapSource('https://cdn.example/a"b.js');
    expect(source.split('\n')[0]).toBe('import "https://cdn.example/a\\"b.js";');
    expect(source).toContain('URL.revokeObjectURL(import.meta.url)');
  });
});
