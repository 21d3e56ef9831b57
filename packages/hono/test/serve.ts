import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener, type HttpBindings } from '@hono/node-server';

/** A Fetch handler on Node's own server through `@hono/node-server`, on an ephemeral loopback port. */
export async function serveFetch(
  fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>,
): Promise<{ readonly url: string; readonly server: Server; close(): Promise<void> }> {
  const server = createServer(getRequestListener(fetch as never));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
