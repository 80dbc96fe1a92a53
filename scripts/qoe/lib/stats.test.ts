import { describe, expect, it } from 'vitest';
import { meanWithInterval, studentCriticalValue, studentTwoSidedCdf } from './stats';

describe('Student t confidence intervals', () => {
  it('gives the tabulated two-sided 95 % critical values', () => {
    // t(0.975, df) from any statistics table.
    const table: Array<[number, number]> = [[1, 12.706], [2, 4.303], [3, 3.182], [4, 2.776], [5, 2.571], [9, 2.262], [10, 2.228], [29, 2.045], [100, 1.984]];
    for (const [df, t] of table) expect(studentCriticalValue(df), `df ${df}`).toBeCloseTo(t, 3);
    // Other confidence levels come from the same distribution: 99 % at df 2, 90 % at df 4.
    expect(studentCriticalValue(2, 0.99)).toBeCloseTo(9.925, 3);
    expect(studentCriticalValue(4, 0.9)).toBeCloseTo(2.132, 3);
  });

  it('has a two-sided CDF that starts at 0, is symmetric, and tends to the normal for many degrees of freedom', () => {
    expect(studentTwoSidedCdf(0, 3)).toBe(0);
    expect(studentTwoSidedCdf(-2, 7)).toBe(studentTwoSidedCdf(2, 7));
    expect(studentTwoSidedCdf(1.959964, 100_000)).toBeCloseTo(0.95, 4);
    expect(() => studentTwoSidedCdf(1, 0)).toThrow(/positive integer/);
    expect(() => studentCriticalValue(3, 1)).toThrow(/confidence/);
  });

  it('is t(0.975, n − 1) standard errors around the mean, none below two values', () => {
    const three = meanWithInterval([1, 2, 3]);
    expect([three.mean, three.sd, three.n]).toEqual([2, 1, 3]);
    expect(three.ci95).toBeCloseTo((4.3027 * 1) / Math.sqrt(3), 3);
    const five = meanWithInterval([10, 12, 11, 13, 9, NaN]); // NaN left out: five values
    expect(five.n).toBe(5);
    expect(five.ci95).toBeCloseTo((2.7764 * Math.sqrt(2.5)) / Math.sqrt(5), 3);
    const one = meanWithInterval([4]);
    expect([one.mean, one.n, one.sd]).toEqual([4, 1, 0]);
    expect(one.ci95).toBeNaN();
    expect(meanWithInterval([]).n).toBe(0);
    expect(meanWithInterval([5, 5, 5]).ci95).toBe(0);
  });
});
