// A workspace path (or a link's target) as human output shows it (SECURITY promise 7). A name may hold
// any byte but `/` and NUL — a newline too: `ckpt restore --dry-run` printed a file named
// "x\n  delete src/main.ts" as two plan lines, the second one forged. A name with a line break, a
// control character, a double quote or a backslash is shown quoted, with JSON's escapes (as git's
// core.quotePath shows such names); any other name as it is. JSON output carries names unchanged.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_QUOTES = /[\x00-\x1f\x7f-\x9f"\\\u2028\u2029]/;

export function pathText(path: string): string {
  return NEEDS_QUOTES.test(path) ? JSON.stringify(path).replace(/[\x7f-\x9f\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : path;
}
