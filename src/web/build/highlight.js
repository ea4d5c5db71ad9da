// The web timeline's syntax highlighter (DESIGN §10 "Web timeline"): highlight.js's core with the
// languages agents mostly edit, bundled by scripts/bundle-web.js into dist/web/highlight.js (one
// file, loaded by the page on its first diff; nothing fetched from elsewhere). Lines are highlighted
// one at a time, as diff2html does: a diff shows fragments, so no state is carried between lines.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGUAGES = { bash, c, cpp, csharp, css, go, ini, java, javascript, json, kotlin, makefile, markdown, php, python, ruby, rust, sql, swift, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

const BY_EXTENSION = {
  sh: 'bash', bash: 'bash', zsh: 'bash',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', hh: 'cpp', cs: 'csharp',
  css: 'css', scss: 'css', go: 'go', ini: 'ini', toml: 'ini', cfg: 'ini', conf: 'ini',
  java: 'java', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  json: 'json', jsonc: 'json', kt: 'kotlin', kts: 'kotlin', mk: 'makefile', md: 'markdown', markdown: 'markdown',
  php: 'php', py: 'python', pyi: 'python', rb: 'ruby', rs: 'rust', sql: 'sql', swift: 'swift',
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', vue: 'xml', yml: 'yaml', yaml: 'yaml',
};
const BY_NAME = { makefile: 'makefile', gnumakefile: 'makefile', dockerfile: 'bash', '.bashrc': 'bash', '.zshrc': 'bash' };

/** The language to highlight `path` as, or null (plain text). */
export function languageOf(path) {
  const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  if (BY_NAME[base]) return BY_NAME[base];
  const dot = base.lastIndexOf('.');
  return dot > 0 ? (BY_EXTENSION[base.slice(dot + 1)] ?? null) : null;
}

/** One line of `language` as HTML (highlight.js escapes the text; only its own spans are markup). */
export function highlightLine(text, language) {
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}
