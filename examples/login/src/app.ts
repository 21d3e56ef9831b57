import type { Store } from '@sluice/core';
import { rateLimit, type TrustProxy } from '@sluice/express';
import express, { type Express, type Request } from 'express';
import { Accounts } from './accounts';

/** What {@link createApp} can be given: where the limits live, and a clock for tests. */
export interface LoginAppOptions {
  /** Where the limits and blocks live (default: this process's memory; a `RedisStore` to share them). */
  store?: Store;
  /** Epoch milliseconds (default: the store's clock); tests move it instead of sleeping. */
  clock?: () => number;
  /**
   * The reverse proxies whose `X-Forwarded-For` names the client (default: none, the socket's
   * peer is the client). Given to both limits and to Express (`trust proxy`), so every key
   * names the same client.
   */
  trustProxy?: TrustProxy;
  /** Accounts as user name → password (default: `ann` / `correct horse`). */
  users?: Readonly<Record<string, string>>;
}

/** The user name a login attempt is for: the body's `username`, lower-cased and trimmed. */
export function userNameOf(req: Request): string {
  const name: unknown = (req.body as { username?: unknown } | undefined)?.username;
  return typeof name === 'string' ? name.trim().toLowerCase() : '';
}

/**
 * An Express app with one protected route, `POST /login` (JSON `{ username, password }`):
 *
 * 1. per client address: 20 failed logins per 15 minutes, whatever user names it tries (a
 *    password sprayer), then blocked for 15 minutes, twice as long on each new offence, at most a
 *    day;
 * 2. per address and user name: 5 failed logins per 15 minutes (someone guessing one account's
 *    password), blocked the same way.
 *
 * Both count only failed logins (`countWhen: 'failed'`: a 401, or a response that never
 * finished), so a user who types the right password is never refused for earlier typos, and both
 * take their unit before the password is checked, so 300 guesses sent at once still get exactly 5
 * checked.
 */
export function createApp(options: LoginAppOptions = {}): Express {
  const { store, clock, trustProxy = false } = options;
  const accounts = new Accounts(options.users ?? { ann: 'correct horse' });
  const block = { duration: '15m', backoff: 2, maxDuration: '24h' } as const;

  const app = express();
  app.set('trust proxy', trustProxy);
  app.use(express.json({ limit: '2kb' }));
  app.post(
    '/login',
    rateLimit([
      {
        name: 'login-address',
        prefix: 'login:ip',
        rate: '20/15m',
        countWhen: 'failed',
        block,
        store,
        clock,
        trustProxy,
      },
      {
        name: 'login-user',
        prefix: 'login:user',
        key: (req) => `${req.ip ?? ''}:${userNameOf(req)}`,
        rate: '5/15m',
        countWhen: 'failed',
        block,
        store,
        clock,
        trustProxy,
      },
    ]),
    (req, res) => {
      const password: unknown = (req.body as { password?: unknown } | undefined)?.password;
      const name = userNameOf(req);
      if (typeof password !== 'string' || !accounts.verify(name, password)) {
        res.status(401).json({ error: 'wrong user name or password' });
        return;
      }
      res.json({ welcome: name });
    },
  );
  return app;
}
