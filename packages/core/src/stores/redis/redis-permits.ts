import type {
  PermitAcquireReply,
  PermitAcquireRequest,
  PermitKey,
  PermitReleaseRequest,
  PermitRenewReply,
  PermitRenewRequest,
  PermitStore,
  PermitsTo,
} from '../permit-store';
import { PERMITS_TO } from '../permit-store';
import {
  ACQUIRE_PERMIT_SCRIPT,
  RELEASE_PERMIT_SCRIPT,
  RENEW_PERMITS_SCRIPT,
} from './concurrency-scripts.lua';
import { Op, type OwnCall } from './batch-call';
import type { Outcome } from '../outcome';
import { luaScript } from './client-adapters';
import type { ScriptClient, ScriptCommand } from './redis-client';
import { escapeKeyText } from './redis-keys';

/** The three permit scripts, each of one key, defined once per client where the client keeps scripts. */
const SCRIPTS = {
  acquire: luaScript('permit-acquire', ACQUIRE_PERMIT_SCRIPT, 1),
  release: luaScript('permit-release', RELEASE_PERMIT_SCRIPT, 1),
  renew: luaScript('permit-renew', RENEW_PERMITS_SCRIPT, 1),
} as const;
type Operation = keyof typeof SCRIPTS;

/**
 * How the store sends a request of an op with arguments of its own, its outcome told to `to`:
 * alone without batching (or when its slot is idle), else through the batch queue of its key's
 * slot, in arrival order; not sent once `timeoutMs` has passed.
 */
export type SendOwn = (
  op: Op,
  keys: readonly string[],
  own: OwnCall,
  nowMs: number | undefined,
  timeoutMs: number | undefined,
  to: Outcome<unknown>,
) => void;

/**
 * The permits of concurrency limits in Redis (see `concurrency-scripts.lua.ts`): each operation
 * one request of the `RedisStore` it belongs to (`store.permits()`), batched with the store's
 * other requests of its slot (or one `EVALSHA` of its own script, as without batching), through
 * the same client interface, NOSCRIPT handling and key escaping, on every client the store accepts.
 */
export class RedisPermits implements PermitStore {
  readonly #storePrefix: string | undefined;
  readonly #commands: Record<Operation, ScriptCommand>;
  readonly #send: SendOwn;
  /** Each limiter prefix's escaped namespace, built once: a request escapes only its key. */
  readonly #namespaces = new Map<string, string>();
  /** The last `max` and `leaseMs` sent, as text: a limiter's requests reuse one array. */
  #shared: { max: number; leaseMs: number; text: readonly string[] } = { max: 0, leaseMs: 0, text: [] };

  /** The master holding a key's permits on Cluster (see `RedisStore.nodeOf`). */
  readonly nodeOf: ((key: string) => string | undefined) | undefined;

  /** Acquire and release told to their caller (see `PERMITS_TO`). @internal */
  readonly [PERMITS_TO]: PermitsTo = {
    acquire: (request, to) => this.#acquire(request, to),
    release: (request, to) => this.#release(request, to),
  };

