import { SCENARIOS, burst, describeDecision } from './burst';

// Six requests for one SKU in the same millisecond, then three more one second later,
// through every algorithm: ✓ admitted, …ms admitted after that delay, ✗ms rejected (retry after).
async function main(): Promise<void> {
  console.log('sluice core demo: 6 requests at t=0, then 3 at t=1s, one SKU\n');
  for (const [title, options] of SCENARIOS) {
    const row = await burst(title, options, 6);
    console.log(`${title.padEnd(64)} ${row.decisions.map(describeDecision).join(' ')}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
