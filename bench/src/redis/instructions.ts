/**
 * Instructions of redis-server per decision, counted with callgrind: sluice's algorithms
 * (admitted and limited) beside rate-limiter-flexible's RateLimiterRedis, one decision at a time
 * (lone) or in batches. Counted are the functions that read, run and reply a command
 * (`readQueryFromClient`) and write the reply (`beforeSleep`), so the server's idle cron does not
 * blur the figures; callgrind counts instructions, not time, so the figures hold on a busy machine.
 *
 * In batch mode each round sends `PLACES` peeks (cost 0, a key of their own) that fill the slot's
 * places, then the batch's decisions, which leave as one call of the batch script; the peeks
 * alone are counted too (`peeks`) and taken off, so the figure is the batch script's alone.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ALGORITHMS,
  consumeAll,
  createConcurrencyLimiter,
  createLimiter,
  RedisStore,
  type AlgorithmName,
  type Permit,
} from '@sluice/core';
import { resolvePolicy } from '@sluice/core/adapter';
import Redis from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { logLengthCases } from './log-lengths';
import { freePort } from './redis-server';

const KEYS = Array.from({ length: 200 }, (_, i) => `user:${i}`);
/** The batch queue's places per slot while not full (`MAX_IN_FLIGHT` of batch-queue.ts). */
const PLACES = 2;

/**
 * The batches' requests wait as a limiter's do (a store with deadlines sends each its own, as
 * limiters always have a timeout), long enough for valgrind's slow Redis: none falls back.
 */
const TIMEOUT_MS = 60_000;

type Decide = (key: string) => Promise<boolean>;

interface Case {
  readonly name: string;
  readonly decide: Decide;
  /** One key for every decision (a limited key), or the 200 keys in turn. */
  readonly key?: string;
  /** Run once before the warm-up rounds. */
  readonly prepare?: () => Promise<unknown>;
}

function sluiceCases(client: Redis, algorithm: AlgorithmName): Case[] {
  const store = new RedisStore({ client });
  const rate =
    algorithm === 'sliding-log' ? { limit: 1000, window: '1s' } : { limit: 100_000_000, window: 60_000 };
  const admitted = createLimiter({ algorithm, rate, store, prefix: `a-${algorithm}`, timeoutMs: 60_000 });
  const limited = createLimiter({
    algorithm,
    rate: '1r/m',
    store,
    prefix: `l-${algorithm}`,
    timeoutMs: 60_000,
    blockCache: false,
  });
  return [
    { name: `${algorithm} admitted`, decide: (key) => admitted.consume(key).then((d) => d.allowed) },
    {
      name: `${algorithm} limited`,
      decide: (key) => limited.consume(key).then((d) => d.allowed),
      key: 'flooded',
    },
  ];
}

/** Rounds of `PLACES` peeks and one batch of `size` decisions; `decide` is the round's i-th decision. */
function batchCases(client: Redis, algorithm: AlgorithmName, size: number): Case[] {
  const store = new RedisStore({ client, batch: { maxSize: size } });
  // The sliding log's limit is at most 100 000 (one entry per unit).
  const limit = algorithm === 'sliding-log' ? 100_000 : 100_000_000;
  const policy = resolvePolicy({ algorithm, rate: { limit, window: 60_000 } });
  // A state that outlives the rounds (at the rate above, a unit's state lives a millisecond).
  const kept = resolvePolicy({ algorithm, rate: { limit: 1000, window: 3_600_000 } });
  const peekPolicy = resolvePolicy({ rate: '1/1h' });
  const peek = (key: string): Promise<unknown> =>
    store.consume({ prefix: 'peek', key, policy: peekPolicy, cost: 0 });
  const round =
    (keyOf: (round: number, i: number) => string, prefix: string, peeksOnly = false, rate = policy): Decide =>
    async (key) => {
      const r = Number(key.slice(key.indexOf(':') + 1));
      const ahead = Array.from({ length: PLACES }, () => peek('p'));
      const batch = peeksOnly
        ? []
        : Array.from({ length: size }, (_, i) =>
            store
              .consume({ prefix, key: keyOf(r, i), policy: rate, cost: 1, timeoutMs: TIMEOUT_MS })
              .then((v) => v.allowed),
          );
      await Promise.all(ahead);
      return (await Promise.all(batch)).every(Boolean);
    };
  return [
    { name: `${algorithm} peeks`, decide: round(() => '', '', true) },
    // Keys never seen: each round its own.
    { name: `${algorithm} b${size} fresh`, decide: round((r, i) => `f${r}:${i}`, `bf-${algorithm}`) },
    // Keys holding state: the same size keys every round, each its own state (key i first takes
    // i units, so no two keys' states read the same: equal states in a row can share a decision,
    // which would flatter the count).
    {
      name: `${algorithm} b${size} state`,
      decide: round((_, i) => `s:${i}`, `bs-${algorithm}`, false, kept),
      prepare: () =>
        Promise.all(
          Array.from({ length: size }, (_, i) =>
            store.consume({ prefix: `bs-${algorithm}`, key: `s:${i}`, policy: kept, cost: i }),
          ),
        ),
    },
    // Keys holding one same state (written together each round): a run can reuse the decision of
    // the key before, as it may in real traffic for clients last admitted in one batch.
    {
      name: `${algorithm} b${size} shared`,
      decide: round((_, i) => `h:${i}`, `bh2-${algorithm}`, false, kept),
    },
    { name: `${algorithm} b${size} hot`, decide: round(() => 'hot', `bh-${algorithm}`) },
  ];
}

