import { RedisStore as SluiceRedisStore, type AlgorithmName } from '@sluice/core';
import Redis from 'ioredis';
import { ADMIT_ALL, WINDOW_MS } from '../limits';
import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { countedLimiter } from '../sluice-limiter';
import { countInstructions, hasCallgrind, type InstructionRow } from './instructions';

/** What Redis spent per decision at one batch size (`maxSize`; 1: `batch: false`). */
export interface BatchSizeRow {
  readonly algorithm: AlgorithmName;
  readonly maxSize: number;
  readonly decisions: number;
  /** Decisions per script call (EVALSHA + EVAL), from INFO commandstats. */
  readonly perCall: number;
  /** Microseconds the scripts ran, per decision (INFO commandstats `usec`). */
  readonly usecPerDecision: number;
  readonly withoutStore: number;
}

/** Latency of one decision at 1 in flight, batching on and off, interleaved rounds. */
export interface LatencyRow {
  readonly batch: boolean;
  /** Median over the rounds, µs. */
  readonly p50Us: number;
  readonly p99Us: number;
  /** Each round's p99, µs. */
  readonly p99Samples: readonly number[];
  /** Median over the rounds of this p99 ÷ the other (unbatched) p99 of the same round. */
  readonly p99OfUnbatched: number;
  readonly withoutStore: number;
}

export interface BatchingResult {
  readonly sizes: readonly BatchSizeRow[];
  /**
   * Instructions of redis-server per gcra decision (callgrind): alone (`gcra admitted`, beside
   * `rlf admitted`) and at batch 64 (`gcra b64 fresh`, `… state`, `… hot`); absent without valgrind.
   */
  readonly instructions?: ReadonlyArray<Omit<InstructionRow, 'file'>>;
  readonly latency: readonly LatencyRow[];
  readonly notes: readonly string[];
}

const SIZES = [1, 8, 64] as const;
const SIZE_ALGORITHMS: readonly AlgorithmName[] = ['gcra', 'fixed-window', 'sliding-log'];
const KEYS = Array.from({ length: 10_000 }, (_, i) => `user:${i}`);

function rateOf(algorithm: AlgorithmName) {
  return algorithm === 'sliding-log'
    ? { limit: 1000, window: '1s' }
    : { limit: ADMIT_ALL, window: WINDOW_MS };
}

/** Sum of the script calls' `calls` and `usec` in INFO commandstats. */
async function scriptStats(admin: Redis): Promise<{ calls: number; usec: number }> {
  const info = await admin.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usec };
}

/** `count` decisions 256 at a time (batches fill): what Redis spent on them. */
async function sizeRow(
  port: number,
  admin: Redis,
  algorithm: AlgorithmName,
  maxSize: number,
  count: number,
): Promise<BatchSizeRow> {
  const client = new Redis({ host: '127.0.0.1', port });
  try {
    const store = new SluiceRedisStore({ client, batch: maxSize === 1 ? false : { maxSize } });
    const { limiter, withoutStore } = countedLimiter(
      { algorithm, rate: rateOf(algorithm), store, prefix: `bench-size-${maxSize}-${algorithm}` },
      { shared: true },
    );
    let next = 0;
    const pass = async (n: number): Promise<void> => {
      const end = next + n;
      const worker = async (): Promise<void> => {
        while (next < end) await limiter.consume(KEYS[next++ % KEYS.length] as string);
      };
      await Promise.all(Array.from({ length: 256 }, worker));
    };
    await pass(Math.min(count, 2000)); // scripts loaded, keys written
    await admin.config('RESETSTAT');
    const before = withoutStore();
    await pass(count);
    const { calls, usec } = await scriptStats(admin);
    return {
      algorithm,
      maxSize,
      decisions: count,
      perCall: round(count / calls, 1),
      usecPerDecision: round(usec / count, 2),
      withoutStore: withoutStore() - before,
    };
  } finally {
    client.disconnect();
  }
}

/** Per-decision latencies (µs) of `count` decisions one after the other. */
async function latencies(decide: (key: string) => Promise<unknown>, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await decide(KEYS[i % KEYS.length] as string);
    times.push((performance.now() - started) * 1000);
  }
  return times.sort((a, b) => a - b);
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/**
 * The callgrind counts of {@link BatchingResult.instructions}, or undefined without valgrind:
 * up to 400 lone decisions and 20 batches of 64 (fewer when `redisCountDecisions` is smaller).
 */
