import type { Socket } from 'node:net';
import Redis from 'ioredis';

/** Commands a framed pass made Redis run. */
export interface CommandCount {
  /** Commands the client sent (MONITOR lines from its connection), by name. */
  readonly sent: Record<string, number>;
  /** Commands run inside scripts (MONITOR lines from `lua`), by name. */
  readonly inScripts: Record<string, number>;
  /** INFO commandstats deltas (sent and in scripts), bench framing excluded. */
  readonly executed: number;
}

const FRAME = 'sluice-bench-frame';

function commandStats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    calls.set(match[1] as string, Number(match[2]));
  return calls;
}

function localAddress(client: Redis): string {
  const stream = (client as unknown as { stream?: Socket }).stream;
  return `${stream?.localAddress ?? '127.0.0.1'}:${stream?.localPort ?? 0}`;
}

/**
 * Runs `pass` and counts the Redis commands it caused: with MONITOR (what `client` sent, what
 * scripts ran) between two ECHO frames sent on `client`, and with INFO commandstats deltas.
 * `client` must be the only connection the pass uses.
 */
export async function countCommands(
  port: number,
  client: Redis,
  pass: () => Promise<void>,
): Promise<CommandCount> {
  const admin = new Redis({ host: '127.0.0.1', port });
  // `admin` is ready (its ready-check INFO answered) before MONITOR starts: a command line that
  // reaches the monitor in the same packet as MONITOR's +OK arrives before ioredis has switched
  // that connection to monitoring, and it fails with "Command queue state error".
  await admin.ping();
  // monitor() opens a connection of its own beside `admin`.
  const monitor = await admin.monitor();
  try {
    const source = localAddress(client);
    const sent: Record<string, number> = {};
    const inScripts: Record<string, number> = {};
    let framing = 0;
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    monitor.on('monitor', (_time: string, args: string[], from: string) => {
      const name = String(args[0]).toLowerCase();
      if (name === 'echo' && args[1] === FRAME && from === source) {
        if (++framing === 2) ended();
        return;
      }
      if (framing !== 1) return;
      if (from === 'lua') inScripts[name] = (inScripts[name] ?? 0) + 1;
      else if (from === source) sent[name] = (sent[name] ?? 0) + 1;
    });
    const before = commandStats(await admin.info('commandstats'));
    await client.echo(FRAME);
    await pass();
    await client.echo(FRAME);
    const after = commandStats(await admin.info('commandstats'));
    await end;
    let executed = 0;
    for (const [name, calls] of after) {
      if (name === 'info' || name === 'echo' || name === 'monitor') continue;
      executed += calls - (before.get(name) ?? 0);
    }
    return { sent, inScripts, executed };
  } finally {
    admin.disconnect();
    monitor.disconnect();
  }
}

/** Sum of counts. */
export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}
