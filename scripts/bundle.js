// `npm run build` step two: bundles the CLI into dist/bundle/ with esbuild so that a process — an
// agent hook runs one per tool call — loads a few files instead of hundreds of modules. Two entries
// share chunks: `hook-main.js` (the lean `ckpt hook <agent>` path) and `main.js` (the whole CLI);
// code loaded on demand (isomorphic-git) stays in its own chunk. bin/ckpt.js uses the bundle when it
// exists and falls back to tsc's dist/ otherwise.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bundle`;
await rm(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { 'hook-main': 'src/hooks/hook-main.ts', main: 'src/cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  // graceful-fs is only proper-lockfile's default `fs`; ckpt always passes its own (storage/fs-lock.ts).
  // Loading it cost importing the hook bundle ~3 ms (a whole hook process ~1 ms) and patched the
  // process's fs and process.cwd.
  alias: { 'graceful-fs': 'node:fs' },
  // Bundled CommonJS dependencies call require() for Node's built-ins and may read __filename/__dirname.
  banner: {
    js: [
      "import { createRequire as __ckptRequire } from 'node:module';",
      "import { fileURLToPath as __ckptPath } from 'node:url';",
      "import { dirname as __ckptDirname } from 'node:path';",
      'const require = __ckptRequire(import.meta.url);',
      'const __filename = __ckptPath(import.meta.url);',
      'const __dirname = __ckptDirname(__filename);',
    ].join(' '),
  },
  logLevel: 'warning',
});
