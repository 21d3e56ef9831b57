import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  All,
  Catch,
  Controller,
  Get,
  HttpCode,
  Module,
  NotFoundException,
  Req,
  UnauthorizedException,
  type ArgumentsHost,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { version as NEST_VERSION } from '@nestjs/core/package.json';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { Decision } from '@sluice/core';
import { RateLimit, SkipRateLimit, SluiceModule, type SluiceModuleOptions } from '@sluice/nestjs';
import type { Request, Response } from 'express';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { failing, outcomeOf, writePartial } from './driver-helpers';
import {
  CUSTOM_NOT_FOUND,
  HANDLER_ERROR,
  type AdapterDriver,
  type ServerSettings,
  type TestApp,
} from './drivers';

/** The Nest major the jest project maps `@nestjs/*` to. */
const NEST_MAJOR = NEST_VERSION.split('.')[0];

/**
 * An app whose one handler answers every path and method with 200 `{"ok":true}`. Nest's
 * decorators are applied as the functions they are: this file is compiled with the repo's
 * standard decorators, which Nest's do not follow.
 */
function appModule(
  platform: 'express' | 'fastify',
  limits: unknown,
  mount: 'middleware' | 'decorator',
  state: { handled: number },
): unknown {
  class EveryPath {
    handle(): unknown {
      state.handled++;
      return { ok: true };
    }
  }
  const prototype = EveryPath.prototype;
  const handle = Object.getOwnPropertyDescriptor(prototype, 'handle') as PropertyDescriptor;
  // Every path, `/` included: path-to-regexp 8's `{*path}` on Express, find-my-way's `*` on Fastify.
  All(platform === 'express' ? '{*path}' : '*')(prototype, 'handle', handle);
  HttpCode(200)(prototype, 'handle', handle);
  if (mount === 'decorator') RateLimit(limits as never)(prototype, 'handle', handle);
  Controller()(EveryPath);
  class AppModule {}
  const options = (mount === 'middleware' ? limits : {}) as SluiceModuleOptions;
  Module({ imports: [SluiceModule.forRoot(options)], controllers: [EveryPath] })(AppModule);
  return AppModule;
}

/**
 * Every path behind the module's limits (see `AdapterDriver.serveOutcomes`): a failure is Nest's
 * `UnauthorizedException` (401), a throw any other error (500).
 */
function outcomesModule(
  platform: 'express' | 'fastify',
  limits: unknown,
  state: { handled: number },
  on: 'app' | 'route',
): unknown {
  class EveryPath {
    async handle(request: { url: string; raw?: { url?: string } }): Promise<unknown> {
      state.handled++;
      const outcome = outcomeOf(request.raw?.url ?? request.url);
      if (outcome === 'throw') throw new Error(HANDLER_ERROR);
      if (outcome === 'fail') throw new UnauthorizedException();
      if (outcome === 'hang') {
        // The connection's close: the client left (Express `req.socket`, Fastify `request.raw.socket`).
        const { socket } = (request.raw ?? request) as unknown as { socket: Socket };
        await new Promise((resolve) => socket.once('close', resolve));
      }
      return { ok: true };
    }
  }
  const prototype = EveryPath.prototype;
  const handle = Object.getOwnPropertyDescriptor(prototype, 'handle') as PropertyDescriptor;
  All(platform === 'express' ? '{*path}' : '*')(prototype, 'handle', handle);
  HttpCode(200)(prototype, 'handle', handle);
  Req()(prototype, 'handle', 0);
  if (on === 'route') RateLimit(limits as never)(prototype, 'handle', handle);
  Controller()(EveryPath);
  class AppModule {}
  const options = (on === 'app' ? limits : {}) as SluiceModuleOptions;
  Module({ imports: [SluiceModule.forRoot(options)], controllers: [EveryPath] })(AppModule);
  return AppModule;
}

/** An app with one `GET pattern` route under `Controller(prefix)`, limited by `@RateLimit`. */
function routedModule(pattern: string, prefix: string, limits: unknown, state: { handled: number }): unknown {
  class Routed {
    handle(): unknown {
      state.handled++;
      return { ok: true };
    }
  }
  const prototype = Routed.prototype;
  const handle = Object.getOwnPropertyDescriptor(prototype, 'handle') as PropertyDescriptor;
  Get(pattern)(prototype, 'handle', handle);
  RateLimit(limits as never)(prototype, 'handle', handle);
  Controller(prefix)(Routed);
  class AppModule {}
  Module({ imports: [SluiceModule.forRoot({})], controllers: [Routed] })(AppModule);
  return AppModule;
}

/**
 * A site limited by the module (see `AdapterDriver.serveSite`): `GET /known`, `GET /health` with
 * `@SkipRateLimit()`, and with `customNotFound` a global filter of Nest's `NotFoundException`.
 */
