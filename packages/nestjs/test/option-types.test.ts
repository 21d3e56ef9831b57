import { Controller, Get, Module } from '@nestjs/common';
import { createLimiter, type Decision } from '@sluice/core';
import { RateLimit, SluiceModule, type RateLimitOptions } from '@sluice/nestjs';
import type { Request, Response } from 'express';
import type { FastifyReply, FastifyRequest } from 'fastify';

// Compiled by `pnpm typecheck` (packages/nestjs/tsconfig.test.json): the options Nest users write.
describe('@sluice/nestjs option types', () => {
  test("callbacks read the platform's own request and response, named on the parameters", () => {
    @Controller()
    class Typed {
      @Get('express')
      @RateLimit({
        key: (req: Request) => req.ip,
        overrides: (_key, req: Request) => (req.get('x-tier') === 'gold' ? '100r/s' : undefined),
        rate: '10r/s',
        fallback: (_req: Request, res: Response, d: Decision) => res.status(200).json({ left: d.remaining }),
      })
      viaExpress() {}

      @Get('fastify')
      @RateLimit<FastifyRequest, FastifyReply>({
        key: (request) => request.ip,
        rate: '10r/s',
        fallback: (_request, reply) => reply.code(200).send({ cached: true }),
      })
      viaFastify() {}

      @Get('rules')
      @RateLimit([
        { rules: [{ rate: '10r/s' }, { algorithm: 'fixed-window', rate: '1000/1h' }] },
        { limiter: createLimiter({ rate: '1r/s' }) },
      ])
      rules() {}

      @Get('typo')
      // @ts-expect-error brust is not an option
      @RateLimit({ rate: '6r/m', brust: 5 })
      typo() {}
    }
    @Module({
      imports: [SluiceModule.forRoot({ headers: 'draft-7', trustProxy: ['10.0.0.0/8'] })],
      controllers: [Typed],
    })
    class AppModule {}
    const defaults: RateLimitOptions = { rate: '10r/s', burst: 20 };
    // @ts-expect-error a module given a list needs complete limits (a rate, rules or a limiter)
    SluiceModule.forRoot([{ burst: 5 }]);
    expect([AppModule, defaults]).toHaveLength(2);
  });
});
