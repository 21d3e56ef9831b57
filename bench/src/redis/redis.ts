import { ALGORITHMS, consumeAll, RedisStore as SluiceRedisStore, type AlgorithmName } from '@sluice/core';
import type { Options as ErlOptions } from 'express-rate-limit';
import Redis from 'ioredis';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import {
  countedLimiter,
  SHARED_STORE_TIMEOUT_MS,
  supportsBlockCache,
  type CountedLimiter,
} from '../sluice-limiter';
import { spawnTsChild } from '../child';
import { runBatching, type BatchingResult } from './batching';
import { runClients, type ClientsResult } from './clients';
import { countCommands, total } from './command-count';
import { ADMIT_ALL, LOG_LIMIT, LOG_WINDOW_MS, WIDE_LOG_LIMIT, WINDOW_MS } from '../limits';

const KEYS = Array.from({ length: 10_000 }, (_, i) => `user:${i}`);
const IN_FLIGHT = [1, 256] as const;
/** Turns per round: each candidate's run of a round is cut into this many, taken in turn. */
const SLICES = 10;

/** One decision: resolves whether it was admitted. */
type Decide = (key: string) => Promise<boolean>;

interface Candidate {
  readonly id: string;
  readonly name: string;
  readonly client: Redis;
  /** Decides with a limit never reached (`admitted`) or of 1 per minute (`limited`). */
  readonly admitted: Decide;
  readonly limited?: Decide;
  /** Decisions made without the store (sluice only). */
  withoutStore(): number;
}

/** Decisions/s of one candidate at one concurrency. */
export interface RedisRow {
  readonly id: string;
  readonly candidate: string;
  readonly inFlight: number;
  readonly perSecond: number;
  /** Median over the rounds of this rate / rate-limiter-flexible's in the same round. */
  readonly ofRlf: number;
  /** The lowest and highest of those rounds' ratios. */
  readonly ofRlfSpread: readonly [number, number];
  /** Same, against the bare INCR. */
  readonly ofIncr: number;
  readonly samples: readonly number[];
  /** Decisions sluice made without the store (timeouts, open circuit): any taints the figure. */
  readonly withoutStore: number;
}

/** Commands per decision of one candidate in one scenario. */
export interface RedisCountRow {
  readonly id: string;
  readonly candidate: string;
  /** `admitted`: distinct keys under their limit; `flood`: one key already over its limit. */
  readonly scenario: 'admitted' | 'flood';
  readonly decisions: number;
  /** Commands the client sent per decision (round trips' commands; MONITOR). */
  readonly sentPerDecision: number;
  /** Commands Redis ran per decision, scripts' own calls included (INFO commandstats). */
  readonly executedPerDecision: number;
  readonly sent: Record<string, number>;
  readonly inScripts: Record<string, number>;
  /** Share of the decisions that admitted (1 expected for `admitted`, 0 for `flood`). */
  readonly admittedShare: number;
  /** Decisions sluice made without the store during the pass: any makes the counts meaningless. */
  readonly withoutStore: number;
}

/** What the Redis section measured. */
export interface RedisResult {
  readonly rounds: number;
  readonly ms: number;
  readonly blockCache: boolean;
  readonly rows: readonly RedisRow[];
  readonly counts: readonly RedisCountRow[];
  /** Redis time per decision by batch size, and latency at 1 in flight with and without batching. */
  readonly batching: BatchingResult;
  /** node-redis vs ioredis (issue 14); absent from results recorded before it. */
  readonly clients?: ClientsResult;
  readonly notes: readonly string[];
}

function connect(port: number): Redis {
  return new Redis({ host: '127.0.0.1', port });
}

/**
 * sluice on `algorithm`, batching on or off; the sliding log at {@link LOG_LIMIT} per
 * {@link LOG_WINDOW_MS}, or at `logLimit` (then the candidate's id ends with it).
 */
