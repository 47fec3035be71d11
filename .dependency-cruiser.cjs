/* global module */
/**
 * The layer order of src/ and bench/, checked by `npm run lint` (docs/adr/0119-layers-enforced-by-dependency-cruiser.md).
 *
 * Top → down: main, server, app, container, start-up checks, CLIs and dev tooling → http →
 * resources (and the device migration) → store and access → the leaves (errors, domain,
 * config, lanes, log, trace context, validation, periodic, recent map, version). An import may go down any
 * number of layers, never up or sideways between store and access, and never round in a cycle.
 * Type-only imports count like any other: a cycle through types is still a cycle.
 */

const LEAVES =
  '^src/(errors|domain|config|config-tracing|config-types|lanes|lifecycle|log|trace-context|validation|compiled-accept|periodic|recent-map|version)[.]ts$';
const TOP = '^src/(main|server|app|container|start-checks|tracing|runtime)[.]ts$|^src/(cli|dev)/';
const HTTP = '^src/http/';
const RESOURCES = '^src/(resources|migration)/';
const STORE = '^src/store/';
const ACCESS = '^src/access/';
/** A resource's HTTP adapter: its route declarations and their joi forms. */
const RESOURCE_ADAPTERS = '^src/resources/.+/(routes|[a-z-]+-routes|schema|[a-z-]+-schema)[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'No import cycles, type-only imports included: each module can be read after the ones it imports.',
      severity: 'error',
      from: { path: '^(src|bench)/' },
      to: { circular: true },
    },
    {
      name: 'nothing-imports-the-top',
      comment: 'main, server, app, the container, start-up checks, the CLIs and dev tooling sit above everything: nothing below imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: TOP },
      to: { path: TOP },
    },
    {
      name: 'http-below-the-top-only',
      comment: 'Only the top and the HTTP layer itself (and a resource\'s routes) import src/http/.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${TOP}|${HTTP}|${RESOURCE_ADAPTERS}` },
      to: { path: HTTP },
    },
    {
      name: 'resources-not-from-below',
      comment: 'The store, the permission model and the leaves know no resource.',
      severity: 'error',
      from: { path: `${STORE}|${ACCESS}|${LEAVES}` },
      to: { path: RESOURCES },
    },
    {
      name: 'store-and-access-apart',
      comment: 'The store and the permission model sit side by side: neither imports the other.',
      severity: 'error',
      from: { path: STORE },
      to: { path: ACCESS },
    },
    {
      name: 'access-and-store-apart',
      comment: 'The store and the permission model sit side by side: neither imports the other.',
      severity: 'error',
      from: { path: ACCESS },
      to: { path: STORE },
    },
    {
      name: 'leaves-import-only-leaves',
      comment: 'errors, domain, config, lanes, log, the trace context, validation and its compiled acceptors, periodic, the recent map and version import nothing of src/ but each other.',
      severity: 'error',
      from: { path: LEAVES },
      to: { path: '^src/', pathNot: LEAVES },
    },
    {
      name: 'rare-code-loaded-on-demand',
      comment:
        "The OpenAPI conversion and the migration's SQL drivers load when first needed (docs/adr/0147): src/ imports their libraries only dynamically, or for types.",
      severity: 'error',
      from: { path: '^src/' },
      to: {
        path: '(^|/)node_modules/(pg|pg-copy-streams|@electric-sql/pglite|joi-to-json)/',
        dependencyTypesNot: ['dynamic-import', 'type-only'],
      },
    },
    {
      name: 'config-is-a-leaf',
      comment: 'The settings import only their own parts (the tracing variables, the lane names).',
      severity: 'error',
      from: { path: '^src/config[.]ts$' },
      to: { path: '^src/', pathNot: '^src/(config-tracing|config-types|lanes)[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/console/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
