/**
 * Child process of `measureFirstRow`: starts like `traces browse` (discovery and indexing
 * while ink loads), renders into memory, prints `first-row` at the first record row.
 * Usage: node first-row-probe.js ROOT...
 */
process.env.NODE_ENV ??= 'production';
const roots = process.argv.slice(2);
const { IndexStore } = await import('./index-store.js');
const storeReady = IndexStore.open(roots);
const rendererReady = import('./first-row.js');
const [store, { renderUntilFirstRow }] = await Promise.all([storeReady, rendererReady]);
await renderUntilFirstRow(store);
process.stdout.write('first-row\n');
store.close();
process.exit(0);
