import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import type { AdapterDriver } from './drivers';
import { expressDriver } from './express-driver';
import { fastifyDriver } from './fastify-driver';
import { koaDriver } from './koa-driver';

/** Both supported majors of each framework. */
export const DRIVERS: AdapterDriver[] = [
  expressDriver('express 5', express5),
  expressDriver('express 4', express4 as unknown as typeof express5),
  koaDriver('koa 3', Koa3),
  koaDriver('koa 2', Koa2 as unknown as typeof Koa3),
  fastifyDriver('fastify 5', fastify5),
  fastifyDriver('fastify 4', fastify4 as unknown as typeof fastify5),
];