function sluice(port: number, algorithm: AlgorithmName, batch = true, logLimit?: number): Candidate {
  const client = connect(port);
  const store = new SluiceRedisStore({ client, batch });
  const log = algorithm === 'sliding-log' ? (logLimit ?? LOG_LIMIT) : undefined;
  const rate =
    log === undefined ? { limit: ADMIT_ALL, window: WINDOW_MS } : { limit: log, window: LOG_WINDOW_MS };
  const tag = `${batch ? algorithm : `${algorithm}-unbatched`}${logLimit === undefined ? '' : `-${logLimit}`}`;
  const admitted = countedLimiter({ algorithm, rate, store, prefix: `bench-${tag}` }, { shared: true });
  const limited = countedLimiter(
    { algorithm, rate: '1r/m', store, prefix: `bench-flood-${tag}` },
    { shared: true },
  );
  const name =
    log === undefined ? `sluice ${algorithm}` : `sluice sliding-log (${log}/${LOG_WINDOW_MS / 1000}s)`;
  const id = `sluice:${algorithm}${batch ? '' : ':unbatched'}${logLimit === undefined ? '' : `:${logLimit}`}`;
  return {
    id,
    name: batch ? name : `${name}, batch: false`,
    client,
    admitted: (key) => admitted.limiter.consume(key).then((d) => d.allowed),
    limited: (key) => limited.limiter.consume(key).then((d) => d.allowed),
    withoutStore: () => admitted.withoutStore() + limited.withoutStore(),
  };
}

function rlfDecide(limiter: RateLimiterRedis): Decide {
  return (key) =>
    limiter.consume(key).then(
      () => true,
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return false;
        throw rejection;
      },
    );
}

function candidates(port: number): Candidate[] {
  const incr = connect(port);
  const rlfClient = connect(port);
  const rlrClient = connect(port);
  const rlrStore = (limit: number, prefix: string): Decide => {
    const store = new RateLimitRedisStore({
      sendCommand: (command: string, ...args: string[]) =>
        rlrClient.call(command, ...args) as Promise<RedisReply>,
      prefix,
    });
    store.init({ windowMs: WINDOW_MS } as ErlOptions);
    // The store counts; express-rate-limit compares with the limit.
    return (key) => store.increment(key).then((info) => info.totalHits <= limit);
  };
  return [
    {
      id: 'incr',
      name: 'bare INCR (ceiling)',
      client: incr,
      admitted: (key) => incr.incr(`bench-incr:${key}`).then(() => true),
      withoutStore: () => 0,
    },
    ...ALGORITHMS.map((algorithm) => sluice(port, algorithm)),
    sluice(port, 'sliding-log', true, WIDE_LOG_LIMIT),
    sluice(port, 'gcra', false),
    ...twoLimits(port),
    {
      id: 'rate-limiter-flexible',
      name: 'rate-limiter-flexible RateLimiterRedis',
      client: rlfClient,
      admitted: rlfDecide(
        new RateLimiterRedis({
          storeClient: rlfClient,
          points: ADMIT_ALL,
          duration: WINDOW_MS / 1000,
          keyPrefix: 'bench-rlf',
        }),
      ),
      limited: rlfDecide(
        new RateLimiterRedis({
          storeClient: rlfClient,
          points: 1,
          duration: WINDOW_MS / 1000,
          keyPrefix: 'bench-rlf-flood',
        }),
      ),
      withoutStore: () => 0,
    },
    {
      id: 'rate-limit-redis',
      name: 'rate-limit-redis (express-rate-limit store)',
      client: rlrClient,
      admitted: rlrStore(ADMIT_ALL, 'bench-rlr:'),
      limited: rlrStore(1, 'bench-rlr-flood:'),
      withoutStore: () => 0,
    },
  ];
}

/** SKUs the two-limit candidates' second limit counts per, in turn beside the addresses. */
const SKUS = 100;

/**
 * A request under two limits, per address and per SKU ([perIp, perSku]), on one Redis node: sluice's
 * `consumeAll` (one script call, or one request of a batch call, for both) beside two
 * rate-limiter-flexible `RateLimiterRedis.consume` calls, one after the other, as its users check
 * two limits. A decision is a request's, both limits taken.
 */
