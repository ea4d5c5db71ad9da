// Lint: typescript-eslint's recommended type-aware-free rules over sources, tests and the bench,
// plus the layering of DESIGN §8: the layer map (scripts/eslint-layers.js: which folder may import
// which; adapters reach the core only through src/index.ts), and no test or source of the core imports
// an adapter. (Import cycles are checked by `npm run cycles`.)
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './scripts/eslint-layers.js';

/** Adapter folders (thin layers over the public API); demo is the CLI's scripted session. */
const ADAPTERS = ['cli', 'hooks', 'mcp', 'http', 'web', 'demo'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The web page's script runs in the browser.
    files: ['src/web/**/*.js'],
    languageOptions: { globals: Object.fromEntries(['window', 'document', 'fetch', 'EventSource', 'Node', 'HTMLInputElement', 'HTMLSelectElement', 'Intl', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'setInterval'].map((g) => [g, 'readonly'])) },
  },
  {
    files: ['bin/**/*.js', 'scripts/**/*.js'],
    languageOptions: { globals: { process: 'readonly', URL: 'readonly' } },
  },
  {
    // bin/ is CommonJS (bin/package.json): a hook process never starts the ES module loader.
    files: ['bin/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly', __filename: 'readonly', console: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ADAPTERS.map((a) => `src/${a}/**`),
    rules: { 'no-restricted-imports': ['error', { patterns: ADAPTERS.map((a) => ({ group: [`**/${a}/**`], message: 'the core never imports an adapter (DESIGN §8)' })) }] },
  },
  {
    // picocolors' default colours whenever CI is set, even into a pipe or a log file.
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/colors.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'picocolors', message: 'use pc or colorsFor from cli/colors.ts' }] }] },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/allowed-imports': 'error' },
  },
  {
    // Sources and tests print nothing of their own: the CLI writes through its injected streams, and
    // `npm test` shows no debug lines (the bench reports on the console by design).
    files: ['src/**/*.ts', 'test/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
);
