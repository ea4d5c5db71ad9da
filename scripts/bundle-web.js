// `npm run build` step three: the web timeline's files into dist/web/ — src/web/*.{html,js,css} as
// they are (the page is build-free), plus dist/web/highlight.js bundled and minified by esbuild from
// src/web/build/highlight.js (highlight.js's core and the languages the page highlights).
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/web`;
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
for (const entry of await readdir(`${root}src/web`, { withFileTypes: true })) {
  if (entry.isFile()) await copyFile(`${root}src/web/${entry.name}`, `${outdir}/${entry.name}`);
}
await build({
  absWorkingDir: root,
  entryPoints: { highlight: 'src/web/build/highlight.js' },
  outdir,
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
});