function twoLimits(port: number): Candidate[] {
  const client = connect(port);
  const store = new SluiceRedisStore({ client });
  const rate = { limit: ADMIT_ALL, window: WINDOW_MS };
  const [perIp, perSku] = ['ip', 'sku'].map((name) =>
    countedLimiter({ rate, store, prefix: `bench-two-${name}` }, { shared: true }),
  ) as [CountedLimiter, CountedLimiter];
  const sku = (key: string): string => `sku:${Number(key.slice(key.indexOf(':') + 1)) % SKUS}`;
  const rlfClient = connect(port);
  const [rlfIp, rlfSku] = ['ip', 'sku'].map(
    (name) =>
      new RateLimiterRedis({
        storeClient: rlfClient,
        points: ADMIT_ALL,
        duration: WINDOW_MS / 1000,
        keyPrefix: `bench-rlf-two-${name}`,
      }),
  ) as [RateLimiterRedis, RateLimiterRedis];
  const [ipDecide, skuDecide] = [rlfDecide(rlfIp), rlfDecide(rlfSku)];
  return [
    {
      id: TWO_LIMITS.sluice,
      name: 'sluice consumeAll([perIp, perSku])',
      client,
      admitted: (key) =>
        consumeAll([
          { limiter: perIp.limiter, key },
          { limiter: perSku.limiter, key: sku(key) },
        ]).then((decisions) => decisions.every((d) => d?.allowed === true)),
      withoutStore: () => perIp.withoutStore() + perSku.withoutStore(),
    },
    {
      id: TWO_LIMITS.rlf,
      name: 'rate-limiter-flexible, two consume calls',
      client: rlfClient,
      admitted: async (key) => (await ipDecide(key)) && skuDecide(sku(key)),
      withoutStore: () => 0,
    },
  ];
}

/** The two-limit candidates' ids (see {@link twoLimits}). */
export const TWO_LIMITS = {
  sluice: 'two-limits:sluice',
  rlf: 'two-limits:rate-limiter-flexible',
} as const;

/**
 * Each worker lets timers and I/O run every so often. A decision answered in process (sluice's
 * insurance store while its circuit is open, or its block cache) resolves in a microtask, so a
 * closed loop of them would never yield: the probe that closes the circuit again could not be
 * read until the run ends. A server yields between requests anyway.
 */
const YIELD_EVERY = 64;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Decisions/s with `inFlight` decisions outstanding at all times, for about `ms`. */
export async function throughput(decide: Decide, inFlight: number, ms: number): Promise<number> {
  const { decisions, seconds } = await run(decide, inFlight, ms);
  return decisions / seconds;
}

