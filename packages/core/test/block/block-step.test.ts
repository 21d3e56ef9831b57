import fc from 'fast-check';
import {
  blockedVerdict,
  liveBlock,
  nextBlock,
  refusalOfBlock,
  type BlockRecord,
} from '../../src/algorithms/block';
import { resolveBlock } from '../../src/policy/block';
import { SluiceConfigError, type BlockPolicy } from '../../src';

const policies = fc
  .record({
    durationMs: fc.integer({ min: 1, max: 86_400_000 }),
    backoff: fc.oneof(fc.constant(1), fc.constant(2), fc.double({ min: 1, max: 1000, noNaN: true })),
    extra: fc.integer({ min: 0, max: 30 * 86_400_000 }),
  })
  .map(({ durationMs, backoff, extra }): BlockPolicy => ({
    durationMs,
    backoff,
    maxDurationMs: durationMs + extra,
  }));

describe('the block step', () => {
  test('every block lasts from duration to maxDuration, each within maxDuration of the last at least as long, integers all', () => {
    fc.assert(
      fc.property(
        policies,
        fc.array(fc.integer({ min: 0, max: 40 * 86_400_000 }), { maxLength: 30 }),
        (block, gaps) => {
          let now = 1_700_000_000_000;
          let record: BlockRecord | undefined;
          for (const gap of gaps) {
            now += gap;
            const live = liveBlock(record, block, now);
            if (live !== undefined && now < live.until) continue; // blocked: nothing new
            const next = nextBlock(live, block, now);
            expect(Number.isSafeInteger(next.lengthMs)).toBe(true);
            expect(next.lengthMs).toBeGreaterThanOrEqual(block.durationMs);
            expect(next.lengthMs).toBeLessThanOrEqual(block.maxDurationMs);
            if (live === undefined) expect(next.lengthMs).toBe(block.durationMs);
            else expect(next.lengthMs).toBeGreaterThanOrEqual(live.lengthMs);
            expect(next.until).toBe(now + next.lengthMs);
            record = next;
          }
        },
      ),
    );
  });

  test('a record counts until maxDuration after its block ends, not a millisecond longer', () => {
    fc.assert(
      fc.property(policies, (block) => {
        const record = nextBlock(undefined, block, 0);
        expect(liveBlock(record, block, record.until + block.maxDurationMs - 1)).toBe(record);
        expect(liveBlock(record, block, record.until + block.maxDurationMs)).toBeUndefined();
      }),
    );
  });

  test('a blocked refusal waits out the block; the refusal that starts one waits no less than it', () => {
    const record = { until: 1000 + 60_000, lengthMs: 60_000 };
    expect(blockedVerdict(3, record, 11_000)).toMatchObject({
      allowed: false,
      reason: 'blocked',
      limit: 3,
      remaining: 0,
      retryAfterMs: 50_000,
      resetMs: 50_000,
    });
    const limited = {
      allowed: false,
      limit: 3,
      remaining: 0,
      resetMs: 9000,
      retryAfterMs: 3000,
      delayMs: 0,
      reason: 'limited' as const,
    };
    expect(refusalOfBlock(limited, record, 1000).retryAfterMs).toBe(60_000);
    const final = { ...limited, retryAfterMs: 0, reason: 'cost-exceeds-capacity' as const };
    expect(refusalOfBlock(final, record, 1000)).toBe(final);
  });

  test('resolveBlock: durations as text or ms; maxDuration defaults to a day with a backoff, else duration', () => {
    expect(resolveBlock({ duration: '15m' })).toEqual({
      durationMs: 900_000,
      backoff: 1,
      maxDurationMs: 900_000,
    });
    expect(resolveBlock({ duration: 1000, backoff: 2 })).toEqual({
      durationMs: 1000,
      backoff: 2,
      maxDurationMs: 86_400_000,
    });
    expect(resolveBlock({ duration: '2d', backoff: 2 })?.maxDurationMs).toBe(2 * 86_400_000);
    expect(resolveBlock({ duration: '1m', backoff: 1.5, maxDuration: '1h' })).toEqual({
      durationMs: 60_000,
      backoff: 1.5,
      maxDurationMs: 3_600_000,
    });
    expect(resolveBlock(undefined)).toBeUndefined();
    expect(() => resolveBlock({ duration: '1m', backoff: 1001 })).toThrow(SluiceConfigError);
  });
});
