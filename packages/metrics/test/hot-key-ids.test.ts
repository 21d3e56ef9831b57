import { createLimiter } from '@sluice/core';
import { prometheus } from '@sluice/metrics';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { fakeClock } from '../../core/test/contract/fake-clock';
import { keyId, MAX_KEY_CHARS } from '../src/hot-keys/key-id';
import { ADMITTED, SpaceSaving } from '../src/hot-keys/space-saving';

/** The 32-bit FNV-1a the shortened form used to carry. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

const victim = `Bearer ${'v'.repeat(400)}`;

describe('hot-key ids: a short key never passes for a shortened long one', () => {
  test("a short key spelling a long key's shortened form is counted apart from it", async () => {
    const clock = fakeClock();
    const metrics = prometheus({ registry: new Registry(), clock });
    const limiter = createLimiter({ name: 'per-token', rate: '1000/1m', metrics, clock });
    await limiter.consume(victim);
    const spoofs = [keyId(victim), `${victim.slice(0, 160)}… (${victim.length} chars, #${fnv1a(victim)})`];
    for (const spoof of spoofs) {
      expect(spoof.length).toBeLessThanOrEqual(MAX_KEY_CHARS);
      for (let i = 0; i < 50; i++) await limiter.consume(spoof);
    }
    const hot = metrics.hotKeys('per-token');
    expect(hot).toHaveLength(3);
    const victims = hot.filter((h) => h.key === keyId(victim));
    expect(victims).toEqual([expect.objectContaining({ requests: 1, error: 0 })]);
    expect(hot.filter((h) => h.requests === 50 && h.error === 0)).toHaveLength(2);
  });

  test('ids: short keys as they are (the same string), long ones bounded with a 64-bit digest', () => {
    for (const key of ['', 'k', '10.0.0.1', 'x'.repeat(200), `${'x'.repeat(160)}.${'y'.repeat(39)}`]) {
      expect(keyId(key)).toBe(key);
    }
    const id = keyId('k'.repeat(15_000));
    expect(id).toMatch(/^k{160}… \(15000 chars, #[0-9a-f]{16}\)$/);
    expect(id.length).toBeLessThan(MAX_KEY_CHARS);
    // Lone surrogates are hashed as the code units they are, not merged as U+FFFD.
    const tail = 'z'.repeat(300);
    expect(keyId(`${tail}\ud800`)).not.toBe(keyId(`${tail}\udc00`));
  });

  test('property: distinct keys get distinct ids, each at most 200 characters', () => {
    // Keys near the bound, with `…` where a shortened form has it and text that spells one.
    const head = fc.string({ unit: fc.constantFrom('a', 'b'), minLength: 160, maxLength: 160 });
    const tail = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.constantFrom('', ' (407 chars, #14225bd0)', ' (230 chars, #0123456789abcdef)'),
    );
    const key = fc.tuple(head, fc.constantFrom('…', 'x', ''), tail).map((parts) => parts.join(''));
    fc.assert(
      fc.property(key, key, (a, b) => {
        for (const k of [a, b]) expect(keyId(k).length).toBeLessThanOrEqual(MAX_KEY_CHARS);
        if (a !== b) expect(keyId(a)).not.toBe(keyId(b));
      }),
    );
    // Sending a long key's id as a key never lands on the long key's counter.
    fc.assert(
      fc.property(fc.string({ minLength: MAX_KEY_CHARS + 1, maxLength: 600 }), (long) => {
        expect(keyId(keyId(long))).not.toBe(keyId(long));
      }),
    );
    const summary = new SpaceSaving(4);
    const long = 'q'.repeat(300);
    summary.add(long, ADMITTED, 0);
    summary.add(keyId(long), ADMITTED, 0);
    expect(summary.top(4, 0).map((k) => k.requests)).toEqual([1, 1]);
  });
});
