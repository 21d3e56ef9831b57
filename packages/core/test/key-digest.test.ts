import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createLimiter, MemoryStore } from '../src';
import { heldKey, keyDigest, MAX_HELD_KEY_LENGTH, ownedKeyText } from '../src/stores/key-digest';
import { fakeClock } from './contract/fake-clock';
import { longKey } from './harness/heap';

describe('held keys (issue 16 item 6)', () => {
  test(`keys up to ${MAX_HELD_KEY_LENGTH} characters are held as they are; longer ones by a 43-character digest`, () => {
    for (const key of ['', '203.0.113.7', '2001:db8:1:2::/64', 'x'.repeat(MAX_HELD_KEY_LENGTH)])
      expect(heldKey(key)).toBe(key);
    for (const key of ['x'.repeat(MAX_HELD_KEY_LENGTH + 1), longKey(1)])
      expect(heldKey(key)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(MAX_HELD_KEY_LENGTH).toBeLessThan(43); // a digest is never taken for a verbatim key
  });

  test('distinct keys are held distinctly, whatever they hold', () => {
    const text = fc.string({ unit: 'binary', maxLength: 120 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        fc.pre(a !== b);
        expect(heldKey(a)).not.toBe(heldKey(b));
      }),
    );
    // UTF-8 would turn a lone surrogate into U+FFFD: such texts are hashed as code units.
    const pad = 'p'.repeat(50);
    expect(heldKey(`${pad}\uD800`)).not.toBe(heldKey(`${pad}\uFFFD`));
    expect(heldKey(`${pad}\uD800`)).not.toBe(heldKey(`${pad}\uDC00`));
  });

  test('the same key is held the same way, however it was built and whatever came before', () => {
    const a = longKey(1);
    const digest = heldKey(a);
    expect(heldKey(longKey(2))).not.toBe(digest);
    expect(heldKey([1, 'u'.repeat(15_000)].join(':'))).toBe(digest); // an equal, distinct string
    expect(heldKey(a)).toBe(digest);
  });

  test('the Redis store keeps its hex digest of UTF-8: its keys are unchanged', () => {
    const text = `sku:${'é'.repeat(300)}`;
    expect(keyDigest(text)).toBe(createHash('sha256').update(text).digest('hex'));
  });

  test('an owned copy is equal to the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(ownedKeyText(text)).toBe(text);
      }),
    );
  });

  test('a long key decides on its own state; its digest as a key is another key', async () => {
    const store = new MemoryStore();
    const limiter = createLimiter({ rate: '1/1m', store, clock: fakeClock() });
    const key = longKey(3);
    expect(await limiter.consume(key)).toMatchObject({ allowed: true, key });
    expect(await limiter.consume(key)).toMatchObject({ allowed: false, key });
    expect((await limiter.consume(heldKey(key))).allowed).toBe(true);
    expect((await limiter.consume(longKey(4))).allowed).toBe(true);
    await limiter.reset(key);
    expect((await limiter.consume(key)).allowed).toBe(true);
  });

  test('a limiter with several rules holds a long key by its digest too', async () => {
    const store = new MemoryStore();
    const limiter = createLimiter({
      rules: [{ rate: '1/1m' }, { rate: '10/1h' }],
      store,
      clock: fakeClock(),
    });
    const key = longKey(5);
    expect(await limiter.consume(key)).toMatchObject({ allowed: true, key });
    expect(await limiter.consume(key)).toMatchObject({ allowed: false, key });
    expect(store.size).toBe(2);
  });
});
