import { createHash } from 'node:crypto';
import { SluiceConfigError } from '../../policy/config-error';
import type {
  IoredisLikeClient,
  LuaScript,
  NodeRedisLikeClient,
  ScriptClient,
  ScriptCommand,
} from './redis-client';
import { ReplyGate } from './reply-gate';

type Method = (...keysAndArgs: string[]) => Promise<unknown>;

/** What `client` accepts, for the error of anything else. */
const ACCEPTED =
  'expected a Redis client: ioredis or iovalkey (new Redis(...), new Cluster([...])), ' +
  'or node-redis (createClient(...), createCluster(...))';

/** One adapter per client object: scripts are defined once per client, however many stores share it. */
const adapted = new WeakMap<object, ScriptClient>();

/**
 * The client behind the store's one narrow interface, told apart by what it can do, never by
 * its class name: ioredis and iovalkey define scripts (`defineCommand`), node-redis runs them
 * (`evalSha` and `eval`).
 * @throws {@link SluiceConfigError} naming `client` when it is neither
 */
export function adaptClient(client: unknown): ScriptClient {
  if (typeof client !== 'object' || client === null) throw new SluiceConfigError('client', client, ACCEPTED);
  let found = adapted.get(client);
  if (found !== undefined) return found;
  if (isIoredisLike(client)) found = new IoredisScripts(client);
  else if (isNodeRedisLike(client)) found = new NodeRedisScripts(client);
  else throw new SluiceConfigError('client', client, ACCEPTED);
  adapted.set(client, found);
  return found;
}

/** A script with its name and SHA-1, built once per source. */
export function luaScript(what: string, lua: string, numberOfKeys?: 1): LuaScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return { name: `sluice:${what}:${sha.slice(0, 12)}`, lua, sha, numberOfKeys };
}

function isIoredisLike(client: object): client is IoredisLikeClient {
  const c = client as Partial<Record<keyof IoredisLikeClient, unknown>>;
  return typeof c.defineCommand === 'function' && typeof c.del === 'function';
}

function isNodeRedisLike(client: object): client is NodeRedisLikeClient {
  const c = client as Partial<Record<keyof NodeRedisLikeClient, unknown>>;
  return (
    typeof c.evalSha === 'function' &&
    typeof c.eval === 'function' &&
    typeof c.sendCommand === 'function' &&
    typeof c.del === 'function'
  );
}

/**
 * ioredis and iovalkey: each script becomes a method (`defineCommand`), which sends EVALSHA and,
 * on NOSCRIPT, the script (EVAL); a Cluster client routes it by its first key.
 */
class IoredisScripts implements ScriptClient {
  readonly isCluster: boolean;
  readonly #commands = new Map<string, ScriptCommand>();

  constructor(private readonly client: IoredisLikeClient) {
    this.isCluster = client.isCluster === true;
  }

  command(script: LuaScript): ScriptCommand {
    const known = this.#commands.get(script.name);
    if (known !== undefined) return known;
    const { client } = this;
    client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
    // defineCommand adds each script as a method named at run time, which TypeScript cannot see;
    // it is looked up at each call, as `client[name](...)` would be.
    const methods = client as unknown as Record<string, ((...a: string[]) => Promise<unknown>) | undefined>;
    if (typeof methods[script.name] !== 'function') {
      throw new SluiceConfigError(
        'client',
        client,
        'defineCommand did not add the script as a method: expected an ioredis or iovalkey client',
      );
    }
    const { name } = script;
    const command: ScriptCommand =
      script.numberOfKeys === 1
        ? (keys, args) => (methods[name] as Method).call(client, keys[0] as string, ...args)
        : (keys, args) => (methods[name] as Method).call(client, String(keys.length), ...keys, ...args);
    this.#commands.set(script.name, command);
    return command;
  }

  del(keys: readonly string[]): Promise<number> {
    return this.client.del(...keys);
  }

  time(_key: string, slot: number): Promise<number> {
    const { client } = this;
    if (!this.isCluster) return read(client.time?.());
    // A keyless command goes to any node of a Cluster: the slot's master is asked by its own client.
    const master = this.nodeOf(slot);
    const node = client.nodes?.('master').find((n) => {
      const options = (n as { options?: { host?: unknown; port?: unknown } }).options;
      return `${String(options?.host)}:${String(options?.port)}` === master;
    });
    return read((node as IoredisLikeClient | undefined)?.time?.());
  }

  nodeOf(slot: number): string | undefined {
    // A Cluster's `slots`: by slot, the node keys (`host:port`) serving it, the master first.
    const slots = (this.client as { slots?: unknown }).slots;
    if (!this.isCluster || !Array.isArray(slots)) return undefined;
    const nodes: unknown = slots[slot];
    const master: unknown = Array.isArray(nodes) ? nodes[0] : undefined;
    return typeof master === 'string' ? master : undefined;
  }
}

