// An open-loop HTTP load generator: requests leave at a fixed rate whatever the server answers
// (a closed loop, as autocannon's, would slow down with the server and hide its collapse). Raw
// keep-alive sockets and a minimal response parser: Node's `http` client costs several times
// more CPU per request, and the generator must offer ten times the server's capacity from one core.
import { connect, type Socket } from 'node:net';

/** One phase of a run: for `ms`, each path is requested at its rate (requests/s). */
export interface Phase {
  readonly ms: number;
  readonly rates: Readonly<Record<string, number>>;
}

/** What happened to the requests of one path, counted by the time they were sent. */
export interface PathTally {
  sent: number;
  /** 200 within the objective. */
  good: number;
  /** 200 after the objective. */
  late: number;
  /** 429 or 503. */
  refused: number;
  /** Given up after the client's timeout. */
  timedOut: number;
  /** Connection errors and other statuses. */
  errors: number;
  /** Latency of each 200 sent after `measureFromMs`, ms. */
  readonly admittedMs: number[];
  /** Latency of each refusal sent after `measureFromMs`, ms. */
  readonly refusedMs: number[];
}

/**
 * Per bucket of {@link BUCKET_MS}, summed over paths: sent, good and refused by send time; good
 * and served (every 200) by the time they were answered, which is what throughput counts.
 */
export interface Buckets {
  readonly sent: number[];
  readonly good: number[];
  readonly refused: number[];
  readonly goodDone: number[];
  readonly servedDone: number[];
}

export const BUCKET_MS = 100;

interface Pending {
  readonly path: string;
  readonly sentAt: number;
  readonly socket: Socket;
  done: boolean;
}

interface Conn {
  readonly socket: Socket;
  pending: Pending | undefined;
  buffer: Buffer;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Runs `phases` one after the other against `127.0.0.1:port`, then waits for the last answers
 * (at most `timeoutMs`).
 *
 * @param objectiveMs - a 200 within this counts as good
 * @param timeoutMs - each client gives up (closes its socket) after this
 * @param measureFromMs - latencies are kept of the requests sent from then on (the steady part)
 */
export async function openLoop(
  port: number,
  phases: readonly Phase[],
  {
    objectiveMs,
    timeoutMs,
    measureFromMs = 0,
  }: { objectiveMs: number; timeoutMs: number; measureFromMs?: number },
): Promise<{ tallies: Record<string, PathTally>; buckets: Buckets; seconds: number; lateTicksMs: number }> {
  const tallies: Record<string, PathTally> = {};
  const buckets: Buckets = { sent: [], good: [], refused: [], goodDone: [], servedDone: [] };
  const tally = (path: string): PathTally =>
    (tallies[path] ??= {
      sent: 0,
      good: 0,
      late: 0,
      refused: 0,
      timedOut: 0,
      errors: 0,
      admittedMs: [],
      refusedMs: [],
    });
  const idle: Conn[] = [];
  const pending: Pending[] = [];
  let pendingHead = 0;
  let started = performance.now();
  const bump = (series: number[], at: number) => {
    const index = Math.floor((at - started) / BUCKET_MS);
    while (series.length <= index) series.push(0);
    series[index] = (series[index] as number) + 1;
  };

  const finish = (request: Pending, status: number) => {
    if (request.done) return;
    request.done = true;
    const now = performance.now();
    const ms = now - request.sentAt;
    const t = tally(request.path);
    const steady = request.sentAt - started >= measureFromMs;
    if (status === 200) {
      if (steady) t.admittedMs.push(ms);
      bump(buckets.servedDone, now);
      if (ms <= objectiveMs) {
        t.good++;
        bump(buckets.good, request.sentAt);
        bump(buckets.goodDone, now);
      } else t.late++;
    } else if (status === 429 || status === 503) {
      t.refused++;
      if (steady) t.refusedMs.push(ms);
      bump(buckets.refused, request.sentAt);
    } else t.errors++;
  };

  const onData = (conn: Conn, chunk: Buffer) => {
    conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
    const end = conn.buffer.indexOf(HEADER_END);
    if (end < 0) return;
    const head = conn.buffer.toString('latin1', 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    const bodyEnd = end + 4 + Number(length?.[1] ?? 0);
    if (length === null && /\r\ntransfer-encoding: *chunked/i.test(head)) {
      const last = conn.buffer.indexOf('0\r\n\r\n', end + 4);
      if (last < 0) return;
      conn.buffer = conn.buffer.subarray(last + 5);
    } else {
      if (conn.buffer.length < bodyEnd) return;
      conn.buffer = conn.buffer.subarray(bodyEnd);
    }
    const request = conn.pending;
    conn.pending = undefined;
    if (request !== undefined) finish(request, Number(head.slice(9, 12)));
    if (/\r\nconnection: *close/i.test(head)) conn.socket.destroy();
    else if (!conn.socket.destroyed) idle.push(conn);
  };

  const open = (): Conn => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const conn: Conn = { socket, pending: undefined, buffer: Buffer.alloc(0) };
    socket.on('data', (chunk: Buffer) => onData(conn, chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (conn.pending !== undefined) finish(conn.pending, 0);
      conn.pending = undefined;
      const at = idle.indexOf(conn);
      if (at >= 0) idle.splice(at, 1);
    });
    return conn;
  };

  const send = (path: string) => {
    const conn = idle.pop() ?? open();
    const request: Pending = { path, sentAt: performance.now(), socket: conn.socket, done: false };
    conn.pending = request;
    pending.push(request);
    tally(path).sent++;
    bump(buckets.sent, request.sentAt);
    conn.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  };

  // Clients give up in the order they were sent: one sweep of the oldest every few ms.
  const giveUp = (now: number) => {
    while (pendingHead < pending.length) {
      const oldest = pending[pendingHead] as Pending;
      if (!oldest.done) {
        if (now - oldest.sentAt < timeoutMs) break;
        oldest.done = true;
        tally(oldest.path).timedOut++;
        oldest.socket.destroy();
      }
      pendingHead++;
    }
    if (pendingHead > 4096) {
      pending.splice(0, pendingHead);
      pendingHead = 0;
    }
  };

  // A few warm sockets, so the first requests do not all pay for a connection.
  for (let i = 0; i < 32; i++) idle.push(open());
  await new Promise((resolve) => setTimeout(resolve, 5));
  started = performance.now();

  let lateTicksMs = 0;
  const sentIn = new Map<string, number>();
  for (const phase of phases) {
    sentIn.clear();
    const phaseStart = performance.now();
    await new Promise<void>((resolve) => {
      let last = phaseStart;
      const tick = () => {
        const now = performance.now();
        lateTicksMs = Math.max(lateTicksMs, now - last);
        last = now;
        const elapsed = Math.min(now - phaseStart, phase.ms);
        // Each path's count so far follows its rate exactly, however late a tick comes.
        for (const [path, rate] of Object.entries(phase.rates)) {
          const due = Math.floor((elapsed * rate) / 1000);
          for (let n = sentIn.get(path) ?? 0; n < due; n++) send(path);
          sentIn.set(path, Math.max(due, sentIn.get(path) ?? 0));
        }
        giveUp(now);
        if (elapsed >= phase.ms) {
          clearInterval(timer);
          resolve();
        }
      };
      const timer = setInterval(tick, 1);
    });
  }
  const seconds = (performance.now() - started) / 1000;
  // The last requests: answered, or given up after the timeout.
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      giveUp(performance.now());
      if (pendingHead >= pending.length) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  for (const conn of idle) conn.socket.destroy();
  return { tallies, buckets, seconds, lateTicksMs };
}
