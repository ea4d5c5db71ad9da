// `npm run build` last step: bundles the CLI with esbuild so that a process — an agent hook runs one
// per tool call — loads a few files instead of hundreds of modules. Three entries share chunks:
// `hook-client.js` (the thin hook client: Node built-ins only, forwards to the daemon), `hook-main.js`
// (the lean in-process `ckpt hook <agent>` path; these two and scan-main are also built as
// standalone CommonJS files, `*.cjs`, which bin/ckpt.js loads), `scan-main.js` (the lean `ckpt … scan` path) and
// `main.js` (the whole CLI); code loaded on demand (the shared-store driver) stays in its own chunk.
//
// A rebuild never pulls files from under a running ckpt (DESIGN §10 "Build output"): each build goes
// to its own folder dist/builds/<id>/ (bundle/ + a copy of the web page's web/), and the stable entries
// dist/bundle/main.js, hook-main.js, scan-main.js, hook-client.js and the .cjs copies — one-line re-exports of the current build — are
// swapped in atomically (rename) once the build is whole. A process resolves the entry once, then
// loads chunks (also lazily, much later) from its own build's folder, which later builds leave in
// place: a build is removed only once it is neither among the KEEP newest nor younger than KEEP_MS (1 h).
// dist/builds/.npmignore names the old builds so that `npm pack` ships the current one only.
import { build } from 'esbuild';
import { cp, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const KEEP = 3;
// A running process has loaded its lazy chunks (the shared-store driver) within its first requests.
const KEEP_MS = 3600 * 1000;

const root = fileURLToPath(new URL('..', import.meta.url));
const builds = `${root}dist/builds`;
const entries = `${root}dist/bundle`;
const id = `${new Date().toISOString().replace(/[-:.]/g, '').replace('T', '-').replace('Z', '')}-${randomBytes(3).toString('hex')}`;
const dir = `${builds}/${id}`;

await mkdir(`${dir}/bundle`, { recursive: true });
// A failed build leaves the current one in force and no folder behind.
process.on('exit', (code) => code !== 0 && rmSync(dir, { recursive: true, force: true }));
await build({
  absWorkingDir: root,
  entryPoints: { 'hook-client': 'src/hooks/client/hook-client.ts', 'hook-main': 'src/hooks/hook-main.ts', 'scan-main': 'src/cli/scan-main.ts', main: 'src/cli/main.ts' },
  outdir: `${dir}/bundle`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunk-[hash]',
  // graceful-fs is only proper-lockfile's default `fs`; ckpt always passes its own (storage/fs/fs-lock.ts).
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
// The hook path and the scan entry are also built as standalone CommonJS files, `hook-client.cjs`,
// `hook-main.cjs` (the in-process hook) and `scan-main.cjs`, which bin/ckpt.js (CommonJS) requires: a
// hook or scan process then never starts Node's ES module loader (DESIGN §10 "The hook path in
// CommonJS"). The shared-store drivers' packages stay outside them, required from node_modules only
// when a shared store is opened, as the ESM build loads their chunk only then.
await build({
  absWorkingDir: root,
  entryPoints: { 'hook-client': 'src/hooks/client/hook-client.ts', 'hook-main': 'src/hooks/hook-main.ts', 'scan-main': 'src/cli/scan-main.ts' },
  outdir: `${dir}/bundle`,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  alias: { 'graceful-fs': 'node:fs' },
  external: ['pg', '@aws-sdk/*'],
  define: { 'import.meta.url': '__ckptImportMetaUrl' },
  banner: { js: "const __ckptImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
// The daemon reads the web page from `../web/` beside the bundle (http/web-assets.ts).
await cp(`${root}dist/web`, `${dir}/web`, { recursive: true });

// The swap: each entry is written beside itself and renamed over the old one.
await mkdir(entries, { recursive: true });
const ENTRIES = ['main.js', 'hook-main.js', 'scan-main.js', 'hook-client.js', 'hook-client.cjs', 'hook-main.cjs', 'scan-main.cjs'];
for (const name of ENTRIES) {
  const tmp = `${entries}/.${name}.${id}.tmp`;
  const target = `../builds/${id}/bundle/${name}`;
  // bin/ckpt.js reads the .cjs line to find the file whose V8 code cache it keeps (requireEntry).
  const body = name.endsWith('.cjs') ? `module.exports = require('${target}');` : `export * from '${target}';`;
  await writeFile(tmp, `// The current build (scripts/bundle.js); rewritten by every build.\n${body}\n`);
  await rename(tmp, `${entries}/${name}`);
}

// Older layouts kept their chunks in dist/bundle/ itself; nothing refers to them once the entries moved.
for (const name of await readdir(entries)) {
  if (!ENTRIES.includes(name)) await rm(`${entries}/${name}`, { recursive: true, force: true });
}
const older = (await readdir(builds, { withFileTypes: true })).filter((e) => e.isDirectory() && e.name !== id).map((e) => e.name).sort().reverse();
const kept = [];
for (const [i, name] of older.entries()) {
  const age = Date.now() - (await stat(`${builds}/${name}`)).mtimeMs;
  if (i < KEEP - 1 || age < KEEP_MS) kept.push(name);
  else await rm(`${builds}/${name}`, { recursive: true, force: true });
}
await writeFile(`${builds}/.npmignore`, kept.map((name) => `/${name}/\n`).join(''));