/**
 * A limiter with `block` in batches of `size` (gcra, keys each holding a state of their own, as
 * `gcra b<size> state`, admitted): what its one-part joint requests cost, each reading the key's
 * block record beside the state. Named apart (`block …`), so the full run's `gcra b64` rows and
 * `LONE_ONLY=gcra` leave it out: `LONE_ONLY='gcra peeks,block'` counts it (the peeks are taken off).
 */
function blockCase(client: Redis, size: number): Case {
  const store = new RedisStore({ client, batch: { maxSize: size } });
  const policy = resolvePolicy({ rate: { limit: 1000, window: 3_600_000 } });
  const block = { durationMs: 60_000, backoff: 2, maxDurationMs: 3_600_000 };
  const peekPolicy = resolvePolicy({ rate: '1/1h' });
  const consume = (key: string, cost: number): Promise<boolean> =>
    store.consume({ prefix: 'blk', key, policy, cost, block, timeoutMs: TIMEOUT_MS }).then((v) => v.allowed);
  return {
    name: `block gcra b${size} state`,
    prepare: () => Promise.all(Array.from({ length: size }, (_, i) => consume(`s:${i}`, i))),
    decide: async () => {
      const ahead = Array.from({ length: PLACES }, () =>
        store.consume({ prefix: 'peek', key: 'p', policy: peekPolicy, cost: 0 }),
      );
      const batch = Array.from({ length: size }, (_, i) => consume(`s:${i}`, 1));
      await Promise.all(ahead);
      return (await Promise.all(batch)).every(Boolean);
    },
  };
}

/**
 * Concurrency permits in batches of `size`: a "decision" is one permit taken and given back. Each
 * round sends `PLACES` peeks, `size` acquires (one batch), then the peeks again and the `size`
 * releases (another); the peeks, counted apart (`permit peeks`, twice a round), are taken off.
 */
function permitCases(client: Redis, size: number): Case[] {
  const store = new RedisStore({ client, batch: { maxSize: size } });
  const limiter = createConcurrencyLimiter({
    max: 1_000_000,
    store,
    leaseMs: 60_000,
    prefix: 'permits',
    timeoutMs: 60_000, // valgrind's Redis is slow: no decision may fall back
  });
  const peekPolicy = resolvePolicy({ rate: '1/1h' });
  const peeks = (): Array<Promise<unknown>> =>
    Array.from({ length: PLACES }, () =>
      store.consume({ prefix: 'peek', key: 'p', policy: peekPolicy, cost: 0 }),
    );
  const round =
    (keyOf: (round: number, i: number) => string, peeksOnly = false): Decide =>
    async (key) => {
      const r = Number(key.slice(key.indexOf(':') + 1));
      if (peeksOnly) {
        await Promise.all(peeks());
        await Promise.all(peeks());
        return true;
      }
      let ahead = peeks();
      const taken = Array.from({ length: size }, (_, i) => limiter.acquire(keyOf(r, i)));
      await Promise.all(ahead);
      const permits = (await Promise.all(taken)).map((d) => d.permit);
      ahead = peeks();
      const released = permits.map((permit) => permit?.release());
      await Promise.all([...ahead, ...released]);
      return permits.every((permit): permit is Permit => permit !== undefined);
    };
  return [
    { name: 'permit peeks', decide: round(() => '', true) },
    { name: `permit b${size} keys`, decide: round((r, i) => `k${r}:${i}`) },
    { name: `permit b${size} hot`, decide: round(() => 'hot') },
  ];
}

