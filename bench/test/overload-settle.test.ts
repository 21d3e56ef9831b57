import { settleSeconds } from '../src/overload/settle';

// The settling time the overload section reports: from the change until the sampled limit stays
// within ±25 % of where it ends (the median of the last three eighths after the change).
const series = (from: number, limits: readonly number[]): Array<[number, number]> =>
  limits.map((limit, i) => [from + i * 100, limit]);

describe('settleSeconds', () => {
  it('is the time of the first sample from which the limit stays in the band', () => {
    // 40 before the change at 1000 ms, then 30, 26, 26 (out of 15–25), and 20 for good from 1300 ms.
    const samples = [...series(0, Array(10).fill(40)), ...series(1000, [30, 26, 26, ...Array(13).fill(20)])];
    expect(settleSeconds(samples, 1000, 1600)).toEqual({ seconds: 0.3, final: 20 });
  });

  it('is 0 when the limit never leaves the band', () => {
    const samples = series(0, Array(30).fill(20));
    expect(settleSeconds(samples, 1000, 2000).seconds).toBe(0);
  });

  it('counts a late excursion out of the band', () => {
    const limits = [20, 20, 20, 20, 40, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20];
    expect(settleSeconds(series(1000, limits), 1000, 1600).seconds).toBe(0.5);
  });

  it('is Infinity when the last sample is out of the band', () => {
    const limits = [...Array(15).fill(20), 40];
    expect(settleSeconds(series(1000, limits), 1000, 1600).seconds).toBe(Infinity);
  });
});
