import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { All, Controller, HttpCode, Module, Req, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { version as NEST_VERSION } from '@nestjs/core/package.json';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AdaptiveLimit, ConcurrencyLimit, RateLimit, SluiceModule } from '@sluice/nestjs';
import type { Request, Response } from 'express';
import type { FastifyReply } from 'fastify';
import type { ConcurrencyDriver, ConcurrencyLimits, Work } from './concurrency-drivers';
import type { TestApp } from './drivers';

/** The Nest major the jest project maps `@nestjs/*` to. */
const NEST_MAJOR = NEST_VERSION.split('.')[0];

/**
 * An app whose one handler answers every path and method after `work`, behind `@ConcurrencyLimit`
 * (and `@RateLimit` when the limits have a rate). Nest's decorators are applied as the functions
 * they are, as in nest-drivers.ts.
 */
function limitedModule(
  platform: 'express' | 'fastify',
  { concurrency, adaptive, rate }: ConcurrencyLimits,
  work: Work,
  state: { handled: number },
): unknown {
  class EveryPath {
    async handle(request: { url: string }): Promise<unknown> {
      const body = await work(new URL(request.url, 'http://x').pathname);
      state.handled++;
      return body ?? { ok: true };
    }
  }
  const prototype = EveryPath.prototype;
  const handle = Object.getOwnPropertyDescriptor(prototype, 'handle') as PropertyDescriptor;
  All(platform === 'express' ? '{*path}' : '*')(prototype, 'handle', handle);
  HttpCode(200)(prototype, 'handle', handle);
  Req()(prototype, 'handle', 0);
  if (rate !== undefined) RateLimit(rate as never)(prototype, 'handle', handle);
  if (adaptive === undefined) ConcurrencyLimit(concurrency as never)(prototype, 'handle', handle);
  else AdaptiveLimit(adaptive as never)(prototype, 'handle', handle);
  Controller()(EveryPath);
  class AppModule {}
  Module({ imports: [SluiceModule.forRoot({})], controllers: [EveryPath] })(AppModule);
  return AppModule;
}

function nestConcurrencyDriver(platform: 'express' | 'fastify'): ConcurrencyDriver {
  const express = platform === 'express';
  return {
    name: `nest ${NEST_MAJOR} on ${platform}`,
    async serve(limits, work) {
      const state = { handled: 0 };
      const adapter = express ? new ExpressAdapter() : new FastifyAdapter();
      const app: INestApplication = await NestFactory.create(
        limitedModule(platform, limits, work, state) as never,
        adapter,
        { logger: false, abortOnError: false },
      );
      await app.listen(0, '::');
      const server = app.getHttpServer() as TestApp['server'];
      return Object.assign(state, {
        server,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        async close() {
          server.closeAllConnections();
          await app.close();
        },
      });
    },
    fallbackHandler: (status) =>
      express
        ? (_req: Request, res: Response, d: { inFlight: number }) =>
            res.status(status).json({ fallback: true, inFlight: d.inFlight })
        : (_request: unknown, reply: FastifyReply, d: { inFlight: number }) =>
            reply.code(status).send({ fallback: true, inFlight: d.inFlight }),
  };
}

/** Nest on both its HTTP platforms; the major is the jest project's. */
export const NEST_CONCURRENCY_DRIVERS: ConcurrencyDriver[] = [
  nestConcurrencyDriver('express'),
  nestConcurrencyDriver('fastify'),
];
