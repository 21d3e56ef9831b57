import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { startRedisCluster, type RedisClusterProcess } from './redis-cluster';
import { startRedisServer, type RedisProcess } from './redis-server';

const START_TIMEOUT_MS = 60_000;

/** A standalone Redis for one test file, with clients that are closed before it stops. */
export interface RedisFixture {
  /** The running server (available from the first test, after beforeAll). */
  server(): RedisProcess;
  /** A new ioredis client to the server, disconnected in afterAll. */
  client(options?: RedisOptions): Redis;
}

/** A Redis Cluster for one test file, with clients that are closed before it stops. */
export interface RedisClusterFixture {
  cluster(): RedisClusterProcess;
  /** A new ioredis `Cluster` client, disconnected in afterAll; resolves once its slots are known. */
  client(): Promise<Cluster>;
  /** A plain client to each master node (for SCAN, SCRIPT FLUSH, …), disconnected in afterAll. */
  masters(): Redis[];
}

/**
 * Starts a redis-server in beforeAll and stops it (and every client made here) in afterAll.
 * Call it at the top of a test file or describe block.
 */
export function useRedisServer(): RedisFixture {
  let server: RedisProcess | undefined;
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await server?.stop();
  });
  const running = (): RedisProcess => {
    if (server === undefined)
      throw new Error('the Redis server is not started yet: use it inside a test or hook');
    return server;
  };
  return {
    server: running,
    client(options = {}) {
      const { host, port } = running();
      const client = new Redis({ host, port, ...options });
      clients.push(client);
      return client;
    },
  };
}

/** Starts a 3-master Redis Cluster in beforeAll and stops it (and its clients) in afterAll. */
export function useRedisCluster(): RedisClusterFixture {
  let cluster: RedisClusterProcess | undefined;
  const clients: (Redis | Cluster)[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    for (const client of clients.splice(0)) client.disconnect();
    await cluster?.stop();
  });
  const running = (): RedisClusterProcess => {
    if (cluster === undefined)
      throw new Error('the Redis Cluster is not started yet: use it inside a test or hook');
    return cluster;
  };
  return {
    cluster: running,
    async client() {
      const client = new Cluster(running().nodes.map(({ host, port }) => ({ host, port })));
      clients.push(client);
      if (client.status !== 'ready')
        await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
      return client;
    },
    masters() {
      return running().nodes.map(({ host, port }) => {
        const client = new Redis({ host, port });
        clients.push(client);
        return client;
      });
    },
  };
}
