import { median, round } from '../measure';
import { progress } from '../progress';
import type { Settings } from '../settings';
import { SHARED_STORE_TIMEOUT_MS, supportsBlockCache } from '../sluice-limiter';
import { spawnTsChild } from '../child';
import { runBatching, type BatchingResult } from './batching';
import { runClients, type ClientsResult } from './clients';
import { countCommands, total } from './command-count';
import { ADMIT_ALL, LOG_LIMIT, LOG_WINDOW_MS, WIDE_LOG_LIMIT } from '../limits';
import { candidates, connect, SKUS, type Candidate, type Decide } from './candidates';

export { TWO_LIMITS } from './candidates';

const KEYS = Array.from({ length: 10_000 }, (_, i) => `user:${i}`);
const IN_FLIGHT = [1, 256] as const;
/** Turns per round: each candidate's run of a round is cut into this many, taken in turn. */
const SLICES = 10;

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