  /**
   * @param client - the store's client, adapted
   * @param storePrefix - the `RedisStore` prefix, if any
   * @param nodeOf - the store's `nodeOf`
   * @param send - the store's way to send a request (its batch queue)
   * @internal `RedisStore.permits()` makes it
   */
  constructor(
    client: ScriptClient,
    storePrefix: string | undefined,
    nodeOf: ((key: string) => string | undefined) | undefined,
    send: SendOwn,
  ) {
    this.#storePrefix = storePrefix;
    this.nodeOf = nodeOf;
    this.#send = send;
    this.#commands = {
      acquire: client.command(SCRIPTS.acquire),
      release: client.command(SCRIPTS.release),
      renew: client.command(SCRIPTS.renew),
    };
  }

  acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply> {
    return promised((to) => this.#acquire(request, to));
  }

  release(request: PermitReleaseRequest): Promise<void> {
    return promised<unknown>((to) => this.#release(request, to)).then(nothing);
  }

  renew(request: PermitRenewRequest): Promise<PermitRenewReply> {
    return promised((to) => this.#renew(request, to));
  }

  #acquire(request: PermitAcquireRequest, to: Outcome<PermitAcquireReply>): void {
    const { max, leaseMs, nowMs } = request;
    const keys = [this.keyOf(request)];
    const own = new AcquireOp(this.#commands.acquire, keys, this.#sharedOf(max, leaseMs), request.id, nowMs);
    this.#send(Op.permitAcquire, keys, own, nowMs, request.timeoutMs, to as Outcome<unknown>);
  }

  #renew(request: PermitRenewRequest, to: Outcome<PermitRenewReply>): void {
    const { max, leaseMs, ids, nowMs } = request;
    const keys = [this.keyOf(request)];
    const command = this.#commands.renew;
    const own: OwnCall = {
      shared: this.#sharedOf(max, leaseMs),
      args: ids,
      alone: () => command(keys, [String(max), String(leaseMs), timeArg(nowMs), ...ids]),
      readAlone: renewReply,
      read: (batch, at) => {
        // In a batch: the live leases, how many ids had lapsed, then those ids.
        const lost = batch[at + 1];
        if (!isCount(lost)) throw unexpected(batch);
        return [renewReply([batch[at], ...batch.slice(at + 2, at + 2 + lost)]), 2 + lost];
      },
    };
    this.#send(Op.permitRenew, keys, own, nowMs, request.timeoutMs, to as Outcome<unknown>);
  }

  #release(request: PermitReleaseRequest, to: Outcome<unknown>): void {
    const keys = [this.keyOf(request)];
    const own = new ReleaseOp(this.#commands.release, keys, [request.id]);
    this.#send(Op.permitRelease, keys, own, undefined, request.timeoutMs, to);
  }

  /** `max` and `leaseMs` as the batch script's shared values of a run (see `OwnCall.shared`). */
  #sharedOf(max: number, leaseMs: number): readonly string[] {
    const last = this.#shared;
    if (last.max === max && last.leaseMs === leaseMs) return last.text;
    this.#shared = { max, leaseMs, text: [String(max), String(leaseMs)] };
    return this.#shared.text;
  }

  /**
   * The Redis key of a key's permits, `[<store prefix>:]<limiter prefix>:{<key>}:permits`, every
   * text part escaped as the rate limiter's keys are (`redis-keys.ts`): the user's key is the
   * hash tag, so it picks the Cluster slot and can leave neither the namespace nor its slot.
   */
  keyOf({ prefix, key }: PermitKey): string {
    let namespace = this.#namespaces.get(prefix);
    if (namespace === undefined) {
      namespace =
        this.#storePrefix === undefined
          ? escapeKeyText(prefix)
          : `${escapeKeyText(this.#storePrefix)}:${escapeKeyText(prefix)}`;
      this.#namespaces.set(prefix, namespace);
    }
    return `${namespace}:{${escapeKeyText(key)}}:permits`;
  }
}

/**
 * An acquire as the batch script sends it: its lease id its own argument, `max` and `leaseMs`
 * shared with the run. One object with its methods on its prototype: no closures per request.
 */
class AcquireOp implements OwnCall {
  readonly args: readonly string[];

  constructor(
    private readonly command: ScriptCommand,
    private readonly keys: readonly string[],
    readonly shared: readonly string[],
    id: string,
    private readonly nowMs: number | undefined,
  ) {
    this.args = [id];
  }

  alone(): Promise<unknown> {
    return this.command(this.keys, [...this.shared, this.args[0] as string, timeArg(this.nowMs)]);
  }

  readAlone(reply: unknown): PermitAcquireReply {
    if (!Array.isArray(reply) || reply.length !== 2) throw unexpected(reply);
    return acquireReply(reply[0], reply[1], reply);
  }

  read(batch: readonly unknown[], at: number): readonly [PermitAcquireReply, number] {
    return [acquireReply(batch[at], batch[at + 1], batch), 2];
  }
}

/** What a release reads from a batch reply: nothing, in one element (one tuple for all). */
const RELEASED = [undefined, 1] as const;

/** A release as the batch script sends it: its lease id its own argument. */
class ReleaseOp implements OwnCall {
  constructor(
    private readonly command: ScriptCommand,
    private readonly keys: readonly string[],
    readonly args: readonly string[],
  ) {}

  alone(): Promise<unknown> {
    return this.command(this.keys, this.args);
  }

  read(batch: readonly unknown[], at: number): typeof RELEASED {
    if (!isCount(batch[at])) throw unexpected(batch);
    return RELEASED;
  }
}

/** A call told to an outcome, as a promise (the public methods: one closure per call is fine there). */
function promised<T>(run: (to: Outcome<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      run({ answered: resolve, failed: reject });
    } catch (error) {
      reject(error);
    }
  });
}

function nothing(): void {
  // A release resolves to nothing.
}

function timeArg(nowMs: number | undefined): string {
  return nowMs === undefined ? '' : String(nowMs);
}

/** `{ acquired (1 or 0), live leases }`, as the acquire script replies (`reply`: for the error). */
function acquireReply(acquired: unknown, held: unknown, reply: unknown): PermitAcquireReply {
  if ((acquired !== 0 && acquired !== 1) || !isCount(held)) throw unexpected(reply);
  return { acquired: acquired === 1, held };
}

/** `{ live leases, lapsed ids... }`, as the renew script replies. */
function renewReply(reply: unknown): PermitRenewReply {
  if (!Array.isArray(reply) || !isCount(reply[0])) throw unexpected(reply);
  return { held: reply[0], lost: reply.slice(1).map(String) };
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function unexpected(reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis permit script: ${JSON.stringify(reply)}`);
}