/** Decisions made with `inFlight` outstanding at all times for about `ms`, and the seconds taken. */
async function run(
  decide: Decide,
  inFlight: number,
  ms: number,
): Promise<{ decisions: number; seconds: number }> {
  let next = 0;
  let done = 0;
  const start = performance.now();
  const deadline = start + ms;
  const worker = async (): Promise<void> => {
    for (let mine = 1; performance.now() < deadline; mine++) {
      await decide(KEYS[next++ % KEYS.length] as string);
      done++;
      if (mine % YIELD_EVERY === 0) await yieldToEventLoop();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { decisions: done, seconds: (performance.now() - start) / 1000 };
}

/**
 * One round: every candidate's decisions/s over `ms`, measured in {@link SLICES} turns of
 * `ms / SLICES` each, the candidates taking turns in each (their order rotated by `round` and
 * the turn). A machine's speed drifts over seconds (another tenant, a core's frequency, where the
 * scheduler puts the two processes): a candidate measured alone for a second may catch a slow
 * or a fast spell that the next one misses, which at 1 in flight moved equal algorithms by 40 %
 * in one run. Taking turns every 100 ms puts every candidate through the same spells.
 */
async function roundOf(
  all: readonly Candidate[],
  inFlight: number,
  ms: number,
  roundIndex: number,
): Promise<Map<string, number>> {
  const totals = new Map(all.map((c) => [c.id, { decisions: 0, seconds: 0 }]));
  for (let turn = 0; turn < SLICES; turn++) {
    for (let i = 0; i < all.length; i++) {
      const candidate = all[(i + roundIndex + turn) % all.length] as Candidate;
      const { decisions, seconds } = await run(candidate.admitted, inFlight, ms / SLICES);
      const total = totals.get(candidate.id) as { decisions: number; seconds: number };
      total.decisions += decisions;
      total.seconds += seconds;
    }
  }
  return new Map([...totals].map(([id, t]) => [id, t.decisions / t.seconds]));
}

/** `count` decisions of `decide` on `key` (or the rotating keys), 256 at a time; the share admitted. */
async function decisions(decide: Decide, count: number, key?: string): Promise<number> {
  let next = 0;
  let admitted = 0;
  const worker = async (): Promise<void> => {
    for (let mine = 1; next < count; mine++) {
      const i = next++;
      if (await decide(key ?? (KEYS[i % KEYS.length] as string))) admitted++;
      if (mine % YIELD_EVERY === 0) await yieldToEventLoop();
    }
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  return admitted / count;
}

async function counted(
  port: number,
  candidate: Candidate,
  scenario: RedisCountRow['scenario'],
  count: number,
): Promise<RedisCountRow> {
  const decide = scenario === 'admitted' ? candidate.admitted : (candidate.limited as Decide);
  const key = scenario === 'flood' ? 'flooded' : undefined;
  // The flood's key is over its limit before the count starts.
  if (key !== undefined) for (let i = 0; i < 3; i++) await decide(key);
  let admittedShare = 0;
  // A circuit opened by timeouts in the runs before stays open for 250 ms: let it close first.
  if (candidate.withoutStore() > 0) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await decisions(decide, 10, key);
  }
  const errorsBefore = candidate.withoutStore();
  const counts = await countCommands(port, candidate.client, async () => {
    admittedShare = await decisions(decide, count, key);
  });
  return {
    id: candidate.id,
    candidate: candidate.name,
    scenario,
    decisions: count,
    sentPerDecision: round(total(counts.sent) / count, 4),
    executedPerDecision: round(counts.executed / count, 4),
    sent: counts.sent,
    inScripts: counts.inScripts,
    admittedShare: round(admittedShare, 4),
    withoutStore: candidate.withoutStore() - errorsBefore,
  };
}

/**
 * Redis decisions/s at 1 and 256 in flight beside rate-limiter-flexible's RateLimiterRedis,
 * rate-limit-redis and a bare INCR (the ceiling), taking turns every `redisMs / SLICES`, medians
 * of `redisRounds`; then commands per decision (MONITOR and INFO commandstats) for admitted
 * decisions and for a flood on one key already over its limit.
 */
export async function runRedis(settings: Settings, port: number): Promise<RedisResult> {
  const admin = connect(port);
  await admin.flushall();
  const all = candidates(port);
  const rows: RedisRow[] = [];
  const counts: RedisCountRow[] = [];
  try {
    for (const inFlight of IN_FLIGHT) {
      progress('redis', `${inFlight} in flight`, `warm-up, ${all.length} candidates`);
      for (const candidate of all)
        await throughput(candidate.admitted, inFlight, Math.min(200, settings.redisMs));
      const samples = new Map<string, number[]>(all.map((c) => [c.id, []]));
      const errorsBefore = new Map(all.map((c) => [c.id, c.withoutStore()]));
      for (let r = 0; r < settings.redisRounds; r++) {
        progress(
          'redis',
          `${inFlight} in flight`,
          `round ${r + 1}/${settings.redisRounds}`,
          `${all.length} × ${settings.redisMs} ms`,
        );
        const rates = await roundOf(all, inFlight, settings.redisMs, r);
        for (const [id, rate] of rates) samples.get(id)?.push(rate);
      }
      const rlf = samples.get('rate-limiter-flexible') ?? [];
      const incr = samples.get('incr') ?? [];
      for (const candidate of all) {
        const mine = samples.get(candidate.id) ?? [];
        const ofRlf = mine.map((v, r) => v / (rlf[r] ?? Number.NaN));
        rows.push({
          id: candidate.id,
          candidate: candidate.name,
          inFlight,
          perSecond: Math.round(median(mine)),
          ofRlf: round(median(ofRlf), 3),
          ofRlfSpread: [round(Math.min(...ofRlf), 3), round(Math.max(...ofRlf), 3)],
          ofIncr: round(median(mine.map((v, r) => v / (incr[r] ?? Number.NaN))), 3),
          samples: mine.map(Math.round),
          withoutStore: candidate.withoutStore() - (errorsBefore.get(candidate.id) ?? 0),
        });
      }
    }
    progress('redis', 'commands per decision', `${settings.redisCountDecisions} decisions each, MONITOR on`);
    for (const candidate of all) {
      counts.push(await counted(port, candidate, 'admitted', settings.redisCountDecisions));
      if (candidate.limited !== undefined)
        counts.push(await counted(port, candidate, 'flood', settings.redisCountDecisions));
    }
  } finally {
    admin.disconnect();
    for (const candidate of all) candidate.client.disconnect();
  }
  const batching = await runBatching(settings, port);
  const clients = await runClients(settings, port);
  const blockCache = supportsBlockCache();
  return {
    rounds: settings.redisRounds,
    ms: settings.redisMs,
    blockCache,
    rows,
    counts,
    batching,
    clients,
    notes: [
      'sluice batches concurrent decisions (the default: up to 64 decisions a call; 2 calls on their way per connection, 16 when the next is full); one row without (batch: false) for comparison',
      `decisions/s: ${settings.redisRounds} rounds of ${settings.redisMs} ms per candidate, each cut into ${SLICES} turns of ${settings.redisMs / SLICES} ms that the candidates take in turn (so a slow spell of the machine hits them all); ratios are medians of each round's`,
      `each candidate has its own ioredis connection; 10 000 keys in turn; limit ${ADMIT_ALL.toLocaleString('en')} per minute (sliding-log: ${LOG_LIMIT} per ${LOG_WINDOW_MS / 1000} s, the goals' typical limit, and ${WIDE_LOG_LIMIT} beside it), so every decision admits`,
      `two limits: a request under [perIp, perSku] (10 000 addresses, ${SKUS} SKUs in turn, the same limit), sluice's consumeAll on one Redis node against two RateLimiterRedis.consume calls one after the other; × rlf there is against rate-limiter-flexible's one-limit row, the goal compares the two-limit rows round by round`,
      'the spread after a ratio is its lowest and highest round',
      'sent = commands the client sent, per decision (MONITOR); executed = INFO commandstats deltas, which also count the commands scripts run',
      `flood: a limit of 1 per minute, the key already over it, ${settings.redisCountDecisions} decisions 256 at a time; sluice ${blockCache ? 'with blockCache: true' : 'without blockCache (this core has no such option yet)'}, peers with their defaults`,
      `sluice waits up to ${SHARED_STORE_TIMEOUT_MS} ms for Redis (timeoutMs; the default is 50), as the peers wait without a bound`,
    ],
  };
}

/** {@link runRedis} in a child process, pinned to cpu 0 (redis-server has cpu 1) when `pinned`. */
export async function runRedisApart(settings: Settings, port: number, pinned: boolean): Promise<RedisResult> {
  const child = spawnTsChild('redis/redis-child.ts', {
    ...(pinned ? { cpu: 0 } : {}),
    env: { BENCH_SETTINGS: JSON.stringify(settings), BENCH_REDIS_PORT: String(port) },
  });
  try {
    return (await child.first('result')).result as RedisResult;
  } finally {
    await child.stop();
  }
}
