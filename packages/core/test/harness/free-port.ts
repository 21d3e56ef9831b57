import { createServer } from 'node:net';

/** Whether `port` can be bound on 127.0.0.1 right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port that is free now, and whose `port + offset` is free too when `offset` is given
 * (a Redis Cluster node also binds its bus port, port + 10000). Another process may still take it
 * before the caller binds it: callers retry when their server fails to start.
 */
export async function freePort(offset?: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // Below 55536 so that port + 10000 is a valid port; above the usual service ports.
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if ((await isPortFree(port)) && (offset === undefined || (await isPortFree(port + offset)))) return port;
  }
  throw new Error('no free loopback port found after 200 attempts');
}
