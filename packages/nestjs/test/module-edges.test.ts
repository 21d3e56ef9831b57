import {
  Controller,
  Get,
  Injectable,
  Module,
  VERSION_NEUTRAL,
  VersioningType,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { SluiceConfigError } from '@sluice/core';
import { RateLimit, SluiceModule } from '@sluice/nestjs';
import { NEST_MAJOR, PLATFORMS, start } from './harness';

@Injectable()
class Worker {
  work(): string {
    return 'done';
  }
}

@Controller('one')
class OneController {
  @Get()
  @RateLimit({ rate: '1r/m' })
  one() {
    return 'ok';
  }
}

test('an application without HTTP (createApplicationContext, a microservice) starts: nothing to limit', async () => {
  @Module({
    imports: [SluiceModule.forRoot({ rate: '1r/m' })],
    providers: [Worker],
    controllers: [OneController],
  })
  class WorkerModule {}
  const context = await NestFactory.createApplicationContext(WorkerModule, {
    logger: false,
    abortOnError: false,
  });
  try {
    expect(context.get(Worker).work()).toBe('done');
  } finally {
    await context.close();
  }
});

/** Two controllers of one class name, the second under `version`. */
function usersControllers(version: string | symbol | Array<string | symbol>) {
  const make = (v: typeof version) => {
    @Controller({ path: 'users', version: v as never })
    class UsersController {
      @Get()
      @RateLimit({ rate: '1r/m' })
      list() {
        return 'ok';
      }
    }
    return UsersController;
  };
  return [make('2'), make(version)];
}

describe.each(PLATFORMS)(`SluiceModule edges, Nest ${NEST_MAJOR} on %s`, (_platform, adapter) => {
  test.each([
    ['VERSION_NEUTRAL', VERSION_NEUTRAL],
    ["['1', VERSION_NEUTRAL]", ['1', VERSION_NEUTRAL]],
  ])(
    'same-named controllers, one versioned %s: the app starts, each its own bucket',
    async (_name, version) => {
      @Module({ imports: [SluiceModule.forRoot()], controllers: usersControllers(version) })
      class VersionsModule {}
      const app = await NestFactory.create(VersionsModule, adapter(), { logger: false, abortOnError: false });
      try {
        app.enableVersioning({ type: VersioningType.URI });
        await app.listen(0, '127.0.0.1');
        const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
        const status = async (path: string) => (await fetch(`${url}${path}`)).status;
        expect([await status('/v2/users'), await status('/v2/users')]).toEqual([200, 429]);
        const neutral = Array.isArray(version) ? '/v1/users' : '/users';
        expect([await status(neutral), await status(neutral)]).toEqual([200, 429]);
      } finally {
        await app.close();
      }
    },
  );

  test('SluiceModule imported twice fails the start: each import would limit every request again', async () => {
    @Module({ imports: [SluiceModule.forRoot({ rate: '1r/m' })] })
    class FeatureModule {}
    @Module({
      imports: [SluiceModule.forRoot({ rate: '1r/m' }), FeatureModule],
      controllers: [OneController],
    })
    class TwiceModule {}
    const failed = start(TwiceModule, adapter());
    await expect(failed).rejects.toBeInstanceOf(SluiceConfigError);
    await expect(failed).rejects.toThrow(/imported more than once/);
  });

  test('one decorator object on two methods: each route its own bucket, as written inline', async () => {
    const Strict = RateLimit({ rate: '1r/m' });
    @Controller('hoisted')
    class HoistedController {
      @Get('a')
      @Strict
      a() {
        return 'ok';
      }

      @Get('b')
      @Strict
      b() {
        return 'ok';
      }
    }
    @Module({ imports: [SluiceModule.forRoot()], controllers: [HoistedController] })
    class HoistedModule {}
    const app = await start(HoistedModule, adapter());
    try {
      const statuses = [];
      for (const path of ['/hoisted/a', '/hoisted/b', '/hoisted/a', '/hoisted/b'])
        statuses.push((await app.get(path)).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await app.app.close();
    }
  });

  test('an auth guard provided as APP_GUARD in the root module runs first: a key read from req.user is there', async () => {
    @Injectable()
    class AuthGuard implements CanActivate {
      canActivate(context: ExecutionContext): boolean {
        const request = context
          .switchToHttp()
          .getRequest<{ headers: Record<string, string>; user?: object }>();
        request.user = { id: request.headers['x-token'] };
        return true;
      }
    }
    @Controller('me')
    class MeController {
      @Get()
      @RateLimit<{ user?: { id?: string } }>({ rate: '1r/m', key: (request) => request.user?.id })
      me() {
        return 'ok';
      }
    }
    @Module({
      imports: [SluiceModule.forRoot()],
      providers: [{ provide: APP_GUARD, useClass: AuthGuard }],
      controllers: [MeController],
    })
    class AuthModule {}
    const app = await start(AuthModule, adapter());
    try {
      const statuses = [];
      for (const token of ['a', 'a', 'b']) statuses.push((await app.get('/me', { 'x-token': token })).status);
      expect(statuses).toEqual([200, 429, 200]);
    } finally {
      await app.app.close();
    }
  });
});
