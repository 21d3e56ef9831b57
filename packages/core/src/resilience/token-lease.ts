import { SluiceConfigError } from '../policy/config-error';
import { heldKey, ownedKeyText } from '../stores/key-digest';
import type { StoreRequest } from '../stores/store';
import type { Policy } from '../types';
import type { GuardedRequest, GuardedVerdict } from './store-guard';

/** `lease` option: take `size` units per store call for a hot key, spend them locally for up to `maxStaleMs`. */
export interface LeaseOption {
  /** Units taken from the store in one call. Integer >= 2. */
  size: number;
  /** How long local units may be spent before they are dropped: ms or a duration like `'1s'`. @defaultValue 1000 */
  maxStaleMs?: number | string;
}

interface Lease {
  units: number;
  readonly expiresAt: number;
  readonly limit: number;
  readonly resetAt: number;
}

/** The store's last refusal of a key: requests waiting on that key's fetch reuse it until `until`. */
interface Refusal {
  readonly verdict: GuardedVerdict;
  /** The cost refused: a request of at least this cost is refused too. */
  readonly cost: number;
  /** Epoch ms at which the refused cost may pass. */
  readonly until: number;
  readonly resetAt: number;
}

type Remote = (request: GuardedRequest) => Promise<GuardedVerdict>;

/** A leasing path: its decisions, and the give-back of units it admitted. */
export type Leasing = Remote & {
  /**
   * Gives back `cost` units an admission took (a later limit of the request refused it): they
   * join the key's local lease, spent here or dropped after `maxStaleMs` like any leased unit.
   */
  giveBack(key: string, cost: number, taken: GuardedVerdict): void;
  /**
   * After a reset of `key`: drops its local lease (units taken before the reset would admit past
   * the fresh limit) and its remembered refusal (it would refuse the fresh key until its time).
   */
  forget(key: string): void;
};

/**
 * Most keys with a lease or a remembered refusal at once: a flood of keys cannot grow them, and
 * keys are held as the store holds them (`heldKey`), so neither can long keys.
 */
const MAX_KEYS = 10_000;

/**
 * Token leasing for hot keys: one store call takes `size` units, and this instance spends them
 * locally until they run out or `maxStaleMs` passes, so a hot key's admitted traffic is no longer
 * bounded by one Redis shard's throughput (the store sees about one call per `size` admissions).
 *
 * The units come out of the shared limit, so leasing never admits more than the limit; its cost
 * is the other way: units an instance leased and did not spend within `maxStaleMs` are dropped
 * (at most `size - 1` per instance per `maxStaleMs`), and an instance with local units admits
 * while another, without, is refused. When fewer than `size` units are left, what is left is
 * leased (or, when another instance took it first, the request asks for its own cost), so the
 * last units are not stranded. Requests for a key whose lease is being fetched wait for that
 * one call instead of each fetching a lease, and once the store has refused the key until T,
 * the requests still waiting for it are refused here until T: a flood queued behind a spent
 * limit costs no more store calls (later arrivals meet the limiter's block cache first). When the
 * store fails a fetch, the requests that waited on it are decided by `onStoreError` (`degrade`)
 * at once: none waits longer than the one call's `timeoutMs`.
 */
