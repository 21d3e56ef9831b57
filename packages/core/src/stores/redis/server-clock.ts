import { StoreTimeoutError } from '../../resilience/store-errors';
import { LATE_CODE } from './scripts/prelude.lua';
import type { ScriptClient } from './redis-client';

/** How often a node's clock is read again while requests are sent to it, in ms. */
export const REFRESH_MS = 1000;

/** A reading older than this maps no deadline: the drift allowed since would eat the timeout. */
export const MAX_AGE_MS = 5000;

/**
 * How far the two clocks may drift apart, per ms of `performance.now()`: NTP slews each clock
 * by at most 500 ppm, so two of them drift apart by at most 1 ms a second. A step of the server's
 * clock is not bounded by it: see {@link ServerClock}.
 */
export const DRIFT = 1e-3;

/**
 * A reading whose round trip is more than this part of a request's timeout maps it no deadline:
 * the server could give up that much before the caller, and refuse requests whose reply would
 * have come in time (a busy process reads a reply late, and the reading is as loose).
 */
export const RTT_SHARE = 0.25;

/** One reading of a node's clock. */
interface Reading {
  /**
   * The server's epoch ms minus `performance.now()` when its reply was read: at most the real
   * offset then, by as much as the time from the server's reading to this process's.
   */
  readonly low: number;
  /** `performance.now()` when the reply was read. */
  readonly at: number;
  /** Its round trip, ms: more than `low` can be short by. */
  readonly rtt: number;
}

/** A reading's `low` allowed for drift until `t`. */
function aged(reading: Reading, t: number): number {
  return reading.low - DRIFT * (t - reading.at);
}

/**
 * Maps a request's deadline (when its caller stops waiting and decides by `onStoreError`, on
 * `performance.now()`) onto the Redis server's clock, so that a script that starts past it
 * decides nothing (see the prelude's `nowLua`): a request decided without Redis is not charged
 * in Redis too when its call lands late.
 *
 * The mapping can only make the server give up earlier than the caller, never later. Each node's
 * clock is read (`TIME`) about once a second while requests with a deadline go to it. The
 * server read its time at some moment between the call and the reply, so `server − reply's
 * performance.now()` is at most the real offset: the deadline mapped with it (less the drift
 * allowed since, and 1 ms for the server's whole milliseconds) is never later than the caller's.
 * It is early by up to the time from the server's reading to this process's: one way of the
 * round trip under a steady latency (so a request whose reply would land late is not decided),
 * more when this process was too busy to read the reply. The tightest recent reading is kept,
 * and a request is sent no deadline when the reading's round trip exceeds a quarter of its
 * timeout ({@link RTT_SHARE}), nor when no reading is younger than {@link MAX_AGE_MS}:
 * such a request is decided as ever, and what a late reply took is given back (see the store
 * guard). So is one decided while a step of the server's clock made the mapping late, until
 * the next reading replaces it.
 */
export class ServerClock {
  readonly #readings = new Map<string, Reading>();
  /** Per node, `performance.now()` when a reading was sent that has not come back. */
  readonly #reading = new Map<string, number>();

  constructor(private readonly client: ScriptClient) {}

  /**
   * `deadline` on the clock of the server holding `key`, in whole epoch ms, or `undefined` when
   * no recent reading maps it. Reads that server's clock again when due (through `key`).
   *
   * @param key - the request's first key
   * @param slot - its Cluster slot (0 on a single node)
   * @param deadline - `performance.now()` past which the caller no longer waits
   * @param now - `performance.now()`
   */
  deadline(key: string, slot: number, deadline: number, now: number): number | undefined {
    // By node, as the client last learnt it: each Cluster master has its own clock.
    const { client } = this;
    const node = client.isCluster ? (client.nodeOf(slot) ?? `slot ${slot}`) : '';
    const reading = this.#readings.get(node);
    if (reading === undefined || now - reading.at >= REFRESH_MS) this.#read(node, key, slot, now);
    if (reading === undefined || now - reading.at > MAX_AGE_MS || reading.rtt > RTT_SHARE * (deadline - now))
      return undefined;
    return Math.floor(deadline + aged(reading, deadline)) - 1;
  }

  /** Reads the node's clock, unless a reading sent less than {@link REFRESH_MS} ago is on its way. */
  #read(node: string, key: string, slot: number, sent: number): void {
    const pending = this.#reading.get(node);
    if (pending !== undefined && sent - pending < REFRESH_MS) return;
    this.#reading.set(node, sent);
    const done = (): void => {
      if (this.#reading.get(node) === sent) this.#reading.delete(node);
    };
    let reply: Promise<number>;
    try {
      reply = this.client.time(key, slot);
    } catch (error) {
      reply = Promise.reject(error);
    }
    reply.then(
      (ms) => {
        const at = performance.now();
        done();
        const next: Reading = { low: ms - at, at, rtt: at - sent };
        const kept = this.#readings.get(node);
        // The tighter of the two (a reply read late, the process busy, is loose), unless the
        // one kept is half way to too old: then the new one, so a step of the clock is followed.
        if (kept === undefined || next.low >= aged(kept, at) || at - kept.at >= MAX_AGE_MS / 2)
          this.#readings.set(node, next);
      },
      // A store that fails fails its requests too (decided without it): nothing to map.
      done,
    );
  }
}

/**
 * A script's `SLUICE_LATE` (the request reached Redis past its deadline, nothing taken) as the
 * {@link StoreTimeoutError} its caller would have met; any other error as it is.
 */
export function lateAsTimeout(error: unknown, timeoutMs: number | undefined): unknown {
  if (!(error instanceof Error) || !error.message.startsWith(LATE_CODE)) return error;
  return new StoreTimeoutError(timeoutMs ?? 0);
}
