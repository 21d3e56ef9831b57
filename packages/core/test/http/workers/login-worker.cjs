'use strict';
/**
 * An app instance in a process of its own: a Node HTTP server whose login route is limited by
 * `countWhen: 'failed'` on a shared Redis, driven by count-when-flood.test.ts. It loads the BUILT
 * package, as an app server would.
 *
 * argv: <path to dist/adapter.cjs> <path to dist/index.cjs> <redis port> <prefix>
 * Messages out: { type: 'ready', url }; { type: 'handled', handled } when asked ({ type: 'count' })
 */
const { createServer } = require('node:http');
const [adapterPath, indexPath, port, prefix] = process.argv.slice(2);
const Redis = require('ioredis');
const { RedisStore } = require(indexPath);
const { createHttpLimiter, decideAndWrite, fromNodeRequest, writeResponseOutcome } = require(adapterPath);

const client = new Redis({ host: '127.0.0.1', port: Number(port) });
const limit = createHttpLimiter({
  key: 'victim',
  rate: '5/15m',
  countWhen: 'failed',
  prefix,
  store: new RedisStore({ client }),
  // Every decision from Redis: a slow one must not be decided by a local insurance store here.
  timeoutMs: 60_000,
  onStoreError: 'fail-closed',
});
let handled = 0;
const server = createServer((req, res) => {
  const answer = (pass) => {
    if (!pass) return;
    handled++;
    res.statusCode = 401; // a wrong password
    res.end();
  };
  const pass = decideAndWrite(limit, req, res, fromNodeRequest(req), res, writeResponseOutcome);
  if (typeof pass === 'boolean') answer(pass);
  else pass.then(answer, () => ((res.statusCode = 500), res.end()));
});
client.once('ready', () =>
  server.listen(0, '127.0.0.1', () =>
    process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }),
  ),
);
// The test runner went away: never outlive it.
process.on('disconnect', () => process.exit(0));
process.on('message', (message) => {
  if (message.type === 'count') process.send({ type: 'handled', handled });
});
process.on('SIGTERM', () => {
  server.close();
  client.disconnect();
  process.exit(0);
});
