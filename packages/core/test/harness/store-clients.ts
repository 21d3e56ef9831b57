import Redis from 'ioredis';
import Redis6, { Cluster as Cluster6 } from 'ioredis6';
import Valkey, { Cluster as ValkeyCluster } from 'iovalkey';
import * as redis5 from 'redis';
import * as redis4 from 'redis-4';
import * as redis6 from 'redis-6';
import type { RedisStoreClient } from '../../src';

/**
 * Every client `RedisStore` takes, so that store suites run once per client: ioredis 5 and 6,
 * node-redis 4, 5 and 6 (`createClient` / `createCluster`), and iovalkey.
 */
export const ALL_CLIENT_KINDS = [
  'ioredis',
  'ioredis 6',
  'node-redis 4',
  'node-redis 5',
  'node-redis 6',
  'iovalkey',
] as const;
export type StoreClientKind = (typeof ALL_CLIENT_KINDS)[number];
/** The clients besides ioredis, for suites whose ioredis run lives in the plain fixtures' files. */
export const OTHER_CLIENT_KINDS = ALL_CLIENT_KINDS.filter((kind) => kind !== 'ioredis');

interface Address {
  readonly host: string;
  readonly port: number;
}

/** A client of some kind, and how to let go of it. */
export interface OpenClient {
  readonly client: RedisStoreClient;
  close(): Promise<void>;
}

/** ioredis 5 (`ioredis`), ioredis 6 and iovalkey, its fork: one API, `Redis` and `Cluster`. */
type IoredisKind = 'ioredis' | 'ioredis 6' | 'iovalkey';
const isIoredis = (kind: StoreClientKind): kind is IoredisKind =>
  kind === 'ioredis' || kind === 'ioredis 6' || kind === 'iovalkey';

/** A client of the ioredis family, as the store takes it, and how the harness ends it. */
type IoredisClient = RedisStoreClient & { disconnect(): void };
type IoredisOptions = { host: string; port: number; enableOfflineQueue?: boolean; lazyConnect?: boolean };

/** A cluster client's `once`, chainable as on an `EventEmitter`. */
interface Once {
  once(event: string, listener: (value: unknown) => void): Once;
}

/** Each one's constructors, called apart so that each version's types are checked. */
const IOREDIS: Record<
  IoredisKind,
  {
    client(options: IoredisOptions): IoredisClient;
    cluster(nodes: Address[]): IoredisClient & Once;
  }
> = {
  ioredis: { client: (options) => new Redis(options), cluster: (nodes) => new Redis.Cluster(nodes) },
  'ioredis 6': { client: (options) => new Redis6(options), cluster: (nodes) => new Cluster6(nodes) },
  iovalkey: { client: (options) => new Valkey(options), cluster: (nodes) => new ValkeyCluster(nodes) },
};

type NodeRedisKind = Exclude<StoreClientKind, IoredisKind>;
/** A node-redis client or cluster client, as the store takes it (each version's own type must fit). */
type NodeRedis = RedisStoreClient & {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
};

/** Each version's `createClient`, called apart so that each version's types are checked. */
const CREATE_CLIENT: Record<NodeRedisKind, (options: { socket: object }) => NodeRedis> = {
  'node-redis 4': (options) => redis4.createClient(options),
  'node-redis 5': (options) => redis5.createClient(options),
  'node-redis 6': (options) => redis6.createClient(options),
};

const CREATE_CLUSTER: Record<NodeRedisKind, (options: { rootNodes: { url: string }[] }) => NodeRedis> = {
  'node-redis 4': (options) => redis4.createCluster(options),
  'node-redis 5': (options) => redis5.createCluster(options),
  'node-redis 6': (options) => redis6.createCluster(options),
};

/**
 * A single-node client of that kind, connected. `reconnect: false` makes a node-redis client
 * give up on a dead port instead of retrying (its commands then reject at once).
 */
export async function openClient(kind: StoreClientKind, { host, port }: Address): Promise<OpenClient> {
  if (isIoredis(kind)) {
    const client = IOREDIS[kind].client({ host, port });
    return { client, close: async () => client.disconnect() };
  }
  const client = CREATE_CLIENT[kind]({ socket: { host, port } });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => closeNodeRedis(client) };
}

/** A cluster client of that kind, its slots known. */
export async function openClusterClient(
  kind: StoreClientKind,
  nodes: readonly Address[],
): Promise<OpenClient> {
  if (isIoredis(kind)) {
    const client = IOREDIS[kind].cluster(nodes.map(({ host, port }) => ({ host, port })));
    await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, close: async () => client.disconnect() };
  }
  const rootNodes = nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` }));
  const client = CREATE_CLUSTER[kind]({ rootNodes });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => closeNodeRedis(client) };
}

/**
 * A client of that kind to a port nothing listens on, which gives up at once: every command
 * rejects (no offline queue, no reconnection).
 */
export async function openDeadClient(kind: StoreClientKind, { host, port }: Address): Promise<OpenClient> {
  if (isIoredis(kind)) {
    const client = IOREDIS[kind].client({ host, port, enableOfflineQueue: false, lazyConnect: true });
    return { client, close: async () => client.disconnect() };
  }
  const client = CREATE_CLIENT[kind]({ socket: { host, port, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect().catch(() => undefined);
  return { client, close: () => closeNodeRedis(client) };
}

/** node-redis 4 and 5 have `disconnect()`, 5 and 6 `destroy()`. */
async function closeNodeRedis(client: object): Promise<void> {
  const c = client as { isOpen?: boolean; destroy?: () => unknown; disconnect?: () => Promise<unknown> };
  if (c.isOpen === false) return;
  if (typeof c.destroy === 'function') c.destroy();
  else await c.disconnect?.();
}
