import type { Decision } from '@sluice/core';
import sluiceFastify, * as sluiceFastifyNamed from '@sluice/fastify';
import type fastify5 from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { closed, failing, listen, outcomeOf, writePartial } from './driver-helpers';
import { CUSTOM_NOT_FOUND, HANDLER_ERROR, OK, type AdapterDriver } from './drivers';

export function fastifyDriver(name: string, fastify: typeof fastify5): AdapterDriver {
  const { RateLimit } = sluiceFastifyNamed;
  type Options = Parameters<typeof RateLimit>[0];
  return {
    name,
    async serve(options, mount = 'middleware', server = {}) {
      const app: FastifyInstance = fastify({ http: server });
      const state = { handled: 0 };
      if (mount === 'middleware') {
        if (Array.isArray(options)) {
          // Several limits: the plugin without a rate, the limits on the route.
          await app.register(sluiceFastify);
          app.all('*', { config: { rateLimit: options as never } }, async () => {
            state.handled++;
            return OK;
          });
        } else {
          await app.register(sluiceFastify, options as never);
          app.all('*', async () => {
            state.handled++;
            return OK;
          });
        }
      } else {
        class Controller {
          @RateLimit(options as unknown as Options)
          async handle(_request: FastifyRequest, _reply: FastifyReply): Promise<unknown> {
            state.handled++;
            return OK;
          }
        }
        const controller = new Controller();
        app.all('*', (request, reply) => controller.handle(request, reply));
      }
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveRoute(pattern, options, prefix = '') {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      await app.register(sluiceFastify);
      await app.register(
        async (scope) => {
          scope.get(pattern, { config: { rateLimit: options as never } }, async () => {
            state.handled++;
            return OK;
          });
        },
        { prefix },
      );
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveSite(options, customNotFound = false) {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      await app.register(sluiceFastify, options as never);
      const ok = async () => {
        state.handled++;
        return OK;
      };
      app.get('/known', ok);
      app.get('/health', { config: { rateLimit: false } }, ok);
      if (customNotFound)
        app.setNotFoundHandler(async (_request, reply) => {
          state.handled++;
          return reply.code(404).send(CUSTOM_NOT_FOUND);
        });
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    async serveOutcomes(options, on = 'app') {
      const app: FastifyInstance = fastify();
      const state = { handled: 0 };
      const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
        state.handled++;
        const outcome = outcomeOf(request.url);
        if (outcome === 'throw') throw new Error(HANDLER_ERROR);
        if (outcome === 'hang') {
          await closed(reply.raw);
          return reply;
        }
        if (outcome === 'fail') return reply.code(401).send({ ok: false });
        return OK;
      };
      if (Array.isArray(options) || on === 'route') {
        await app.register(sluiceFastify);
        app.all('*', { config: { rateLimit: options as never } }, handler);
      } else {
        await app.register(sluiceFastify, options as never);
        app.all('*', handler);
      }
      await app.listen({ port: 0, host: '::' });
      return listen(app.server, state, () => app.close());
    },
    countStatus: (status) => (_request: FastifyRequest, reply: FastifyReply) => reply.statusCode === status,
    fallbackHandler: (status) => (_request: FastifyRequest, reply: FastifyReply, d: Decision) =>
      reply.code(status).send({ handled: true, remaining: d.remaining }),
    failingFallback: (how) => (_request: FastifyRequest, reply: FastifyReply) =>
      failing(how, {
        headers: () => reply.code(203).header('X-Cache', 'HIT'),
        midReply: () => writePartial(reply.raw),
      }),
    keyFromHeader: (header) => (request: FastifyRequest) => request.headers[header] as string | undefined,
    keyFromQuery: (name) => (request: FastifyRequest) => (request.query as Record<string, unknown>)[name],
    tierOverrides: (name, rate) => (_key: string, request: FastifyRequest) =>
      request.raw.headers[name] === 'gold' ? rate : undefined,
  };
}
