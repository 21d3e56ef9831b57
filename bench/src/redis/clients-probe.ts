// `npx tsx src/redis/clients-probe.ts`: why node-redis and ioredis differ (issue 14), on a
// redis-server of its own; prints, writes no results file. Per client and round, interleaved:
// decisions/s, decisions per script call (INFO commandstats), CPU per decision of this process
// and of redis-server, the share of the time Redis had no call of the client (written to the
// socket, reply not yet read), the share of script writes that found it so and of those made
// in one run with another (calls that left together). `nr-at-once` is
// node-redis with its write made synchronous (its own `setImmediate` run at once, for this
// probe only): what node-redis would do if it wrote as ioredis does.
// Knobs: PROBE_IN_FLIGHT (256), PROBE_MS (1000), PROBE_ROUNDS (3), PROBE_ONLY (names, commas).
import { Socket } from 'node:net';
import { RedisStore as SluiceRedisStore } from '@sluice/core';
import Redis from 'ioredis';
import { createClient } from 'redis';
import { ADMIT_ALL, WINDOW_MS } from '../limits';
import { median } from '../measure';
import { countedLimiter } from '../sluice-limiter';
import { throughput } from './redis';
import { startRedis } from './redis-server';

/** Script calls written to one client's socket and replies read: when Redis had none of it. */
interface Tracker {
  written: number;
  replied: number;
  idleSince: number;
  idleMs: number;
  writes: number;
  intoIdle: number;
  /** Script writes made in the same synchronous run as another: calls that left together. */
  together: number;
  burst: boolean;
}

const trackers = new Map<number, Tracker>();

/** Counts script calls (EVAL, EVALSHA, either case) as they are written, on tracked sockets. */
function trackWrites(): void {
  const write = Socket.prototype.write as (this: Socket, ...args: unknown[]) => boolean;
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
    const t = trackers.get(this.localPort ?? -1);
    if (t !== undefined) {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : '';
      const calls = (text.match(/\r\n(evalsha|eval)\r\n/gi) ?? []).length;
      if (calls > 0) {
        t.writes++;
        if (t.written === t.replied) {
          t.intoIdle++;
          t.idleMs += performance.now() - t.idleSince;
        }
        t.written += calls;
        if (t.burst) t.together++;
        else {
          t.burst = true;
          queueMicrotask(() => (t.burst = false));
        }
      }
    }
    return write.call(this, chunk, ...rest);
  } as typeof Socket.prototype.write;
}

function replied(t: Tracker): void {
  t.replied++;
  if (t.replied === t.written) t.idleSince = performance.now();
}

/** The tracker of the connection whose `CLIENT INFO` this is (its `addr=` port). */
function track(clientInfo: unknown): Tracker {
  const port = Number(/ addr=[^ ]*:(\d+)/.exec(String(clientInfo))?.[1]);
  const t = {
    written: 0,
    replied: 0,
    idleSince: performance.now(),
    idleMs: 0,
    writes: 0,
    intoIdle: 0,
    together: 0,
    burst: false,
  };
  trackers.set(port, t);
  return t;
}

type NodeRedis = Awaited<ReturnType<ReturnType<typeof createClient>['connect']>>;

/** Counts a node-redis client's replies; `atOnce` runs its write's `setImmediate` at once. */
function wrapNodeRedis(client: NodeRedis, t: Tracker, atOnce: boolean): void {
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const immediate = globalThis.setImmediate;
  (client as unknown as { sendCommand: unknown }).sendCommand = (...args: unknown[]) => {
    if (atOnce) {
      (globalThis as { setImmediate: unknown }).setImmediate = (fn: () => void) => {
        fn();
        return undefined;
      };
    }
    try {
      const reply = send(...args);
      reply.then(
        () => replied(t),
        () => replied(t),
      );
      return reply;
    } finally {
      globalThis.setImmediate = immediate;
    }
  };
}

