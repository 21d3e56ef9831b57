import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRedisServer, type RedisProcess } from './redis-server';

const run = promisify(execFile);

/** A Redis Cluster of masters without replicas, started by the harness. */
export interface RedisClusterProcess {
  readonly nodes: readonly RedisProcess[];
  /** Kills every node (by PID) and removes their directories. */
  stop(): Promise<void>;
}

const CLUSTER_BUS_OFFSET = 10_000;
const STATE_TIMEOUT_MS = 20_000;

/**
 * Starts `masters` cluster-enabled redis-server processes on free ports (their bus ports free
 * too), joins them with `redis-cli --cluster create … --cluster-replicas 0`, and resolves once
 * every node reports `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const nodes: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push(
        await startRedisServer({
          busOffset: CLUSTER_BUS_OFFSET,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '5000',
          ],
        }),
      );
    }
    const addresses = nodes.map((node) => `${node.host}:${node.port}`);
    await run(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 30_000 },
    );
    await waitForClusterOk(nodes);
    return { nodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitForClusterOk(nodes: readonly RedisProcess[]): Promise<void> {
  const deadline = Date.now() + STATE_TIMEOUT_MS;
  for (;;) {
    const infos = await Promise.all(
      nodes.map((node) => run('redis-cli', ['-h', node.host, '-p', String(node.port), 'cluster', 'info'])),
    );
    if (infos.every(({ stdout }) => stdout.includes('cluster_state:ok'))) return;
    if (Date.now() > deadline)
      throw new Error(
        `cluster not ok within ${STATE_TIMEOUT_MS} ms:\n${infos.map((i) => i.stdout).join('\n')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