/**
 * node-redis (`redis` 4 to 6), single node or cluster: EVALSHA, and on NOSCRIPT only, EVAL with
 * the script's text (which loads it), once; a script's first call on the client is EVAL. Sent
 * with `sendCommand`, which a cluster client routes by the first key it is given (node-redis 4's
 * cluster `evalSha` does not route by its keys); a cluster client is told apart by its `masters`
 * and `slots` lists.
 *
 * node-redis writes a command to its socket in a `setImmediate`, after everything this turn of
 * the event loop still does: on a single node, replies go through a {@link ReplyGate}, so the
 * call sent as one lands leaves before the next reply's callers run (see there why, and what it
 * measured). A cluster client's replies come from several nodes, each its own Redis: not gated.
 */
class NodeRedisScripts implements ScriptClient {
  readonly isCluster: boolean;
  /** Scripts sent once: the first call of each sends EVAL (its text), as ioredis does. */
  readonly #sent = new Set<string>();
  /** The client's `sendCommand`, as (first key, command). */
  readonly #send: (firstKey: string, command: string[]) => Promise<unknown>;
  readonly #gate: ReplyGate | undefined;
  readonly #client: NodeRedisLikeClient;

  constructor(client: NodeRedisLikeClient) {
    this.#client = client;
    const lists = client as unknown as { masters?: unknown; slots?: unknown };
    this.isCluster = Array.isArray(lists.masters) && Array.isArray(lists.slots);
    const send = client.sendCommand as (...args: unknown[]) => Promise<unknown>;
    if (this.isCluster) {
      this.#send = (firstKey, command) => send.call(client, firstKey, false, command);
    } else {
      const gate = (this.#gate = new ReplyGate());
      this.#send = (_, command) => {
        const reply = send.call(client, command);
        gate.sent();
        return reply;
      };
    }
  }

  command(script: LuaScript): ScriptCommand {
    return (keys, args) => {
      const tail = [String(keys.length), ...keys, ...args];
      const key = keys[0] as string;
      try {
        // A script's first call sends its text: no NOSCRIPT round trip on a fresh server. Calls
        // after it are EVALSHA; a node that has not seen it (another Cluster master, a restart)
        // answers NOSCRIPT and gets the text then.
        if (!this.#sent.has(script.sha)) {
          this.#sent.add(script.sha);
          return this.#passed(this.#send(key, ['EVAL', script.lua, ...tail]));
        }
        return this.#passed(
          this.#send(key, ['EVALSHA', script.sha, ...tail]).catch((error: unknown) => {
            if (!isNoScript(error)) throw error;
            return this.#send(key, ['EVAL', script.lua, ...tail]);
          }),
        );
      } catch (error) {
        // A client that throws (closed, say) instead of rejecting: a rejection like any other.
        return Promise.reject(error);
      }
    };
  }

  del(keys: readonly string[]): Promise<unknown> {
    return Promise.resolve().then(() => this.#passed(this.#send(keys[0] as string, ['DEL', ...keys])));
  }

  time(key: string): Promise<number> {
    // A cluster client sends it to the node of the key it is given.
    return read(Promise.resolve().then(() => this.#passed(this.#send(key, ['TIME']))));
  }

  nodeOf(slot: number): string | undefined {
    // A cluster client's `slots`: by slot, the shard serving it, whose master has an `address`.
    const slots = (this.#client as unknown as { slots?: unknown }).slots;
    if (!this.isCluster || !Array.isArray(slots)) return undefined;
    const shard: unknown = slots[slot];
    const master: unknown = (shard as { master?: { address?: unknown } } | undefined)?.master?.address;
    return typeof master === 'string' ? master : undefined;
  }

  #passed(reply: Promise<unknown>): Promise<unknown> {
    return this.#gate === undefined ? reply : this.#gate.pass(reply);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** `TIME`'s reply, `[seconds, microseconds]`, as epoch ms (whole, as the scripts read it). */
function read(reply: Promise<unknown> | undefined): Promise<number> {
  if (reply === undefined)
    return Promise.reject(new Error('sluice: the client cannot read the server clock'));
  return reply.then((time) => {
    const [seconds, micros] = Array.isArray(time) ? time.map(Number) : [];
    if (!Number.isSafeInteger(seconds) || !Number.isSafeInteger(micros))
      throw new Error(`sluice: unexpected reply to TIME: ${JSON.stringify(time)}`);
    return (seconds as number) * 1000 + Math.floor((micros as number) / 1000);
  });
}