async function main(): Promise<void> {
  const inFlight = Number(process.env.PROBE_IN_FLIGHT ?? 256);
  const ms = Number(process.env.PROBE_MS ?? 1000);
  const rounds = Number(process.env.PROBE_ROUNDS ?? 3);
  const only = process.env.PROBE_ONLY?.split(',');
  const redis = await startRedis();
  const { port } = redis;
  const admin = new Redis({ host: '127.0.0.1', port });
  const ioredis = new Redis({ host: '127.0.0.1', port });
  const nodeRedis = await createClient({ socket: { host: '127.0.0.1', port } }).connect();
  const atOnce = await createClient({ socket: { host: '127.0.0.1', port } }).connect();
  trackWrites();
  const ioTracker = track(await ioredis.call('CLIENT', 'INFO'));
  const send = ioredis.sendCommand.bind(ioredis);
  ioredis.sendCommand = ((command: { promise: Promise<unknown> }, ...rest: unknown[]) => {
    const sent = (send as (...args: unknown[]) => unknown)(command, ...rest);
    command.promise.then(
      () => replied(ioTracker),
      () => replied(ioTracker),
    );
    return sent;
  }) as typeof ioredis.sendCommand;
  const nodeTracker = track(await nodeRedis.sendCommand(['CLIENT', 'INFO']));
  wrapNodeRedis(nodeRedis, nodeTracker, false);
  const atOnceTracker = track(await atOnce.sendCommand(['CLIENT', 'INFO']));
  wrapNodeRedis(atOnce, atOnceTracker, true);
  const limiterOn = (client: Redis | NodeRedis, tag: string) =>
    countedLimiter(
      {
        algorithm: 'gcra',
        rate: { limit: ADMIT_ALL, window: WINDOW_MS },
        store: new SluiceRedisStore({ client }),
        prefix: `bench-probe-${tag}`,
      },
      { shared: true },
    ).limiter;
  const candidates = [
    { name: 'ioredis', limiter: limiterOn(ioredis, 'ioredis'), tracker: ioTracker },
    { name: 'node-redis', limiter: limiterOn(nodeRedis, 'node-redis'), tracker: nodeTracker },
    { name: 'nr-at-once', limiter: limiterOn(atOnce, 'nr-at-once'), tracker: atOnceTracker },
  ].filter((c) => only === undefined || only.includes(c.name));
  const redisCpuUs = async (): Promise<number> => {
    const info = await admin.info('cpu');
    return (
      (Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])) *
      1e6
    );
  };
  const scriptCalls = async (): Promise<number> => {
    let calls = 0;
    for (const m of (await admin.info('commandstats')).matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g))
      calls += Number(m[2]);
    return calls;
  };
  const rates = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  try {
    for (const c of candidates)
      await throughput((key) => c.limiter.consume(key).then((d) => d.allowed), inFlight, 300);
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < candidates.length; i++) {
        const c = candidates[(i + r) % candidates.length] as (typeof candidates)[number];
        await admin.config('RESETSTAT');
        const t = c.tracker;
        Object.assign(t, { idleMs: 0, writes: 0, intoIdle: 0, together: 0, idleSince: performance.now() });
        const cpu = process.cpuUsage();
        const redisBefore = await redisCpuUs();
        const start = performance.now();
        const rate = await throughput((key) => c.limiter.consume(key).then((d) => d.allowed), inFlight, ms);
        const elapsed = performance.now() - start;
        if (t.written === t.replied) t.idleMs += performance.now() - t.idleSince;
        const used = process.cpuUsage(cpu);
        const redisUs = (await redisCpuUs()) - redisBefore;
        const decisions = (rate * elapsed) / 1000;
        rates.get(c.name)?.push(rate);
        process.stdout.write(
          `${c.name.padEnd(10)} round ${r + 1}: ${Math.round(rate).toString().padStart(7)}/s, ` +
            `${(decisions / (await scriptCalls())).toFixed(1)} per call, ` +
            `node ${((used.user + used.system) / decisions).toFixed(2)} µs/decision, ` +
            `redis ${(redisUs / decisions).toFixed(2)} µs/decision, ` +
            `no call at redis ${((t.idleMs / elapsed) * 100).toFixed(0)} % of the time, ` +
            `${((t.intoIdle / Math.max(1, t.writes)) * 100).toFixed(0)} % of writes found none, ` +
            `${((t.together / Math.max(1, t.writes)) * 100).toFixed(0)} % written together with another\n`,
        );
      }
    }
    const base = rates.get('ioredis');
    if (base !== undefined) {
      for (const [name, mine] of rates) {
        const ratios = mine.map((v, k) => v / (base[k] ?? Number.NaN));
        process.stdout.write(
          `${inFlight} in flight, ${name}: median ${median(ratios).toFixed(3)} × ioredis, ` +
            `from ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)} (${ratios.length} rounds)\n`,
        );
      }
    }
  } finally {
    admin.disconnect();
    ioredis.disconnect();
    nodeRedis.destroy();
    atOnce.destroy();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
