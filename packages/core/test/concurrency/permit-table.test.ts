import { PermitTable } from '../../src/concurrency/permit-table';
import { heapUsed, longKey, MB, slicedKey } from '../harness/heap';

describe('PermitTable', () => {
  test('a key back at 0 counts 0 and takes up to max again', () => {
    const table = new PermitTable();
    expect(table.take('k', 2)).toBe(1);
    expect(table.take('k', 2)).toBe(2);
    expect(table.take('k', 2)).toBe(-1);
    table.give('k');
    table.give('k');
    expect(table.count('k')).toBe(0);
    expect(table.size).toBe(0);
    expect(table.take('k', 2)).toBe(1);
    expect(table.take('k', 2)).toBe(2);
    expect(table.take('k', 2)).toBe(-1);
    // A give without a permit taken changes nothing.
    table.give('other');
    expect(table.count('other')).toBe(0);
    expect(table.size).toBe(1);
  });

  test('idle keys are forgotten: memory stays bounded by the keys in flight, whatever the keys seen', () => {
    const table = new PermitTable();
    for (let i = 0; i < 100; i++) table.take(`held-${i}`, 1);
    for (let i = 0; i < 100_000; i++) {
      table.take(`user-${i}`, 1);
      table.give(`user-${i}`);
    }
    expect(table.size).toBe(100);
    // At most 1024 idle keys, or as many as in flight, are kept between sweeps.
    expect(table.held).toBeLessThanOrEqual(100 + 1025);
    for (let i = 0; i < 100; i++) expect(table.count(`held-${i}`)).toBe(1);
  });

  test('hostile keys cost what short ones do: 15 kB keys and keys sliced out of 15 kB headers', () => {
    for (const keyOf of [longKey, slicedKey]) {
      const table = new PermitTable();
      const before = heapUsed();
      // 1000 idle keys stay held until a sweep: each must not keep its 15 kB.
      for (let i = 0; i < 1000; i++) {
        table.take(keyOf(i), 1);
        table.give(keyOf(i));
      }
      expect(table.held).toBe(1000);
      expect((heapUsed() - before) / MB).toBeLessThan(2);
      // Found again by the same text.
      expect(table.take(keyOf(7), 1)).toBe(1);
      expect(table.take(keyOf(7), 1)).toBe(-1);
      expect(table.count(keyOf(7))).toBe(1);
    }
  });
});
