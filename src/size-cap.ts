// The size cap of a stored file: its default, and byte sizes as people write them (`16M`, `512k`,
// `1.5G`, `1048576`; binary units, k = 1024) as a number or undefined. A leaf (nothing imported), so
// the thin hook client reads CKPT_MAX_FILE_SIZE as the engine does.

/** The size cap of a stored file when neither the options nor CKPT_MAX_FILE_SIZE set one. */
export const DEFAULT_MAX_BLOB_BYTES = 16 * 1024 * 1024;

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

export function sizeBytes(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
  return Number.isSafeInteger(bytes) && bytes >= 1 ? bytes : undefined;
}
