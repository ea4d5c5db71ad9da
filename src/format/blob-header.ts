// The blob record format (DESIGN §3), pure: a fixed 13-byte header followed by the payload. Loose
// blob files and the records inside packs are the same bytes, so a record can be copied between them.
//
//   offset  size  field
//   0       3     magic "CKB" (0x43 0x4b 0x42)
//   3       1     format version, 1
//   4       1     codec: 0 raw, 1 brotli, 2 zstd, 3 deflate (raw DEFLATE stream, RFC 1951)
//   5       8     raw (uncompressed) length, unsigned 64-bit big-endian, at most 2^53 - 1
//   13      …     payload (the raw bytes when codec is 0)
//
// The blob id is the sha256 of the raw bytes; it is not stored in the record (it is the file name or
// the pack index key) and every reader re-hashes after decoding.
import { CkptError } from '../errors.js';

export const BLOB_MAGIC = Buffer.from('CKB', 'latin1');
export const BLOB_FORMAT = 1;
export const BLOB_HEADER_LENGTH = 13;

export const CODEC_IDS = { raw: 0, brotli: 1, zstd: 2, deflate: 3 } as const;
export type CodecName = keyof typeof CODEC_IDS;
export type CodecId = (typeof CODEC_IDS)[CodecName];

const CODEC_NAMES: readonly CodecName[] = ['raw', 'brotli', 'zstd', 'deflate'];

export interface BlobHeader {
  codec: CodecId;
  rawLength: number;
  /** Where the payload starts; a later format may have a longer header. */
  headerLength: number;
}

export function codecName(codec: CodecId): CodecName {
  return CODEC_NAMES[codec] as CodecName;
}

export function isCodecId(value: number): value is CodecId {
  return Number.isInteger(value) && value >= 0 && value < CODEC_NAMES.length;
}

export function encodeBlobHeader(codec: CodecId, rawLength: number): Buffer {
  if (!isCodecId(codec)) throw new CkptError('INTERNAL', `unknown blob codec ${String(codec)}`);
  if (!Number.isSafeInteger(rawLength) || rawLength < 0) {
    throw new CkptError('INTERNAL', `invalid raw blob length ${rawLength}`);
  }
  const header = Buffer.alloc(BLOB_HEADER_LENGTH);
  BLOB_MAGIC.copy(header, 0);
  header[3] = BLOB_FORMAT;
  header[4] = codec;
  header.writeBigUInt64BE(BigInt(rawLength), 5);
  return header;
}

/** The whole record: header + payload. For codec `raw`, `payload` is the raw bytes themselves. */
export function encodeBlob(rawLength: number, codec: CodecId, payload: Uint8Array): Buffer {
  if (codec === CODEC_IDS.raw && payload.length !== rawLength) {
    throw new CkptError('INTERNAL', 'raw blob payload length differs from its raw length');
  }
  return Buffer.concat([encodeBlobHeader(codec, rawLength), payload]);
}

/** Parses the header at the start of `buf` (a record or just its first bytes); anything that is not a valid format-1 header is BLOB_CORRUPT. */
export function decodeBlobHeader(buf: Uint8Array): BlobHeader {
  const corrupt = (why: string): CkptError => new CkptError('BLOB_CORRUPT', `bad blob header: ${why}`, { why });
  if (buf.length < BLOB_HEADER_LENGTH) throw corrupt('too short');
  if (buf[0] !== BLOB_MAGIC[0] || buf[1] !== BLOB_MAGIC[1] || buf[2] !== BLOB_MAGIC[2]) throw corrupt('bad magic');
  if (buf[3] !== BLOB_FORMAT) throw corrupt(`unknown format ${String(buf[3])}`);
  const codec = buf[4] as number;
  if (!isCodecId(codec)) throw corrupt(`unknown codec ${codec}`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const length = view.getBigUint64(5, false);
  if (length > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('raw length out of range');
  // The payload length is checked by decompress(), so a header prefix alone can be parsed here.
  return { codec, rawLength: Number(length), headerLength: BLOB_HEADER_LENGTH };
}