/**
 * A request under two limits [perIp, perSku] on one store (`consumeAll`: one joint request of
 * the batch script each), in batches of `size`: keys never seen per address, eight SKUs.
 */
function jointCase(client: Redis, size: number): Case {
  const store = new RedisStore({ client, batch: { maxSize: size } });
  const rate = { limit: 100_000_000, window: 60_000 };
  const [ip, sku] = ['ip', 'sku'].map((name) =>
    createLimiter({ rate, store, prefix: `joint-${name}`, timeoutMs: 60_000, blockCache: false }),
  ) as [ReturnType<typeof createLimiter>, ReturnType<typeof createLimiter>];
  const peekPolicy = resolvePolicy({ rate: '1/1h' });
  return {
    name: `joint b${size} two limits`,
    decide: async (key) => {
      const r = Number(key.slice(key.indexOf(':') + 1));
      const ahead = Array.from({ length: PLACES }, () =>
        store.consume({ prefix: 'peek', key: 'p', policy: peekPolicy, cost: 0 }),
      );
      const batch = Array.from({ length: size }, (_, i) =>
        consumeAll([
          { limiter: ip, key: `u${r}:${i}` },
          { limiter: sku, key: `sku:${i % 8}` },
        ]).then((decisions) => decisions.every((d) => d?.allowed === true)),
      );
      await Promise.all(ahead);
      return (await Promise.all(batch)).every(Boolean);
    },
  };
}

/** A permit taken and given back, each its own call (`permit alone`: the instructions of both). */
function lonePermitCase(client: Redis): Case {
  const limiter = createConcurrencyLimiter({
    max: 1_000_000,
    store: new RedisStore({ client }),
    leaseMs: 60_000,
    prefix: 'permit-alone',
    timeoutMs: 60_000,
  });
  return {
    name: 'permit alone',
    decide: async (key) => {
      const { permit } = await limiter.acquire(key);
      await permit?.release();
      return permit !== undefined;
    },
  };
}

function rlfCases(client: Redis): Case[] {
  const decide =
    (limiter: RateLimiterRedis): Decide =>
    (key) =>
      limiter.consume(key).then(
        () => true,
        (rejection: unknown) => {
          if (rejection instanceof RateLimiterRes) return false;
          throw rejection;
        },
      );
  const admitted = new RateLimiterRedis({
    storeClient: client,
    points: 100_000_000,
    duration: 60,
    keyPrefix: 'rlf',
  });
  const limited = new RateLimiterRedis({ storeClient: client, points: 1, duration: 60, keyPrefix: 'rlf-l' });
  return [
    { name: 'rlf admitted', decide: decide(admitted) },
    { name: 'rlf limited', decide: decide(limited), key: 'flooded' },
  ];
}

/** What to count: lone decisions, or decisions in batches of `batch`; `only`: cases by name prefix. */
export interface InstructionOptions {
  readonly batch?: number | undefined;
  readonly only?: readonly string[] | undefined;
  /** Decisions per case (400). */
  readonly n?: number | undefined;
  /** Leave the dumps in their temporary folder (the default), or remove it. */
  readonly keepDumps?: boolean | undefined;
  /** Count instead the sliding log's two forms at these lengths (see log-lengths.ts). */
  readonly logLengths?: readonly number[] | undefined;
  /** With `logLengths`: the store's `PACKED_LOG_MAX`. */
  readonly packedMax?: number | undefined;
}

