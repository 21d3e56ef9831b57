import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createConcurrencyLimiter, RedisStore } from '../../src';
import { useRedisServer } from '../harness/redis-fixtures';
import { ensureCoreBuilt } from '../redis/worker-pool';

/**
 * Issue 17, across OS processes: app instances sharing one `max` through Redis, and an instance
 * SIGKILLed while it holds permits, whose leases expire so the permits come back. Each worker
 * runs the built package; the test looks at Redis through a limiter of its own.
 */
const MAX = 7;
/** Long: no lease expires by itself during a test, unless the test's clock says so. */
const LEASE_MS = 60_000;
const PER_WORKER = 20;

const WORKER = join(__dirname, 'workers', 'permit-worker.cjs');
const redis = useRedisServer();
let runs = 0;

/** One instance: a child process holding permits of `prefix`. */
class Instance {
  private constructor(readonly child: ChildProcess) {}

  static async start(dist: string, prefix: string, batch: boolean): Promise<Instance> {
    const args = [
      dist,
      String(redis.server().port),
      prefix,
      String(MAX),
      String(LEASE_MS),
      batch ? 'on' : 'off',
    ];
    const child = fork(WORKER, args, {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const instance = new Instance(child);
    await instance.next('ready');
    return instance;
  }

  async acquire(key: string, count: number): Promise<{ admitted: number; degraded: number }> {
    const reply = this.next('acquired');
    this.child.send({ type: 'acquire', key, count });
    return (await reply) as unknown as { admitted: number; degraded: number };
  }

  async release(): Promise<void> {
    const reply = this.next('released');
    this.child.send({ type: 'release' });
    await reply;
  }

  /** SIGKILL, as a crash: no release, no renewal, nothing said to Redis. */
  async crash(): Promise<void> {
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }

  private next(type: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`worker sent no '${type}' within 20 s`)), 20_000);
      const onMessage = (message: Record<string, unknown>): void => {
        if (message.type === type) done(undefined, message);
      };
      const onExit = (): void => done(new Error(`worker exited before '${type}'`));
      const done = (error?: Error, message?: Record<string, unknown>): void => {
        clearTimeout(timer);
        this.child.off('message', onMessage).off('exit', onExit);
        if (error) reject(error);
        else resolve(message as Record<string, unknown>);
      };
      this.child.on('message', onMessage).once('exit', onExit);
    });
  }
}

// Batched, each instance's 20 concurrent acquires share script calls; without, one call each.
describe.each([
  ['batched', true],
  ['batch: false', false],
] as const)('two processes sharing one max through Redis, %s', (_mode, batch) => {
  let dist: string;
  const instances: Instance[] = [];
  beforeAll(() => {
    dist = ensureCoreBuilt();
  }, 120_000);
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));
  });

  /** Two instances and a limiter looking at Redis at `clock`'s time, all on a fresh prefix. */
  const setUp = async (): Promise<{
    a: Instance;
    b: Instance;
    looking: (clock?: () => number) => ReturnType<typeof createConcurrencyLimiter>;
  }> => {
    const prefix = `procs-${++runs}`;
    const [a, b] = await Promise.all([
      Instance.start(dist, prefix, batch),
      Instance.start(dist, prefix, batch),
    ]);
    instances.push(a as Instance, b as Instance);
    const store = new RedisStore({ client: redis.client(), batch });
    const looking = (clock?: () => number) =>
      createConcurrencyLimiter({
        max: MAX,
        store,
        prefix,
        leaseMs: LEASE_MS,
        timeoutMs: 5000,
        ...(clock && { clock }),
      });
    return { a: a as Instance, b: b as Instance, looking };
  };

  test('together they admit exactly max, and every permit comes back', async () => {
    const { a, b, looking } = await setUp();
    const [fromA, fromB] = await Promise.all([a.acquire('sku', PER_WORKER), b.acquire('sku', PER_WORKER)]);
    expect(fromA.admitted + fromB.admitted).toBe(MAX);
    expect(fromA.degraded + fromB.degraded).toBe(0);
    expect(await looking().inFlight('sku')).toBe(MAX);
    await Promise.all([a.release(), b.release()]);
    expect(await looking().inFlight('sku')).toBe(0);
  });

  test("a SIGKILLed holder's permits stay taken until their leases expire, then come back", async () => {
    const { a, b, looking } = await setUp();
    const [fromA, fromB] = await Promise.all([a.acquire('sku', PER_WORKER), b.acquire('sku', PER_WORKER)]);
    expect(fromA.admitted + fromB.admitted).toBe(MAX);
    await a.crash();
    const now = looking();
    // Nobody released them: the crashed instance's permits are still counted...
    expect(await now.inFlight('sku')).toBe(MAX);
    await b.release();
    expect(await now.inFlight('sku')).toBe(fromA.admitted);
    const probe = await now.acquire('sku');
    expect(probe.allowed).toBe(fromA.admitted < MAX);
    await probe.permit?.release();
    // ...until leaseMs has passed without a renewal (the workers' leases are on Redis's clock,
    // this machine's): then every one of them is free again.
    const later = looking(() => Date.now() + LEASE_MS + 1000);
    expect(await later.inFlight('sku')).toBe(0);
    const retaken = await Promise.all(Array.from({ length: MAX + 1 }, () => later.acquire('sku')));
    expect(retaken.filter((d) => d.allowed)).toHaveLength(MAX);
  });
});
