import { resolvePolicy } from '../../src/adapter';
import { BlockCache, type Rejection } from '../../src/resilience/block-cache';

// The block cache's bound: two generations of maxKeys / 2 keys (as hashlru), rotated when the
// recent one is full. Every figure below follows from that rule; `generation` is maxKeys / 2.

const policy = resolvePolicy({ rate: '1/1m' });
const tag = {};
/** A rejection for a minute: nothing below expires unless a test moves time on purpose. */
const rejection: Rejection = { limit: 1, retryAfterMs: 60_000, resetMs: 60_000, policy };

/** Remembers each key as blocked at time 0 for cost 1. */
function block(cache: BlockCache, keys: readonly string[]): void {
  for (const key of keys) cache.remember(key, 1, 0, rejection, tag);
}

/** Whether a request of cost 1 at time 1 for `key` is blocked. */
function held(cache: BlockCache, key: string): boolean {
  return cache.find(key, 1, 1, tag) !== undefined;
}

/** `count` distinct keys, none of them used elsewhere in a test. */
function others(name: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${name}:${i}`);
}

describe('block cache bound', () => {
  test.each([4, 10, 101])(
    'maxKeys %i: a block outlives one rotation (in the older generation) and is gone after a second',
    (maxKeys) => {
      const generation = Math.floor(maxKeys / 2);
      const cache = new BlockCache(maxKeys);
      block(cache, ['a']);
      const later = others('k', 2 * generation);
      // `a` fills the recent generation with generation - 1 others; the next key rotates it.
      block(cache, later.slice(0, generation));
      expect(held(cache, 'a')).toBe(true);
      // One key short of the second rotation: still held.
      block(cache, later.slice(generation, 2 * generation - 1));
      expect(held(cache, 'a')).toBe(true);
      block(cache, later.slice(2 * generation - 1));
      expect(held(cache, 'a')).toBe(false);
      expect(later.slice(generation).every((key) => held(cache, key))).toBe(true);
    },
  );

  test('remembering a key held in the older generation moves it to the recent one: it outlives the next rotation', () => {
    const moved = new BlockCache(100);
    const left = new BlockCache(100);
    for (const cache of [moved, left]) block(cache, ['a', ...others('first', 50)]); // a is older now
    moved.remember('a', 2, 10, rejection, tag); // blocked again, for cost 2 from time 10
    for (const cache of [moved, left]) block(cache, others('second', 50)); // rotated again
    expect(held(left, 'a')).toBe(false);
    expect(moved.find('a', 2, 11, tag)).toMatchObject({ cost: 2, until: 60_010 });
    expect(held(moved, 'first:0')).toBe(false);
  });

  test.each([1, 2, 3, 4, 7, 10, 100, 1001])(
    'maxKeys %i: after maxKeys × 3 distinct keys, at most maxKeys are still blocked, the latest among them',
    (maxKeys) => {
      const cache = new BlockCache(maxKeys);
      const keys = others('k', maxKeys * 3);
      let most = 0;
      for (const [i, key] of keys.entries()) {
        block(cache, [key]);
        // Counted after every key, so a bound kept only at some moments would be seen.
        if (i % Math.max(1, Math.floor(maxKeys / 4)) === 0 || i >= keys.length - maxKeys)
          most = Math.max(most, keys.slice(0, i + 1).filter((k) => held(cache, k)).length);
      }
      expect(most).toBeLessThanOrEqual(maxKeys);
      expect(most).toBeGreaterThanOrEqual(Math.max(1, maxKeys - 1)); // bounded, not emptied
      expect(held(cache, keys[keys.length - 1] as string)).toBe(true);
    },
  );

  test('forget removes a key from either generation', () => {
    const cache = new BlockCache(4);
    block(cache, ['old', 'kept', 'recent']); // old and kept are the older generation now
    cache.forget('old');
    cache.forget('recent');
    expect(['old', 'kept', 'recent'].map((key) => held(cache, key))).toEqual([false, true, false]);
  });

  test.each([
    ['recent', []],
    ['older', others('k', 2)],
  ])('a block in the %s generation is dropped once expired (until <= now)', (_, after) => {
    const cache = new BlockCache(4);
    cache.remember('a', 1, 1000, { ...rejection, retryAfterMs: 500 }, tag); // until 1500
    block(cache, after);
    expect(cache.find('a', 1, 1499, tag)).toMatchObject({ until: 1500 });
    expect(cache.find('a', 1, 1500, tag)).toBeUndefined();
    // Dropped, not only skipped: asked again with an earlier time, it is not there.
    expect(cache.find('a', 1, 1499, tag)).toBeUndefined();
  });

  test.each([
    ['recent', []],
    ['older', others('k', 2)],
  ])('a block in the %s generation found under another tag is dropped', (_, after) => {
    const cache = new BlockCache(4);
    block(cache, ['a', ...after]);
    expect(cache.find('a', 1, 1, {})).toBeUndefined();
    expect(held(cache, 'a')).toBe(false);
  });

  test('a request cheaper than the one rejected is not blocked, and does not drop the block', () => {
    const cache = new BlockCache(4);
    cache.remember('a', 3, 0, rejection, tag);
    expect(cache.find('a', 2, 1, tag)).toBeUndefined();
    expect(cache.find('a', 0, 1, tag)).toBeUndefined(); // a peek is never blocked
    expect(cache.find('a', 3, 1, tag)).toMatchObject({ cost: 3 });
    expect(cache.find('a', 4, 1, tag)).toMatchObject({ cost: 3 });
  });

  test('maxKeys 1: the latest block is held, and only it', () => {
    const cache = new BlockCache(1);
    block(cache, ['a']);
    expect(held(cache, 'a')).toBe(true);
    block(cache, ['b']);
    expect([held(cache, 'a'), held(cache, 'b')]).toEqual([false, true]);
    cache.remember('b', 2, 5, rejection, tag);
    expect(cache.find('b', 2, 6, tag)).toMatchObject({ cost: 2, until: 60_005 });
    cache.forget('b');
    expect(held(cache, 'b')).toBe(false);
  });
});
