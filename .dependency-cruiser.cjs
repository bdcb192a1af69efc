/**
 * The layers of src/, lowest first: a module may import from its own layer and the layers
 * below it, never from one above, and no import cycle is allowed at all (type imports count:
 * they tie the code together as much as values do). Checked by `npm run layers` (in CI, .ci/run)
 * with dependency-cruiser, installed by tools/layers/ (see its package.json for why there).
 * Any violation fails: there is no list of tolerated ones.
 *
 * The order is docs/architecture.md's flow read from the other end (sources -> pipeline ->
 * targets -> export -> commands: each imports what comes before it), with the shared pieces
 * each of them uses placed below the first that uses them. Two of those sit below the sources:
 * output/ (writing files: no module of it reads records or runs workers; the tree copy that
 * does is pipeline/tree-copy.ts) and engine/ (the embedded SQL engine, which needs output/'s
 * scratch files and nothing above them), because readers of Parquet inputs (sources/detect.ts,
 * sources/export-rows.ts) open them with the engine.
 */
const LAYERS = [
  // the record model, small shared helpers, the JSON scanner and canonical JSON
  { name: 'base', path: '^src/(canonical/|(?!cli\\.ts$)[^/]+\\.ts$)' },
  { name: 'output', path: '^src/output/' },
  { name: 'engine', path: '^src/engine/' },
  { name: 'sources', path: '^src/sources/' },
  { name: 'parallel', path: '^src/parallel/' },
  { name: 'verify', path: '^src/verify/' },
  { name: 'pricing', path: '^src/pricing/' },
  { name: 'privacy', path: '^src/privacy/' },
  { name: 'pipeline', path: '^src/pipeline/' },
  { name: 'targets', path: '^src/targets/' },
  { name: 'stats', path: '^src/stats/' },
  { name: 'runs', path: '^src/runs/' },
  { name: 'export', path: '^src/export/' },
  { name: 'index', path: '^src/index/' },
  { name: 'ui', path: '^src/ui/' },
  { name: 'commands', path: '^src/commands/' },
  { name: 'cli', path: '^src/cli\\.ts$' },
];

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `${layer.name}-imports-upward`,
  comment: `${layer.name} sits below ${LAYERS.slice(i + 1).map((l) => l.name).join(', ')}: it may not import them`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: LAYERS.slice(i + 1).map((l) => `(${l.path})`).join('|') },
}));

module.exports = {
  forbidden: [
    { name: 'no-cycle', comment: 'an import cycle: the modules cannot be read, tested or loaded one before the other', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'every-module-in-a-layer',
      comment: 'a module outside every layer of .dependency-cruiser.cjs: add its folder to LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => `(${l.path})`).join('|') },
      to: {},
    },
    {
      name: 'targets-registry-on-top',
      comment: 'the target registry (targets/index.ts) composes the targets: a module of targets/ that looked a target up by name would tie it to every target; pass the Target (or what it needs of it) in',
      severity: 'error',
      from: { path: '^src/targets/', pathNot: '^src/targets/index\\.ts$' },
      to: { path: '^src/targets/index\\.ts$' },
    },
    ...upward,
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    includeOnly: '^src/',
  },
};
