/**
 * The layer rules of docs/architecture.md, checked by `npm run lint`
 * (`npm run lint:layers`): a wrong import fails the build. The table below is
 * the source of truth; `npm run layers:graph` draws it from the code.
 * test/scripts/layersGraph.test.ts runs these rules over a fixture tree that breaks each
 * one, so a rule that stops catching anything fails the suite.
 */

/** Each layer and the layers it may import (its own folder always). */
const LAYERS = {
  cli: ['ui-server', 'actors', 'board', 'supervisor', 'containers', 'db', 'machines', 'common'],
  testing: ['actors', 'board', 'supervisor', 'containers', 'db', 'machines', 'common'],
  'ui-server': ['client', 'board', 'supervisor', 'common'],
  client: ['board', 'common'],
  actors: ['board', 'supervisor', 'containers', 'db', 'machines', 'common'],
  supervisor: ['common'],
  containers: ['machines', 'common'],
  db: ['board', 'common'],
  machines: ['common'],
  board: ['common'],
  common: [],
};

/** npm packages a layer may import, where the layer is kept free of I/O. */
const PURE_PACKAGES = {
  common: [],
  board: ['zod'],
  machines: ['xstate'],
  supervisor: ['xstate'],
  client: ['@xstate/store', 'shell-quote', 'zod'],
};

const alternatives = (names) => names.map((n) => n.replace(/[-/]/g, (c) => `\\${c}`)).join('|');

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment: `src/${layer} may import only ${allowed.length ? allowed.map((a) => `src/${a}`).join(', ') : 'nothing else in src'}`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: '^src/', pathNot: `^src/(${alternatives([layer, ...allowed])})/` },
}));

const packageRules = Object.entries(PURE_PACKAGES).map(([layer, allowed]) => ({
  name: `pure-${layer}`,
  comment: `src/${layer} imports no I/O: only ${allowed.length ? allowed.join(', ') : 'nothing outside src'}`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: {
    dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'core'],
    ...(allowed.length ? { pathNot: `(^|/)node_modules/(${alternatives(allowed)})/` } : {}),
  },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    ...packageRules,
    {
      name: 'no-circular',
      comment: 'no import cycle that exists at run time, anywhere',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-types',
      comment: 'no cycle of type imports either',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-not-to-tests',
      comment: 'src imports nothing from test/, bench/ or scripts/',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'src-not-to-dev-deps',
      comment:
        'what src imports at run time is a dependency, not a devDependency. Two are meant: ' +
        'browserBundle loads esbuild only in a checkout (the package serves prebuilt pages), ' +
        'the contract suite (roundtable/testing/contract) has vitest as its optional peer, ' +
        'and roundtable/testing/property has fast-check as its own',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot:
          '^src/(ui-server/browserBundle|testing/containerContract|testing/replayableProperty)\\.ts$',
      },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
    },
  },
};
