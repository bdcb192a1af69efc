/**
 * Opens the browser's index on `roots` as `traces browse` does (other recorders' files too),
 * waits until every record is indexed, and prints the process's peak RSS in MB and the
 * records indexed, as JSON: what bench/otlp.ts compares between a span file and a tree.
 *
 *   node dist/bench/browse-store-rss.js ROOT...
 */
import { IndexStore } from '../src/ui/index-store.js';

const store = await IndexStore.open(process.argv.slice(2), { otherSources: true });
await store.whenDone();
const records = store.count;
store.close();
process.stdout.write(JSON.stringify({ records, peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024) }) + '\n');
