/** The store did not answer within `timeoutMs`. */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  /**
   * @param timeoutMs - the limiter's `timeoutMs`
   * @param eventLoopLagMs - how much later than `timeoutMs` the timer fired, in whole ms: time
   * this process was too busy to run it (0 when it fired on time)
   */
  constructor(
    readonly timeoutMs: number,
    readonly eventLoopLagMs = 0,
  ) {
    super(
      `the limiter's store did not answer within ${timeoutMs} ms (timeoutMs)` +
        (eventLoopLagMs > 0 ? `; the event loop was ${eventLoopLagMs} ms late to notice` : ''),
    );
  }
}

/**
 * The store answered one key's request with numbers no step gives (the script read odd state at
 * that key): an error of that request alone, of scope `'key'` ({@link storeErrorScope}), never a
 * sign that the store is down.
 */
export class StoreKeyError extends Error {
  override readonly name = 'StoreKeyError';
}

/** Any thrown value as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Whose fault a failed store call was (see {@link storeErrorScope}):
 * - `'key'`: the store answered, with an error about the data of the one key the call was for
 *   (or the script run on it). Other keys are unaffected, and the store is up.
 * - `'slot'`: the key's Redis Cluster slot is moving between masters (resharding) and the client
 *   did not get through: other slots, and the master, are unaffected.
 * - `'store'`: the store itself failed, for every key: no connection, no answer within
 *   `timeoutMs`, or a server that cannot serve now.
 */
export type StoreErrorScope = 'key' | 'slot' | 'store';

/**
 * Codes of a server that cannot serve now, whatever the key: out of memory, loading its data
 * set, a replica whose master is down, a cluster without a quorum or in resharding, a read-only
 * replica after a failover, a script running too long, a failing disk, missing ACL rights.
 */
const SERVER_CODES =
  /^(?:OOM|LOADING|MASTERDOWN|CLUSTERDOWN|READONLY|BUSY|NOREPLICAS|MISCONF|NOSCRIPT|NOPERM|NOAUTH|WRONGPASS|EXECABORT|UNKILLABLE)\b/;

/**
 * A Cluster slot on the move, as Redis says it (`TRYAGAIN`: a call of several keys of a slot
 * half migrated; `MOVED`, `ASK`: redirections the client did not follow), as ioredis gives up
 * after following them, and as node-redis fails to follow an `ASK` to a master that owns no slot
 * yet (a shard just added).
 */
const SLOT_MOVING =
  /^(?:(?:Too many Cluster redirections\. Last error: (?:ReplyError: )?)?(?:TRYAGAIN|MOVED|ASK)\b|Cannot find node )/;

/**
 * Redis 6 and earlier wrap an error raised inside a script in this (7 passes the inner code);
 * an error the server raised before running a command (`-OOM`, `-READONLY`) comes with the
 * script's line once more and its leading `-`.
 */
const SCRIPT_WRAPPER =
  /^ERR Error running script \(call to [^)]*\): @user_script:\d+: (?:@user_script: \d+: )?-?/;

/** Errors of the Lua machinery itself, not of the key's data: the server's trouble. */
const LUA_TROUBLE = /not enough memory|Script killed/i;

/**
 * Classifies a store call's failure, from the error text Redis sends (the same for ioredis,
 * node-redis and Valkey):
 *
 * - `'key'` — a data error about one key: `WRONGTYPE` (the key holds another type), or an error
 *   raised while a script ran on it (Redis 7: `ERR user_script:<line>: …` or `<CODE> … script:
 *   <sha>, on @user_script:<line>.`; Redis 6: `ERR Error running script (call to f_<sha>):
 *   @user_script:<line>: …`), such as Lua arithmetic on a value that is not a number. sluice's
 *   own scripts read bad data as no state, so this is left for stores and scripts of others.
 * - `'store'` — everything else: timeouts ({@link StoreTimeoutError}), connection errors
 *   (refused, reset, closed, offline queue full, too many retries), replies of a server that
 *   cannot serve now (`OOM`, `LOADING`, `MASTERDOWN`, `CLUSTERDOWN`, `READONLY`, `BUSY`,
 *   `NOREPLICAS`, `MISCONF`, `NOPERM`, … — even when raised inside a script), Lua
 *   running out of memory or killed, a reply of an unexpected shape, anything unknown.
 * - `'slot'` — the key's Cluster slot is moving: `TRYAGAIN`, `MOVED` or `ASK` that reached
 *   sluice (directly, or as ioredis's last error once it gave up redirecting), node-redis's
 *   `Cannot find node` for an `ASK` to a master it does not know yet.
 *
 * Only `'store'` failures count toward opening the circuit: one key's bad data must never hand
 * every other key to `onStoreError`. Either way the request itself is decided by `onStoreError`.
 */
export function storeErrorScope(error: unknown): StoreErrorScope {
  if (!(error instanceof Error) || error instanceof StoreTimeoutError) return 'store';
  if (error instanceof StoreKeyError) return 'key';
  const message = error.message;
  if (SLOT_MOVING.test(message)) return 'slot';
  const wrapped = SCRIPT_WRAPPER.exec(message);
  const inner = wrapped === null ? message : message.slice(wrapped[0].length);
  if (SERVER_CODES.test(inner) || LUA_TROUBLE.test(inner)) return 'store';
  if (/^WRONGTYPE\b/.test(inner)) return 'key';
  if (wrapped !== null) return 'key';
  // Redis 7: a Lua runtime error, or a command's error inside a script, names the script.
  if (/^ERR user_script:\d+:/.test(message) || / on @user_script:\d+\.?$/.test(message)) return 'key';
  return 'store';
}
