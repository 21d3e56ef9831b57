import type { DynamicModule, FactoryProvider, ModuleMetadata, Provider } from '@nestjs/common';
import {
  APP_GUARD,
  DiscoveryModule,
  DiscoveryService,
  HttpAdapterHost,
  MetadataScanner,
  Reflector,
} from '@nestjs/core';
import { SLUICE_OPTIONS, type NestHttpRequest, type SluiceModuleOptions } from './options';
import { SluiceGuard } from './sluice-guard';

/** Options of {@link SluiceModule.forRootAsync}: the module's options from a factory with injected providers. */
export interface SluiceModuleAsyncOptions<TRequest = NestHttpRequest, TResponse = unknown> {
  /** Modules that export what `inject` names (a config module, a Redis module). */
  readonly imports?: ModuleMetadata['imports'];
  /** Providers handed to `useFactory`, in order. */
  readonly inject?: FactoryProvider['inject'];
  /** Returns the module's options (see `SluiceModule.forRoot`). */
  readonly useFactory: (
    ...args: never[]
  ) => SluiceModuleOptions<TRequest, TResponse> | Promise<SluiceModuleOptions<TRequest, TResponse>>;
}

/** The guard, built by Nest's injector; no decorators needed on the class. */
const guardProvider: Provider = {
  provide: APP_GUARD,
  useFactory: (...args: ConstructorParameters<typeof SluiceGuard>) => new SluiceGuard(...args),
  inject: [Reflector, SLUICE_OPTIONS, HttpAdapterHost, DiscoveryService, MetadataScanner],
};

/**
 * sluice for NestJS 11 and 12, on `@nestjs/platform-express` and `@nestjs/platform-fastify`:
 * registers {@link SluiceGuard} as a global guard (`APP_GUARD`). Import it once, in the root module.
 *
 * @example
 * ```ts
 * @Module({ imports: [SluiceModule.forRoot({ rate: '10r/s', burst: 20 })] }) // every route, per IP
 * export class AppModule {}
 * ```
 */
export class SluiceModule {
  /**
   * With a `rate` (or `rules`, or a `limiter`), every route and the requests matching none are
   * limited; without, only `@RateLimit` routes, for which the options are defaults. A list of
   * complete limits applies to every route, in order. Invalid options fail the start.
   *
   * @param options - defaults and the limit on every route, or several limits
   * @defaultValue `{}`: only decorated routes are limited
   */
  static forRoot<TRequest = NestHttpRequest, TResponse = unknown>(
    options: SluiceModuleOptions<TRequest, TResponse> = {},
  ): DynamicModule {
    return {
      module: SluiceModule,
      imports: [DiscoveryModule],
      providers: [{ provide: SLUICE_OPTIONS, useValue: options }, guardProvider],
    };
  }

  /**
   * The module's options from a factory of injected providers: a Redis client from Nest's DI, say.
   *
   * @example
   * ```ts
   * SluiceModule.forRootAsync({
   *   imports: [RedisModule],
   *   inject: [REDIS_CLIENT],
   *   useFactory: (client: Redis) => ({ rate: '10r/s', store: new RedisStore({ client }) }),
   * });
   * ```
   */
  static forRootAsync<TRequest = NestHttpRequest, TResponse = unknown>(
    options: SluiceModuleAsyncOptions<TRequest, TResponse>,
  ): DynamicModule {
    return {
      module: SluiceModule,
      imports: [DiscoveryModule, ...(options.imports ?? [])],
      providers: [
        {
          provide: SLUICE_OPTIONS,
          useFactory: options.useFactory as (...args: unknown[]) => unknown,
          inject: options.inject ?? [],
        },
        guardProvider,
      ],
    };
  }
}
