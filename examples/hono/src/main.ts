import { serve } from '@hono/node-server';
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3002);
const server = serve({ fetch: createApp().fetch, port }, () => {
  console.log(`sluice hono on http://localhost:${port}`);
  console.log(`  for i in $(seq 8); do curl -s -w ' %{http_code}\\n' http://localhost:${port}/sku/42; done`);
  console.log(
    `  for i in 1 2 3 4; do curl -s -w ' %{http_code}\\n' 'http://localhost:${port}/search?ms=1500' & done; wait`,
  );
});
process.on('SIGINT', () => server.close(() => process.exit(0)));
