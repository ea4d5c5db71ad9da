// The layer map of DESIGN §8 as an eslint rule (`layers/allowed-imports`, run by `npm run lint`): each
// source file of src/ belongs to one layer (its folder; storage/ splits into its contract, its drivers,
// the pack machinery and the stores over them), and a relative import may reach its own layer or one
// the map lists for it. A folder missing from the map fails too, so the map and the tree stay alike.
// Unit tests (`*.test.ts`) may set up with any core layer; they are outside this rule.
import path from 'node:path';

/** The storage backend contract: what every driver implements and everything above takes. */
const CONTRACT = ['storage/backend.ts', 'storage/backend-contract.ts', 'storage/store-key.ts', 'storage/worker-thread.ts'];

const STORAGE = ['storage-contract', 'storage'];
const BELOW_OPS = ['errors', 'format', 'context', ...STORAGE, 'workspace', 'session'];
/** Layer -> the layers it may import (`types`: with `import type` only). Mirrors DESIGN §8's map. */
export const LAYERS = {
  errors: { may: [] },
  'process-alive': { may: [] },
  'small-text': { may: [] },
  'size-cap': { may: [] },
  format: { may: ['errors', 'size-cap'] },
  'storage-contract': { may: ['errors'] },
  'storage/fs': { may: ['errors', 'storage-contract', 'process-alive'] },
  'storage/shared': { may: ['errors', 'storage-contract'] },
  'storage/pack': { may: ['errors', 'format', 'storage-contract'] },
  storage: { may: ['errors', 'format', 'storage-contract', 'storage/pack'] },
  workspace: { may: ['errors', 'format', 'storage-contract', 'storage/fs', 'small-text'], types: ['storage'] },
  context: { may: ['errors', 'size-cap'], types: STORAGE },
  session: { may: ['errors', 'format', 'context', ...STORAGE] },
  capture: { may: BELOW_OPS },
  conversation: { may: BELOW_OPS },
  scan: { may: [...BELOW_OPS, 'storage/pack', 'capture'] },
  restore: { may: [...BELOW_OPS, 'capture', 'conversation', 'scan'] },
  history: { may: [...BELOW_OPS, 'capture', 'restore', 'scan'] },
  gc: { may: [...BELOW_OPS, 'storage/pack', 'scan'] },
  daemon: { may: [...BELOW_OPS, 'storage/shared', 'capture', 'scan', 'process-alive'] },
  api: { may: [...BELOW_OPS, 'capture', 'conversation', 'scan', 'restore', 'history', 'gc'], types: ['store'] },
  store: { may: [...BELOW_OPS, 'storage/fs', 'storage/shared', 'scan', 'restore', 'daemon', 'api'] },
  'locate-workspace': { may: ['errors', 'workspace', 'store'] },
  index: { may: [...BELOW_OPS, 'storage/shared', 'capture', 'conversation', 'scan', 'restore', 'history', 'gc', 'daemon', 'api', 'store', 'locate-workspace'] },
  // Adapters: the public API (src/index.ts) and the adapters below them.
  demo: { may: ['index'] },
  mcp: { may: ['index'] },
  // The thin hook client may not load the engine: it shares only the leaves process-alive.ts, small-text.ts and size-cap.ts.
  hooks: { may: ['index', 'process-alive', 'small-text', 'size-cap'] },
  http: { may: ['index', 'hooks'] },
  cli: { may: ['index', 'hooks', 'http', 'mcp', 'demo'] },
};

/** The layer of a path relative to src/ (with `/` separators). */
export function layerOf(rel) {
  if (CONTRACT.includes(rel)) return 'storage-contract';
  const parts = rel.split('/');
  if (parts.length === 1) return parts[0].replace(/\.(ts|js)$/, '');
  if (parts[0] === 'storage' && parts.length > 2) return `storage/${parts[1]}`;
  return parts[0];
}

const allowedImports = {
  meta: { type: 'problem', schema: [], docs: { description: 'imports follow the layer map of DESIGN §8' } },
  create(context) {
    const src = path.join(context.cwd, 'src');
    const rel = path.relative(src, context.filename).split(path.sep).join('/');
    if (rel.startsWith('..') || rel.endsWith('.test.ts')) return {};
    const from = layerOf(rel);
    const layer = LAYERS[from];
    if (!layer) return { Program: (node) => context.report({ node, message: `${from} is not in the layer map (scripts/eslint-layers.js, DESIGN §8)` }) };
    const check = (node, source, typeOnly) => {
      const spec = source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.relative(src, path.resolve(path.dirname(context.filename), spec)).split(path.sep).join('/');
      if (target.startsWith('..')) return;
      const to = layerOf(target.replace(/\.js$/, '.ts'));
      if (to === from) return;
      if (layer.may.includes(to) || (typeOnly && layer.types?.includes(to))) return;
      context.report({ node, message: `${from} may not import ${to}${layer.types?.includes(to) ? ' (types only)' : ''}: see the layer map in DESIGN §8` });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source, node.importKind === 'type' || (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'))),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, node.source, false),
    };
  },
};

export const layersPlugin = { rules: { 'allowed-imports': allowedImports } };
