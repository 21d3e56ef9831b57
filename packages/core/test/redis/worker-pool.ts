import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { LimiterOptions, PolicyOptions } from '../../src';

const CORE = resolve(__dirname, '../..');
const DIST = join(CORE, 'dist', 'index.cjs');
const WORKER = join(__dirname, 'workers', 'consume-worker.cjs');

/** Newest modification time of any file under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds `@sluice/core` when `dist` is missing or older than its sources (`pnpm test` builds
 * first, so this only runs when jest is started on its own). It runs the workspace's own `tsup`
 * (the core's build script), so it needs no `pnpm` on PATH.
 */
export function ensureCoreBuilt(): string {
  if (!existsSync(DIST) || statSync(DIST).mtimeMs < newestMtime(join(CORE, 'src'))) {
    execFileSync(join(CORE, '../../node_modules/.bin/tsup'), [], {
      cwd: CORE,
      stdio: 'pipe',
      timeout: 120_000,
    });
  }
  return DIST;
}

/** What one run of {@link WorkerPool.run} tells. */
export interface RunResult {
  admitted: number;
  /** Admitted with `delayMs > 0`. */
  delayed: number;
  /** Decided without Redis (by `onStoreError`): must stay 0. */
  degraded: number;
  errors: string[];
}

/** Options of one run: every worker fires `perWorker` consumes on one key at the same moment. */
export interface RunOptions {
  key: string;
  prefix: string;
  policy: PolicyOptions;
  perWorker: number;
  /** Give each worker's limiter `clock: Date.now` (skewed), so it sends its own time. */
  sendClock?: boolean;
  /** Only these workers (indexes) fire. @defaultValue all */
  workers?: readonly number[];
  /** Each worker's limiter leases units (createLimiter's `lease`). @defaultValue no leasing */
  lease?: LimiterOptions['lease'];
}

/** OS processes (child_process.fork) running the built package against one Redis. */
export class WorkerPool {
  readonly #workers: ChildProcess[];
  #runs = 0;

  private constructor(workers: ChildProcess[]) {
    this.#workers = workers;
  }

  /** Forks one worker per skew (ms added to its `Date.now`) and waits until each is connected. */
  static async start(port: number, skewsMs: readonly number[]): Promise<WorkerPool> {
    const dist = ensureCoreBuilt();
    const workers = skewsMs.map((skew) =>
      // execArgv: [] so the child does not inherit jest's flags.
      fork(WORKER, [dist, String(port), String(skew)], {
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    const pool = new WorkerPool(workers);
    try {
      await Promise.all(workers.map((worker) => pool.#next(worker, 'ready')));
    } catch (error) {
      await pool.stop();
      throw error;
    }
    return pool;
  }

  /** One run: tells every worker to fire at once, sums what they admitted. */
  async run(options: RunOptions): Promise<RunResult> {
    const id = ++this.#runs;
    const workers = options.workers?.map((i) => this.#workers[i] as ChildProcess) ?? this.#workers;
    const done = workers.map((worker) => this.#next(worker, 'done'));
    for (const worker of workers) {
      worker.send({
        type: 'run',
        id,
        key: options.key,
        prefix: options.prefix,
        policy: options.policy,
        count: options.perWorker,
        sendClock: options.sendClock === true,
        lease: options.lease,
      });
    }
    const results = (await Promise.all(done)) as unknown as RunResult[];
    return {
      admitted: results.reduce((sum, r) => sum + r.admitted, 0),
      delayed: results.reduce((sum, r) => sum + r.delayed, 0),
      degraded: results.reduce((sum, r) => sum + r.degraded, 0),
      errors: results.flatMap((r) => r.errors),
    };
  }

  /** Asks every worker to exit and waits for it; kills (by its PID) any still running after 2 s. */
  async stop(): Promise<void> {
    await Promise.all(
      this.#workers.map(async (worker) => {
        if (worker.exitCode !== null || worker.signalCode !== null) return;
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        if (worker.connected) worker.send({ type: 'exit' });
        const timer = setTimeout(
          () => worker.pid !== undefined && process.kill(worker.pid, 'SIGKILL'),
          2_000,
        );
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  #next(worker: ChildProcess, type: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`worker ${worker.pid} sent no '${type}' within 20 s`)),
        20_000,
      );
      const onMessage = (message: Record<string, unknown>): void => {
        if (message.type === type) finish(undefined, message);
      };
      const onExit = (code: number | null): void =>
        finish(new Error(`worker ${worker.pid} exited (${code}) before '${type}'`));
      const finish = (error?: Error, message?: Record<string, unknown>): void => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('exit', onExit);
        if (error) reject(error);
        else resolve(message as Record<string, unknown>);
      };
      worker.on('message', onMessage).once('exit', onExit);
    });
  }
}
