import { createApp } from './app';

const port = Number(process.env.PORT ?? 3001);
const server = createApp().listen(port, () => {
  console.log(`sluice koa-basic on http://localhost:${port}`);
  console.log(
    `  for i in 1 2 3; do curl -s -w ' %{http_code}\\n' -H 'user-id: ann' http://localhost:${port}/profile; done`,
  );
  console.log(`  curl -i 'http://localhost:${port}/search?q=shoes&limit=50'`);
});
process.on('SIGINT', () => server.close(() => process.exit(0)));
