import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { version as NEST_VERSION } from '@nestjs/core/package.json';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import request from 'supertest';

/** The Nest major under test (the jest project maps `@nestjs/*` to one install). */
export const NEST_MAJOR = NEST_VERSION.split('.')[0];

/** Nest's two HTTP platforms, each a fresh adapter per app. */
export const PLATFORMS: Array<[name: string, adapter: () => ExpressAdapter | FastifyAdapter]> = [
  ['express', () => new ExpressAdapter()],
  ['fastify', () => new FastifyAdapter()],
];

/** A started app: its URL, and `get` for one request. */
export interface Started {
  readonly app: INestApplication;
  readonly url: string;
  get(path: string, headers?: Record<string, string>): request.Test;
}

/**
 * Starts `module` on a loopback port. `abortOnError: false`: a failed start rejects here
 * instead of ending the process, as Nest does by default.
 */
export async function start(module: unknown, adapter: ExpressAdapter | FastifyAdapter): Promise<Started> {
  const app = await NestFactory.create(module as never, adapter, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, url, get: (path, headers = {}) => request(url).get(path).set(headers) };
}
