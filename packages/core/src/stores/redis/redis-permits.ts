import { createHash } from 'node:crypto';
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
import type { RedisStoreClient, ScriptCommand } from './redis-client';
import { escapeKeyText } from './redis-keys';

const SCRIPTS = {
  acquire: ACQUIRE_PERMIT_SCRIPT,
  release: RELEASE_PERMIT_SCRIPT,
  renew: RENEW_PERMITS_SCRIPT,
} as const;
type Operation = keyof typeof SCRIPTS;

/** `sluice:permit-<op>:<digest>`: two versions of sluice sharing a client never overwrite each other's script. */
const NAMES = Object.fromEntries(
  Object.entries(SCRIPTS).map(([op, lua]) => [
    op,
    `sluice:permit-${op}:${createHash('sha1').update(lua).digest('hex').slice(0, 12)}`,
  ]),
) as Record<Operation, string>;

/** Clients whose permit scripts are defined: `defineCommand` runs once per client. */
const registered = new WeakSet<RedisStoreClient>();

/**
 * The permits of concurrency limits in Redis (see `concurrency-scripts.lua.ts`): one `EVALSHA`
 * per operation, through the same ioredis client, NOSCRIPT handling and key escaping as the
 * `RedisStore` it belongs to (`store.permits()`).
 */
export class RedisPermits implements PermitStore {
  readonly #storePrefix: string | undefined;
  readonly #commands: Record<Operation, ScriptCommand>;
  /** Each limiter prefix's escaped namespace, built once: a request escapes only its key. */
  readonly #namespaces = new Map<string, string>();

  /**
   * @param client - the store's ioredis client
   * @param storePrefix - the `RedisStore` prefix, if any
   */
  constructor(client: RedisStoreClient, storePrefix: string | undefined) {
    this.#storePrefix = storePrefix;
    if (!registered.has(client)) {
      for (const op of Object.keys(SCRIPTS) as Operation[])
        client.defineCommand(NAMES[op], { lua: SCRIPTS[op], numberOfKeys: 1 });
      registered.add(client);
    }
    const method = (op: Operation): ScriptCommand => {
      // defineCommand adds each script as a method named at run time, which TypeScript cannot see.
      const found = (client as unknown as Record<string, ScriptCommand | undefined>)[NAMES[op]];
      if (typeof found !== 'function') throw new Error('defineCommand did not add the permit script');
      return found.bind(client);
    };
    this.#commands = { acquire: method('acquire'), release: method('release'), renew: method('renew') };
  }

  async acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply> {
    const { max, leaseMs, id, nowMs } = request;
    const reply = await this.#commands.acquire(
      this.keyOf(request),
      String(max),
      String(leaseMs),
      id,
      nowMs === undefined ? '' : String(nowMs),
    );
    if (
      !Array.isArray(reply) ||
      reply.length !== 2 ||
      (reply[0] !== 0 && reply[0] !== 1) ||
      !isCount(reply[1])
    )
      throw unexpected(reply);
    return { acquired: reply[0] === 1, held: reply[1] };
  }

  async release(request: PermitReleaseRequest): Promise<void> {
    await this.#commands.release(this.keyOf(request), request.id);
  }

  async renew(request: PermitRenewRequest): Promise<PermitRenewReply> {
    const { max, leaseMs, ids, nowMs } = request;
    const reply = await this.#commands.renew(
      this.keyOf(request),
      String(max),
      String(leaseMs),
      nowMs === undefined ? '' : String(nowMs),
      ...ids,
    );
    if (!Array.isArray(reply) || !isCount(reply[0])) throw unexpected(reply);
    return { held: reply[0], lost: reply.slice(1).map(String) };
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

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

function unexpected(reply: unknown): Error {
  return new Error(`sluice: unexpected reply from the Redis permit script: ${JSON.stringify(reply)}`);
}
