import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { appModule } from './app.module';

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3003);
  const app = await NestFactory.create(appModule(), { logger: ['error', 'warn'] });
  await app.listen(port);
  console.log(`sluice nestjs example on http://localhost:${port}`);
  console.log(`  for i in $(seq 7); do curl -s 'http://localhost:${port}/sku?sku_id=switch-2'; echo; done`);
  console.log(
    `  for i in 1 2 3; do curl -s -o /dev/null -w '%{http_code}\\n' -H 'user-id: ann' http://localhost:${port}/orders; done`,
  );
  process.on('SIGINT', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