/** One case's count. */
export interface InstructionRow {
  /** `gcra admitted`, `rlf limited`, `gcra b64 state`, … */
  readonly name: string;
  /** Instructions of redis-server per decision. */
  readonly perDecision: number;
  readonly admitted: number;
  readonly decisions: number;
  /** The callgrind dump, for callgrind_annotate (in a temporary folder). */
  readonly file: string;
}

/** Whether valgrind and callgrind_control are on PATH. */
export function hasCallgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Counts the instructions of a redis-server of its own, under callgrind, per decision of each
 * case (see the file's header); `onRow` hears each as it is counted.
 */
export async function countInstructions(
  { batch: BATCH, only: ONLY, n: N = 400, keepDumps = true, logLengths, packedMax = 0 }: InstructionOptions,
  onRow: (row: InstructionRow) => void = () => undefined,
): Promise<InstructionRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lone-cg-'));
  const port = await freePort();
  const server = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      '--collect-atstart=no',
      '--toggle-collect=readQueryFromClient',
      '--toggle-collect=beforeSleep',
      'redis-server',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  const pid = server.pid as number;
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 200 });
  client.on('error', () => {}); // refused until valgrind's redis-server listens
  try {
    for (let i = 0; ; i++) {
      try {
        await client.connect();
        await client.ping();
        break;
      } catch {
        if (i > 100) throw new Error('redis-server under valgrind did not start');
        client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const cases = (
      logLengths !== undefined
        ? logLengthCases(client, logLengths, packedMax, BATCH)
        : BATCH === undefined
          ? [
              ...ALGORITHMS.flatMap((algorithm) => sluiceCases(client, algorithm)),
              ...rlfCases(client),
              lonePermitCase(client),
            ]
          : [
              ...ALGORITHMS.flatMap((algorithm) => batchCases(client, algorithm, BATCH)),
              ...permitCases(client, BATCH),
              jointCase(client, BATCH),
              blockCase(client, BATCH),
            ]
    ).filter((c) => ONLY === undefined || ONLY.some((o) => c.name.startsWith(o)));
    const rows: InstructionRow[] = [];
    // In batch mode, the round's number (a key of its own in each warm-up and counted round).
    let counted = 0;
    const keyOf = (c: Case, i: number): string =>
      BATCH === undefined ? (c.key ?? (KEYS[i % KEYS.length] as string)) : `r:${counted + i}`;
    // Every case's script loaded before any is counted: Lua's garbage collector, which Redis
    // steps every 50 calls, works through every loaded script, so each case sees the same heap.
    // Every key written once (and the limited key over its limit).
    const warm = BATCH === undefined ? KEYS.length : 3;
    for (const c of cases) await c.prepare?.();
    for (const c of cases) for (let i = 0; i < warm; i++) await c.decide(keyOf(c, i));
    counted = warm;
    const rounds = BATCH === undefined ? N : Math.max(1, Math.round(N / BATCH));
    let peeks = 0;
    for (const c of cases) {
      execFileSync('callgrind_control', ['--zero', String(pid)], { stdio: 'ignore' });
      let admitted = 0;
      for (let i = 0; i < rounds; i++) if (await c.decide(keyOf(c, i))) admitted++;
      const label = c.name.replace(/ /g, '-');
      execFileSync('callgrind_control', [`--dump=${label}`, String(pid)], { stdio: 'ignore' });
      const file = readdirSync(dir)
        .filter((f) => f.startsWith('cg.out'))
        .map((f) => join(dir, f))
        .find((f) => readFileSync(f, 'utf8').includes(`desc: Trigger: dump ${label}\n`));
      const text = readFileSync(file as string, 'utf8');
      const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
      let per = total / N;
      if (BATCH !== undefined) {
        if (c.name.endsWith('peeks')) peeks = total / rounds;
        per = c.name.endsWith('peeks') ? peeks : (total / rounds - peeks) / BATCH;
      }
      const row = {
        name: c.name,
        perDecision: Math.round(per),
        admitted,
        decisions: rounds,
        file: file as string,
      };
      rows.push(row);
      onRow(row);
    }
    return rows;
  } finally {
    client.disconnect();
    process.kill(pid, 'SIGTERM');
    if (!keepDumps) {
      if (server.exitCode === null && server.signalCode === null)
        await new Promise((resolve) => server.once('exit', resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
