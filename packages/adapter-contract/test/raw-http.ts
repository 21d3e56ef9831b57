import { once } from 'node:events';
import { connect } from 'node:net';
import type { AdapterDriver, ServerSettings, TestApp } from './drivers';

/** A request head written byte for byte: no client library re-encodes the target or drops a `#`. */
function head(method: string, target: string, headers: Readonly<Record<string, string>>): string {
  const lines = Object.entries({ Host: 'sluice.test', ...headers }).map(
    ([name, value]) => `${name}: ${value}`,
  );
  return `${method} ${target} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Sends one request over a connection of its own, exactly as written, and resolves the
 * response's status (0 when the server closed without answering).
 */
export async function rawStatus(
  app: TestApp,
  target: string,
  { method = 'GET', headers = {} }: { method?: string; headers?: Record<string, string> } = {},
): Promise<number> {
  const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  await once(socket, 'connect');
  socket.write(head(method, target, { Connection: 'close', ...headers }));
  await once(socket, 'close');
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
}

/**
 * Writes one request and resets the connection at once (`resetAndDestroy`: a TCP RST), as a
 * client that wants its request run without being known; resolves when the socket is closed.
 */
export async function writeAndReset(app: TestApp, target: string, method = 'POST'): Promise<void> {
  const socket = connect(Number(new URL(app.url).port), '127.0.0.1');
  socket.on('error', () => undefined); // the reset is the test's own doing
  await once(socket, 'connect');
  socket.write(head(method, target, { 'Content-Length': '0' }));
  socket.resetAndDestroy();
  await once(socket, 'close');
}

/** What `$arg_` must do with an argument the app reads as several differing values: refuse the request. */
export const SEVERAL = 'several values (400)';

/**
 * The key `$arg_` must give for what the app reads: a string as is; an array by its one value when
 * every element is that text (an element that is no text reads as `''`), else {@link SEVERAL};
 * nothing for anything else (`''`, no key).
 */
export function keyOfReading(reading: unknown): string {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (!Array.isArray(reading)) return text(reading);
  const texts = new Set((reading as unknown[]).map(text));
  return texts.size > 1 ? SEVERAL : (texts.values().next().value ?? '');
}

/**
 * What the app reads as query argument `name` for each target, through the framework's own parsed
 * query (`req.query`, `ctx.query`, `request.query`), each sent raw: the oracle the `$arg_` key
 * is checked against.
 */
export async function appReadings(
  driver: AdapterDriver,
  name: string,
  targets: readonly string[],
  server: ServerSettings = {},
): Promise<unknown[]> {
  const read = driver.keyFromQuery(name) as (request: unknown) => unknown;
  let reading: unknown;
  // The key function records the reading and gives no key: the request is served unlimited.
  const key = (request: unknown) => {
    reading = read(request);
    return undefined;
  };
  const app = await driver.serve({ key, rate: '1/1m' }, 'middleware', server);
  try {
    const readings: unknown[] = [];
    for (const target of targets) {
      reading = undefined;
      expect([target, await rawStatus(app, target)]).toEqual([target, 200]);
      readings.push(reading);
    }
    return readings;
  } finally {
    await app.close();
  }
}
