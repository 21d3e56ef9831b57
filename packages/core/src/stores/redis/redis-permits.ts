import type {
  PermitAcquireReply,
  PermitAcquireRequest,
  PermitKey,
  PermitReleaseRequest,
  PermitRenewReply,
  PermitRenewRequest,
  PermitStore,
} from '../permit-store';
import {
  ACQUIRE_PERMIT_SCRIPT,
  RELEASE_PERMIT_SCRIPT,
  RENEW_PERMITS_SCRIPT,
} from './concurrency-scripts.lua';
import { Op, type OwnCall } from './batch-call';
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
 * How the store sends a request of an op with arguments of its own: alone without batching (or
 * when its slot is idle), else through the batch queue of its key's slot, in arrival order; not
 * sent once `timeoutMs` has passed.
 */
export type SendOwn = (
  op: Op,
  keys: readonly string[],
  own: OwnCall,
  nowMs: number | undefined,
  timeoutMs: number | undefined,
) => Promise<unknown>;

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

  /**
   * @param client - the store's client, adapted
   * @param storePrefix - the `RedisStore` prefix, if any
   * @param send - the store's way to send a request (its batch queue)
   */
  constructor(client: ScriptClient, storePrefix: string | undefined, send: SendOwn) {
    this.#storePrefix = storePrefix;
    this.#send = send;
    this.#commands = {
      acquire: client.command(SCRIPTS.acquire),
      release: client.command(SCRIPTS.release),
      renew: client.command(SCRIPTS.renew),
    };
  }

  // Not async: the store's promise is the caller's (a throw made a rejection, as async would).
  acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply> {
    try {
      return this.#acquire(request);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply> {
    const { max, leaseMs, id, nowMs } = request;
    const keys = [this.keyOf(request)];
    const shared = this.#sharedOf(max, leaseMs);
    const args = [id];
    const command = this.#commands.acquire;
    return this.#send(
      Op.permitAcquire,
      keys,
      {
        shared,
        args,
        alone: () => command(keys, [...shared, id, timeArg(nowMs)]),
        readAlone: acquireReply,
        read: (batch, at) => [acquireReply(batch.slice(at, at + 2)), 2],
      },
      nowMs,
      request.timeoutMs,
    ) as Promise<PermitAcquireReply>;
  }

  async release(request: PermitReleaseRequest): Promise<void> {
    const keys = [this.keyOf(request)];
    const args = [request.id];
    const command = this.#commands.release;
    await this.#send(
      Op.permitRelease,
      keys,
      {
        args,
        alone: () => command(keys, args),
        read: (batch, at) => {
          if (!isCount(batch[at])) throw unexpected(batch);
          return [undefined, 1];
        },
      },
      undefined,
      request.timeoutMs,
    );
  }

  async renew(request: PermitRenewRequest): Promise<PermitRenewReply> {
    const { max, leaseMs, ids, nowMs } = request;
    const keys = [this.keyOf(request)];
    const command = this.#commands.renew;
    const reply = await this.#send(
      Op.permitRenew,
      keys,
      {
        shared: this.#sharedOf(max, leaseMs),
        args: ids,
        alone: () => command(keys, [String(max), String(leaseMs), timeArg(nowMs), ...ids]),
        readAlone: renewReply,
        read: (batch, at) => {
          // In a batch: the live leases, how many ids were lost, then those ids.
          const lost = batch[at + 1];
          if (!isCount(lost)) throw unexpected(batch);
          return [renewReply([batch[at], ...batch.slice(at + 2, at + 2 + lost)]), 2 + lost];
        },
      },
      nowMs,
      request.timeoutMs,
    );
    return reply as PermitRenewReply;
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

function timeArg(nowMs: number | undefined): string {
  return nowMs === undefined ? '' : String(nowMs);
}

/** `{ acquired (1 or 0), live leases }`, as the acquire script replies. */
function acquireReply(reply: unknown): PermitAcquireReply {
  if (!Array.isArray(reply) || reply.length !== 2 || (reply[0] !== 0 && reply[0] !== 1) || !isCount(reply[1]))
    throw unexpected(reply);
  return { acquired: reply[0] === 1, held: reply[1] };
}

/** `{ live leases, lost ids... }`, as the renew script replies. */
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
