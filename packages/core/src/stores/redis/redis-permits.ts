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
 * The permits of concurrency limits in Redis (see `concurrency-scripts.lua.ts`): one `EVALSHA`
 * per operation, through the same client interface, NOSCRIPT handling and key escaping as the
 * `RedisStore` it belongs to (`store.permits()`), on every client the store accepts.
 */
export class RedisPermits implements PermitStore {
  readonly #storePrefix: string | undefined;
  readonly #commands: Record<Operation, ScriptCommand>;
  /** Each limiter prefix's escaped namespace, built once: a request escapes only its key. */
  readonly #namespaces = new Map<string, string>();

  /**
   * @param client - the store's client, adapted
   * @param storePrefix - the `RedisStore` prefix, if any
   */
  constructor(client: ScriptClient, storePrefix: string | undefined) {
    this.#storePrefix = storePrefix;
    this.#commands = {
      acquire: client.command(SCRIPTS.acquire),
      release: client.command(SCRIPTS.release),
      renew: client.command(SCRIPTS.renew),
    };
  }

  async acquire(request: PermitAcquireRequest): Promise<PermitAcquireReply> {
    const { max, leaseMs, id, nowMs } = request;
    const reply = await this.#commands.acquire(
      [this.keyOf(request)],
      [String(max), String(leaseMs), id, nowMs === undefined ? '' : String(nowMs)],
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
    await this.#commands.release([this.keyOf(request)], [request.id]);
  }

  async renew(request: PermitRenewRequest): Promise<PermitRenewReply> {
    const { max, leaseMs, ids, nowMs } = request;
    const reply = await this.#commands.renew(
      [this.keyOf(request)],
      [String(max), String(leaseMs), nowMs === undefined ? '' : String(nowMs), ...ids],
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