function siteModule(
  platform: 'express' | 'fastify',
  limits: unknown,
  customNotFound: boolean,
  state: { handled: number },
): unknown {
  class Site {
    known(): unknown {
      state.handled++;
      return { ok: true };
    }
    health(): unknown {
      state.handled++;
      return { ok: true };
    }
  }
  const prototype = Site.prototype;
  const known = Object.getOwnPropertyDescriptor(prototype, 'known') as PropertyDescriptor;
  const health = Object.getOwnPropertyDescriptor(prototype, 'health') as PropertyDescriptor;
  Get('known')(prototype, 'known', known);
  Get('health')(prototype, 'health', health);
  SkipRateLimit()(prototype, 'health', health);
  Controller()(Site);
  class NotFound {
    catch(_exception: NotFoundException, host: ArgumentsHost): void {
      state.handled++;
      const response = host.switchToHttp().getResponse<Response & FastifyReply>();
      if (platform === 'express') response.status(404).json(CUSTOM_NOT_FOUND);
      else response.code(404).send(CUSTOM_NOT_FOUND);
    }
  }
  Catch(NotFoundException)(NotFound);
  class AppModule {}
  Module({
    imports: [SluiceModule.forRoot(limits as SluiceModuleOptions)],
    controllers: [Site],
    providers: customNotFound ? [{ provide: APP_FILTER, useClass: NotFound }] : [],
  })(AppModule);
  return AppModule;
}

function nestDriver(platform: 'express' | 'fastify'): AdapterDriver {
  const express = platform === 'express';
  /** Starts the app on a free port (Express: on a server of our own that carries `settings`). */
  async function start(
    module: unknown,
    state: { handled: number },
    settings: ServerSettings,
  ): Promise<TestApp> {
    const adapter = express ? new ExpressAdapter() : new FastifyAdapter({ http: settings } as never);
    const app: INestApplication = await NestFactory.create(module as never, adapter, {
      logger: false,
      abortOnError: false,
    });
    // Express: Nest's server is made without options; a server of our own carries them.
    const server = express
      ? createServer(settings, (await app.init()).getHttpAdapter().getInstance())
      : (app.getHttpServer() as ReturnType<typeof createServer>);
    if (express) await new Promise<void>((resolve) => server.listen(0, resolve));
    else await app.listen(0, '::');
    const { port } = server.address() as AddressInfo;
    return Object.assign(state, {
      server,
      url: `http://127.0.0.1:${port}`,
      async close() {
        server.closeAllConnections();
        if (express) await new Promise<void>((resolve) => server.close(() => resolve()));
        await app.close();
      },
    }) satisfies TestApp;
  }

  return {
    name: `nest ${NEST_MAJOR} on ${platform}`,
    serve(options, mount = 'middleware', settings = {}) {
      const state = { handled: 0 };
      return start(appModule(platform, options, mount, state), state, settings);
    },
    serveRoute(pattern, options, prefix = '') {
      const state = { handled: 0 };
      return start(routedModule(pattern, prefix, options, state), state, {});
    },
    serveSite(options, customNotFound = false) {
      const state = { handled: 0 };
      return start(siteModule(platform, options, customNotFound, state), state, {});
    },
    serveOutcomes(options, on = 'app') {
      const state = { handled: 0 };
      return start(outcomesModule(platform, options, state, on), state, {});
    },
    countStatus: (status) =>
      express
        ? (_req: Request, res: Response) => res.statusCode === status
        : (_request: FastifyRequest, reply: FastifyReply) => reply.statusCode === status,
    fallbackHandler: (status) =>
      express
        ? (_req: Request, res: Response, d: Decision) =>
            res.status(status).json({ handled: true, remaining: d.remaining })
        : (_req: FastifyRequest, reply: FastifyReply, d: Decision) =>
            reply.code(status).send({ handled: true, remaining: d.remaining }),
    failingFallback: (how) =>
      express
        ? (_req: Request, res: Response) =>
            failing(how, {
              headers: () => res.status(203).set('X-Cache', 'HIT'),
              midReply: () => writePartial(res),
            })
        : (_req: FastifyRequest, reply: FastifyReply) =>
            failing(how, {
              headers: () => reply.code(203).header('X-Cache', 'HIT'),
              midReply: () => writePartial(reply.raw),
            }),
    keyFromHeader: (header) => (request: Request | FastifyRequest) =>
      request.headers[header] as string | undefined,
    keyFromQuery: (name) => (request: Request | FastifyRequest) =>
      (request.query as Record<string, unknown>)[name],
    tierOverrides: (name, rate) =>
      express
        ? (_key: string, req: Request) => (req.get(name) === 'gold' ? rate : undefined)
        : (_key: string, request: FastifyRequest) =>
            request.raw.headers[name] === 'gold' ? rate : undefined,
  };
}

/** Nest on both its HTTP platforms; the major is the jest project's. */
export const NEST_DRIVERS: AdapterDriver[] = [nestDriver('express'), nestDriver('fastify')];
