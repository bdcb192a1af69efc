/**
 * Child process of `measureFirstRow`: starts the way `traces browse` does (launch.ts):
 * discovery and indexing while ink loads, the pre-paint when the first records are indexed
 * before ink is ready, else ink's first frame (rendered into memory). Prints `first-row`
 * as soon as a record row is on the screen it would draw.
 * Usage: node first-row-probe.js ROOT...
 */
process.env.NODE_ENV ??= 'production';
const roots = process.argv.slice(2);
const { IndexStore } = await import('./index-store.js');
const { firstBatch } = await import('./launch.js');
const { prepaint } = await import('./prepaint.js');
const { RECORD_ROW } = await import('./rows.js');
const storeReady = IndexStore.open(roots);
const rendererReady = import('./first-row.js');
let rendererLoaded = false;
rendererReady.then(
  () => (rendererLoaded = true),
  () => {},
);
const store = await storeReady;
await Promise.race([firstBatch(store), rendererReady.catch(() => {})]);
// eslint-disable-next-line no-control-regex
if (!rendererLoaded && RECORD_ROW.test(prepaint(store, 100, 30, roots.join(' ')).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''))) {
  process.stdout.write('first-row prepaint\n');
} else {
  const { renderUntilFirstRow } = await rendererReady;
  await renderUntilFirstRow(store);
  process.stdout.write('first-row ink\n');
}
store.close();
process.exit(0);