export function leasing(
  remote: Remote,
  size: number,
  maxStaleMs: number,
  now: () => number,
  degrade: Remote,
): Leasing {
  const leases = new Map<string, Lease>();
  const refusals = new Map<string, Refusal>();
  /** By key, the fetch in flight: settles with its verdict (`undefined` if it rejected). */
  const fetching = new Map<string, Promise<GuardedVerdict | undefined>>();

  // `key` below is the request's key as held (`heldKey`), worked out once per request.
  const refused = (request: StoreRequest, key: string, at: number): GuardedVerdict | undefined => {
    const refusal = refusals.get(key);
    if (refusal === undefined) return undefined;
    if (at >= refusal.until) {
      refusals.delete(key);
      return undefined;
    }
    if (request.cost < refusal.cost) return undefined;
    return {
      ...refusal.verdict,
      retryAfterMs: refusal.until - at,
      resetMs: Math.max(refusal.until, refusal.resetAt) - at,
    };
  };

  const remember = (
    request: StoreRequest,
    key: string,
    at: number,
    verdict: GuardedVerdict,
  ): GuardedVerdict => {
    if (!verdict.allowed && verdict.degraded === undefined && verdict.reason === 'limited') {
      if (refusals.size >= MAX_KEYS) refusals.clear();
      refusals.set(ownedKeyText(key), {
        verdict,
        cost: request.cost,
        until: at + verdict.retryAfterMs,
        resetAt: at + verdict.resetMs,
      });
    }
    return verdict;
  };

  const fromLease = (request: StoreRequest, key: string, at: number): GuardedVerdict | undefined => {
    const lease = leases.get(key);
    if (lease === undefined || at >= lease.expiresAt || lease.units < request.cost) return undefined;
    lease.units -= request.cost;
    if (lease.units === 0) leases.delete(key);
    const resetMs = Math.max(0, lease.resetAt - at);
    return {
      allowed: true,
      limit: lease.limit,
      remaining: lease.units,
      resetMs,
      retryAfterMs: 0,
      delayMs: 0,
    };
  };

  /** The request spends `units` just taken from the store; the rest become the key's local lease. */
  const keep = (
    request: StoreRequest,
    key: string,
    at: number,
    units: number,
    taken: GuardedVerdict,
  ): GuardedVerdict => {
    refusals.delete(key);
    if (units > request.cost) {
      if (leases.size >= MAX_KEYS) leases.clear();
      leases.set(ownedKeyText(key), {
        units: units - request.cost,
        expiresAt: at + maxStaleMs,
        limit: taken.limit,
        resetAt: at + taken.resetMs,
      });
    }
    return { ...taken, remaining: taken.remaining + units - request.cost };
  };

  const lease = async (request: StoreRequest, key: string, at: number): Promise<GuardedVerdict> => {
    const taken = await remote({ ...request, cost: size, ownCost: request.cost });
    if (taken.degraded !== undefined) return taken; // the store is away: its fallback decided
    if (taken.allowed) return keep(request, key, at, size, taken);
    // Fewer than `size` units left: what is left becomes a smaller lease, so the last units
    // cost one call, not one each (another instance may take them first: then this one asks
    // for its own cost).
    const left = Math.min(size - 1, taken.remaining);
    if (left > request.cost) {
      const rest = await remote({ ...request, cost: left, ownCost: request.cost });
      if (rest.degraded !== undefined) return rest;
      if (rest.allowed) return keep(request, key, at, left, rest);
    }
    return remember(request, key, at, await remote(request));
  };

  const consume: Remote = async (request) => {
    if (request.cost === 0) return remote(request);
    const key = heldKey(request.key);
    for (;;) {
      const at = now();
      const local = fromLease(request, key, at) ?? refused(request, key, at);
      if (local !== undefined) return local;
      const pending = fetching.get(key);
      if (pending === undefined) break;
      // Another request is fetching this key's lease: share it. When the store failed it (or its
      // circuit is open), this request has waited as long as it may: `onStoreError` decides it,
      // as the batch-mates of a failed call are decided, instead of a fetch of its own after it.
      const fetched = await pending;
      if (fetched?.degraded !== undefined) return degrade(request);
    }
    const at = now();
    const result = lease(request, key, at);
    const settled = result.then(
      (verdict) => verdict,
      () => undefined,
    );
    fetching.set(ownedKeyText(key), settled);
    void settled.then(() => {
      if (fetching.get(key) === settled) fetching.delete(key);
    });
    return result;
  };
  const giveBack: Leasing['giveBack'] = (given, cost, taken) => {
    const at = now();
    const key = heldKey(given);
    const lease = leases.get(key);
    if (lease !== undefined && at < lease.expiresAt) {
      lease.units += cost;
      return;
    }
    if (leases.size >= MAX_KEYS) leases.clear();
    leases.set(ownedKeyText(key), {
      units: cost,
      expiresAt: at + maxStaleMs,
      limit: taken.limit,
      resetAt: at + taken.resetMs,
    });
  };
  const forget: Leasing['forget'] = (given) => {
    const key = heldKey(given);
    leases.delete(key);
    refusals.delete(key);
  };
  return Object.assign(consume, { giveBack, forget });
}

/** Validates `lease` for a policy: `[size, maxStaleMs]`, or undefined without leasing. */
export function resolveLease(
  value: unknown,
  policy: Policy,
  parseMs: (option: string, value: unknown) => number,
): [number, number] | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.keys(value).some((k) => k !== 'size' && k !== 'maxStaleMs')
  ) {
    throw new SluiceConfigError('lease', value, 'expected { size: number, maxStaleMs?: milliseconds }');
  }
  const { size, maxStaleMs = 1000 } = value as { size?: unknown; maxStaleMs?: unknown };
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 2) {
    throw new SluiceConfigError('lease.size', size, 'must be a whole number >= 2');
  }
  if (policy.algorithm === 'leaky-bucket' || policy.maxWaitMs > 0 || policy.warmupMs > 0) {
    throw new SluiceConfigError(
      'lease',
      value,
      'cannot lease units that are delayed (leaky-bucket, queue, warmup)',
    );
  }
  const capacity =
    policy.algorithm === 'gcra' || policy.algorithm === 'token-bucket' ? policy.burst + 1 : policy.limit;
  if (size > capacity) {
    throw new SluiceConfigError('lease.size', size, `must be at most the limit's capacity (${capacity})`);
  }
  return [size, parseMs('lease.maxStaleMs', maxStaleMs)];
}
