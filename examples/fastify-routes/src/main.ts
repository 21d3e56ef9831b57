import { buildApp } from './app';

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3002);
  const app = await buildApp();
  await app.listen({ port });
  console.log(`sluice fastify-routes on http://localhost:${port}`);
  console.log(
    `  for i in 1 2 3 4 5 6; do curl -s -o /dev/null -w '%{http_code}\\n' -X POST http://localhost:${port}/login; done`,
  );
  console.log(`  for i in 1 2 3 4; do curl -s http://localhost:${port}/items/42; echo; done`);
  process.on('SIGINT', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
