import { createServer } from 'node:http';
import type { Decision } from '@sluice/core';
import * as sluiceExpress from '@sluice/express';
import type express5 from 'express';
import type { NextFunction, Request, Response } from 'express';
import { failing, listen, outcomeOf, writePartial } from './driver-helpers';
import { CUSTOM_NOT_FOUND, HANDLER_ERROR, OK, type AdapterDriver } from './drivers';

export function expressDriver(name: string, express: typeof express5): AdapterDriver {
  const { rateLimit, RateLimit } = sluiceExpress;
  type Options = sluiceExpress.RateLimitOptions;
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app = express();
      const state = { handled: 0 };
      const limits = options as unknown as Options | Options[];
      if (mount === 'middleware') {
        app.use(rateLimit(limits));
        app.use((_req: Request, res: Response) => {
          state.handled++;
          res.json(OK);
        });
      } else {
        class Controller {
          @RateLimit(limits)
          handle(_req: Request, res: Response, _next: NextFunction): void {
            state.handled++;
            res.json(OK);
          }
        }
        const controller = new Controller();
        app.use((req: Request, res: Response, next: NextFunction) => controller.handle(req, res, next));
      }
      return listen(createServer(server, app), state);
    },
    async serveRoute(pattern, options, prefix = '/', settings = {}) {
      const app = express();
      if (settings.caseSensitive === true) app.enable('case sensitive routing');
      const state = { handled: 0 };
      const router = express.Router();
      router.get(pattern, rateLimit(options as unknown as Options), (_req: Request, res: Response) => {
        state.handled++;
        res.json(OK);
      });
      if (settings.alsoAt === undefined) app.use(prefix, router);
      else app.use([prefix, ...settings.alsoAt], router);
      return listen(createServer(app), state);
    },
    async serveSite(options, customNotFound = false) {
      const app = express();
      const state = { handled: 0 };
      const ok = (_req: Request, res: Response) => {
        state.handled++;
        res.json(OK);
      };
      app.get('/health', ok);
      app.use(rateLimit(options as unknown as Options));
      app.get('/known', ok);
      if (customNotFound)
        app.use((_req: Request, res: Response) => {
          state.handled++;
          res.status(404).json(CUSTOM_NOT_FOUND);
        });
      return listen(createServer(app), state);
    },
    async serveOutcomes(options, on = 'app') {
      const app = express();
      const state = { handled: 0 };
      const limit = rateLimit(options as unknown as Options | Options[]);
      if (on === 'app') app.use(limit);
      app.all(/.*/, ...(on === 'route' ? [limit] : []), (req: Request, res: Response) => {
        state.handled++;
        const outcome = outcomeOf(req.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'fail') res.status(401).json({ ok: false });
        else if (outcome === 'ok') res.json(OK);
      });
      // Express's own 500, without its printed stack.
      app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).end();
      });
      return listen(createServer(app), state);
    },
    countStatus: (status) => (_req: Request, res: Response) => res.statusCode === status,
    fallbackHandler: (status) => (_req: Request, res: Response, d: Decision) =>
      res.status(status).json({ handled: true, remaining: d.remaining }),
    failingFallback: (how) => (_req: Request, res: Response) =>
      failing(how, {
        headers: () => res.status(203).set('X-Cache', 'HIT'),
        midReply: () => writePartial(res),
      }),
    keyFromHeader: (header) => (req: Request) => req.headers[header] as string | undefined,
    keyFromQuery: (name) => (req: Request) => req.query[name],
    tierOverrides: (name, rate) => (_key: string, req: Request) =>
      req.get(name) === 'gold' ? rate : undefined,
  };
}
