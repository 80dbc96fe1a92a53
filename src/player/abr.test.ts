import { describe, expect, it } from 'vitest';
import { assignDelivery, priorityGreedy } from './abr';

const rates = [1e6, 2e6, 4e6, 8e6, 16e6];

describe('priorityGreedy', () => {
  it('gives the most visible object the budget first', () => {
    const a = priorityGreedy(
      [
        { objectId: 'far', visibleArea: 0.1, bitrates: rates },
        { objectId: 'near', visibleArea: 0.9, bitrates: rates },
      ],
      10e6,
    );
    expect(a.get('near')).toBe(3);
    expect(a.get('far')).toBe(1); // the 1 Mb/s left over lifts it one step
  });
  it('stays at the lowest quality when the budget is short', () => {
    const a = priorityGreedy([{ objectId: 'o', visibleArea: 1, bitrates: rates }], 0);
    expect(a.get('o')).toBe(0);
  });
  it('rejects bad input with a clear error', () => {
    expect(() => priorityGreedy([{ objectId: 'x', visibleArea: 1, bitrates: [] }], 1)).toThrow(
      /no representations/,
    );
    expect(() => priorityGreedy([], -1)).toThrow(/budget/);
  });
});

describe('assignDelivery', () => {
  const ids = ['a', 'b', 'c', 'd'];
  it('qpr keeps the top half reliable and sends the rest as plain datagrams', () => {
    const d = assignDelivery('qpr', ids);
    expect(ids.map((i) => d.get(i)?.delivery)).toEqual(['reliable', 'reliable', 'datagram', 'datagram']);
    expect(d.get('d')?.fec).toBe(false);
  });
  it('qpr-fec with k=1 protects the datagram objects with FEC', () => {
    const d = assignDelivery('qpr-fec', ids, 1);
    expect(d.get('a')).toEqual({ delivery: 'reliable', fec: false });
    expect(d.get('b')).toEqual({ delivery: 'datagram', fec: true });
  });
  it('q100-fec sends everything as FEC datagrams, qr everything reliable', () => {
    const q100 = assignDelivery('q100-fec', ids);
    expect(ids.map((id) => q100.get(id))).toEqual(ids.map(() => ({ delivery: 'datagram', fec: true })));
    const qr = assignDelivery('qr', ids);
    expect(ids.map((id) => qr.get(id))).toEqual(ids.map(() => ({ delivery: 'reliable', fec: false })));
  });
});
