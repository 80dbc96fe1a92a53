import { describe, expect, it } from 'vitest';
import { TransportStateCell } from './state';

describe('TransportStateCell', () => {
  it('starts closed, tells listeners of changes only, and forgets a listener removed', () => {
    const cell = new TransportStateCell();
    expect(cell.current).toBe('closed');
    const heard: string[] = [];
    const stop = cell.listen((s) => heard.push(s));
    cell.set('connecting');
    cell.set('connecting');
    cell.set('connected');
    stop();
    cell.set('reconnecting');
    expect(heard).toEqual(['connecting', 'connected']);
    expect(cell.current).toBe('reconnecting');
  });
});
