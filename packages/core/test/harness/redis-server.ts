import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/** A redis-server process started by the harness on 127.0.0.1. */
export interface RedisProcess {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly pid: number;
  /** Its own directory under the OS temp dir. */
  readonly dir: string;
  /** Kills the process (by its PID) and removes its directory. */
  stop(): Promise<void>;
  /** SIGKILLs the process, as a crash would, and waits until it is gone. */
  crash(): Promise<void>;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Extra `redis-server` arguments, e.g. `['--cluster-enabled', 'yes']`. */
  args?: readonly string[];
  /** Also require `port + busOffset` to be free (Cluster bus port). */
  busOffset?: number;
  /** This port, e.g. to restart a killed server where its clients expect it (no retry elsewhere). */
  port?: number;
}

const STARTUP_TIMEOUT_MS = 10_000;
const ATTEMPTS = 5;

/** Every process still running, killed when this process exits however the tests ended. */
const running = new Map<number, ChildProcess>();
process.on('exit', () => {
  for (const pid of running.keys()) kill(pid, 'SIGKILL');
});

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Fails loudly when redis-server or redis-cli is missing: the Redis tests are never skipped.
 * @throws Error saying how to install Redis
 */
export function requireRedisBinaries(): void {
  for (const binary of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    if (probe.error !== undefined || probe.status !== 0) {
      throw new Error(
        `${binary} was not found on PATH: the Redis store tests run a real Redis and are never skipped. ` +
          'Install it (Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`) and run the tests again.',
      );
    }
  }
}

/**
 * Starts a redis-server on a free loopback port with no persistence (`--save '' --appendonly
 * no`) in a fresh temp directory, and resolves once it accepts connections. Retries on another
 * port when the chosen one was taken meanwhile (jest runs test files in parallel).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisProcess> {
  requireRedisBinaries();
  let lastError: unknown;
  for (let attempt = 0; attempt < (options.port === undefined ? ATTEMPTS : 1); attempt++) {
    const port = options.port ?? (await freePort(options.busOffset));
    const dir = mkdtempSync(join(tmpdir(), `sluice-redis-${port}-`));
    try {
      return await spawnServer(port, dir, options.args ?? []);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      lastError = error;
    }
  }
  throw new Error(`redis-server did not start after ${ATTEMPTS} attempts: ${String(lastError)}`);
}

function spawnServer(port: number, dir: string, extraArgs: readonly string[]): Promise<RedisProcess> {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    ...extraArgs,
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) return Promise.reject(new Error('redis-server could not be spawned'));
  running.set(pid, child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  exited.then(
    () => running.delete(pid),
    () => undefined,
  );

  const stop = async (): Promise<void> => {
    if (running.has(pid)) {
      kill(pid, 'SIGTERM');
      const timer = setTimeout(() => kill(pid, 'SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (reason: string): void => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${reason} (port ${port}):\n${output.slice(-2000)}`)));
    };
    // Its own log line, not a probe of the port: another test's server may hold the same port.
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        child.off('exit', onExit);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        const crash = async (): Promise<void> => {
          kill(pid, 'SIGKILL');
          await exited;
          rmSync(dir, { recursive: true, force: true });
        };
        resolve({ host: '127.0.0.1', port, pid, dir, stop, crash });
      }
    };
    const onExit = (): void => fail('redis-server exited during startup');
    child.once('error', (error) => fail(`redis-server failed: ${error.message}`));
    const timer = setTimeout(
      () => fail(`redis-server not ready within ${STARTUP_TIMEOUT_MS} ms`),
      STARTUP_TIMEOUT_MS,
    );
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', onExit);
  });
}