async function countedInstructions(
  settings: Settings,
): Promise<{ rows: Array<Omit<InstructionRow, 'file'>>; lone: number; batches: number } | undefined> {
  if (!hasCallgrind()) return undefined;
  const lone = Math.min(400, settings.redisCountDecisions);
  const batches = Math.max(2, Math.min(20, Math.floor(settings.redisCountDecisions / 64)));
  progress('redis', 'instructions per decision', 'callgrind, alone');
  const alone = await countInstructions({
    only: ['gcra admitted', 'rlf admitted'],
    n: lone,
    keepDumps: false,
  });
  progress('redis', 'instructions per decision', 'callgrind, batch 64');
  const batched = await countInstructions({
    batch: 64,
    // The peeks that fill the slot first: counted apart and taken off the batches' counts.
    only: ['gcra peeks', 'gcra b64'],
    n: 64 * batches,
    keepDumps: false,
  });
  const rows = [...alone, ...batched.filter((row) => row.name !== 'gcra peeks')].map(
    ({ name, perDecision, admitted, decisions }) => ({
      name,
      perDecision,
      admitted,
      decisions,
    }),
  );
  return { rows, lone, batches };
}

/**
 * What batching costs and saves: Redis time per decision by batch size (INFO commandstats
 * `usec`, 256 in flight so batches fill), and the latency of one decision at 1 in flight with
 * batching on and off (interleaved rounds; p99 of each round, median over rounds).
 */
export async function runBatching(settings: Settings, port: number): Promise<BatchingResult> {
  const admin = new Redis({ host: '127.0.0.1', port });
  const sizes: BatchSizeRow[] = [];
  const count = Math.max(1000, settings.redisCountDecisions * 4);
  try {
    for (const algorithm of SIZE_ALGORITHMS) {
      for (const maxSize of SIZES) {
        progress(
          'redis',
          'batch sizes',
          `${algorithm}, ${maxSize === 1 ? 'batch: false' : `maxSize ${maxSize}`}`,
        );
        sizes.push(await sizeRow(port, admin, algorithm, maxSize, count));
      }
    }
    const client = new Redis({ host: '127.0.0.1', port });
    const candidates = [true, false].map((batch) => {
      const store = new SluiceRedisStore({ client, batch });
      return {
        batch,
        ...countedLimiter(
          { rate: rateOf('gcra'), store, prefix: `bench-latency-${batch}` },
          { shared: true },
        ),
      };
    });
    const perRound = Math.max(500, Math.round(settings.redisMs * 2));
    const p50 = new Map<boolean, number[]>([
      [true, []],
      [false, []],
    ]);
    const p99 = new Map<boolean, number[]>([
      [true, []],
      [false, []],
    ]);
    const before = candidates.map((c) => c.withoutStore());
    for (const { limiter } of candidates) await latencies((key) => limiter.consume(key), perRound);
    const rounds = Math.max(3, settings.redisRounds * 2);
    for (let r = 0; r < rounds; r++) {
      progress('redis', '1 in flight latency', `round ${r + 1}/${rounds}`);
      for (let i = 0; i < candidates.length; i++) {
        const { batch, limiter } = candidates[(i + r) % candidates.length] as (typeof candidates)[number];
        const sorted = await latencies((key) => limiter.consume(key), perRound);
        p50.get(batch)?.push(quantile(sorted, 0.5));
        p99.get(batch)?.push(quantile(sorted, 0.99));
      }
    }
    client.disconnect();
    const counted = await countedInstructions(settings);
    const off = p99.get(false) ?? [];
    const latency = candidates.map(({ batch, withoutStore }, i) => {
      const mine = p99.get(batch) ?? [];
      return {
        batch,
        p50Us: round(median(p50.get(batch) ?? []), 1),
        p99Us: round(median(mine), 1),
        p99Samples: mine.map((v) => round(v, 1)),
        p99OfUnbatched: round(median(mine.map((v, r) => v / (off[r] ?? Number.NaN))), 3),
        withoutStore: withoutStore() - (before[i] ?? 0),
      };
    });
    return {
      sizes,
      ...(counted === undefined ? {} : { instructions: counted.rows }),
      latency,
      notes: [
        `batch sizes: ${count.toLocaleString('en')} decisions 256 at a time on 10 000 keys; maxSize 1 is batch: false; usec is what INFO commandstats says the script calls ran (the server's own time, network excluded)`,
        counted === undefined
          ? 'instructions: not counted (valgrind and callgrind_control are not on PATH)'
          : `instructions: redis-server's own per decision under callgrind (a server of its own; instructions, not time, so a busy machine does not move them): alone, ${counted.lone} decisions one at a time on 200 keys holding state; at batch 64, ${counted.batches} batches of 64 decisions on keys never seen (fresh), on 64 keys each holding a state of its own (state), on 64 keys holding one same state (shared), or on one key (hot), the peeks that fill the batch's slot counted apart and taken off`,
        `latency: gcra, one decision at a time, ${perRound} per round, ${rounds} rounds alternating batching on and off; the ratio is the median of each round's p99 ÷ the unbatched p99 of that round`,
      ],
    };
  } finally {
    admin.disconnect();
  }
}
