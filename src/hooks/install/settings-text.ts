// An agent's JSON settings file as text: parsed strictly (a file that is not a JSON object is refused,
// never rewritten) and written back in the file's own style — its indentation, line endings and final
// newline — as far as JSON allows. Pure: no I/O.
import { CkptError } from '../../index.js';

export interface SettingsText {
  value: Record<string, unknown>;
  style: { indent: string | number; eol: string; finalNewline: boolean };
}

const DEFAULT_STYLE: SettingsText['style'] = { indent: 2, eol: '\n', finalNewline: true };

/** Parses a settings file; `undefined` text (no file yet) is an empty object in the default style. */
export function parseSettings(text: string | undefined, file: string): SettingsText {
  if (text === undefined || text.trim() === '') return { value: {}, style: DEFAULT_STYLE };
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    const where = lineAndColumn(text, /at position (\d+)/.exec((err as Error).message)?.[1]);
    // Gemini CLI reads its settings with comments stripped: say so, ckpt writes plain JSON back.
    const comments = /(^|[\s,{[])(\/\/|\/\*)/.test(text) ? ': it holds comments, which ckpt cannot keep — remove them (or add the hooks by hand) and run init again' : '';
    throw new CkptError('INVALID_ARGUMENT', `${file} is not valid JSON${where} (${(err as Error).message})${comments}; it was left unchanged`, { file });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CkptError('INVALID_ARGUMENT', `${file} does not hold a JSON object; it was left unchanged`, { file });
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indented = /\n([ \t]+)\S/.exec(text);
  const body = text.trimEnd();
  const indent = indented ? indented[1]! : body.includes('\n') ? 2 : 0;
  return { value: value as Record<string, unknown>, style: { indent, eol, finalNewline: /\n$/.test(text) } };
}

/** ` at line L, column C` of a JSON.parse error's position, or nothing. */
function lineAndColumn(text: string, position: string | undefined): string {
  if (position === undefined) return '';
  const before = text.slice(0, Number(position));
  const line = before.split('\n').length;
  return ` at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

export function formatSettings(settings: SettingsText): string {
  const { indent, eol, finalNewline } = settings.style;
  let text = JSON.stringify(settings.value, null, indent === 0 ? undefined : indent);
  if (eol !== '\n') text = text.replace(/\n/g, eol);
  return finalNewline ? `${text}${eol}` : text;
}
