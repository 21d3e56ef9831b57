import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A redis-server this bench started on 127.0.0.1 (never the shared one on 6379). */
export interface BenchRedis {
  readonly port: number;
  readonly pid: number;
  /** Kills it by its PID and removes its directory. */
  stop(): Promise<void>;
}

const started = new Set<number>();
process.on('exit', () => {
  for (const pid of started) killPid(pid, 'SIGKILL');
});

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server on a free loopback port, without persistence, optionally pinned to one
 * CPU with `taskset`, and resolves once it accepts connections.
 * @throws Error saying how to install Redis when `redis-server` is missing
 */
export async function startRedis({ cpu }: { cpu?: number } = {}): Promise<BenchRedis> {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      'redis-server was not found on PATH: the bench starts its own. Install it ' +
        '(Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`).',
    );
  }
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), `sluice-bench-redis-${port}-`));
    try {
      return await spawnRedis(port, dir, cpu);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      lastError = error;
    }
  }
  throw new Error(`redis-server did not start: ${String(lastError)}`);
}

function spawnRedis(port: number, dir: string, cpu: number | undefined): Promise<BenchRedis> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child =
    cpu === undefined
      ? spawn('redis-server', [...args, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('taskset', ['-c', String(cpu), 'redis-server', ...args, '--dir', dir], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  const pid = child.pid;
  if (pid === undefined) return Promise.reject(new Error('redis-server could not be spawned'));
  started.add(pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (started.delete(pid)) {
      killPid(pid, 'SIGTERM');
      const timer = setTimeout(() => killPid(pid, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail('not ready within 10 s'), 10_000);
    function fail(reason: string): void {
      clearTimeout(timer);
      void stop().then(() =>
        reject(new Error(`redis-server ${reason} (port ${port}): ${output.slice(-500)}`)),
      );
    }
    const onExit = (): void => fail('exited during startup');
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      child.stderr?.resume();
      resolve({ port, pid, stop });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', onExit);
  });
}
