import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';
import type { Work } from './concurrency-drivers';
import type { TestApp } from './drivers';

/** A reply, or `undefined` for a request whose client left. */
export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request: its reply, and a way to leave (the client closes its connection). */
export interface Sent {
  readonly reply: Promise<Reply | undefined>;
  leave(): void;
}

export function send(app: TestApp, path: string, headers: Record<string, string> = {}, agent?: Agent): Sent {
  const req = httpRequest(`${app.url}${path}`, { headers, agent: agent ?? false });
  const reply = new Promise<Reply | undefined>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined)); // the client left (or was left)
  });
  req.end();
  return { reply, leave: () => req.destroy() };
}

/** Runs the loop until `condition` holds: bounded by wall time, never a timed sleep. */
export async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Bodies of `/big/<bytes>`, made once per size. */
const bodies = new Map<number, string>();

/**
 * The route's work, by path: `/wait/<id>` waits until the test opens it, `/throw` throws, `/slow`
 * takes a millisecond, `/big/<bytes>` answers a body of that many bytes at once, anything else
 * answers at once. `started` lists the paths in the order their handlers began.
 */
export class Handlers {
  readonly started: string[] = [];
  readonly #waiting = new Map<string, () => void>();

  readonly work: Work = (path) => {
    this.started.push(path);
    if (path.startsWith('/throw')) throw new Error('the handler failed');
    if (path.startsWith('/slow')) return new Promise((resolve) => setTimeout(resolve, 1));
    if (path.startsWith('/wait/')) return new Promise((resolve) => this.#waiting.set(path, resolve));
    if (path.startsWith('/big/')) {
      const bytes = Number(path.slice('/big/'.length));
      let body = bodies.get(bytes);
      if (body === undefined) bodies.set(bytes, (body = 'x'.repeat(bytes)));
      return body;
    }
    return undefined;
  };

  open(path: string): void {
    this.#waiting.get(path)?.();
    this.#waiting.delete(path);
  }

  openAll(): void {
    for (const path of [...this.#waiting.keys()]) this.open(path);
  }
}
