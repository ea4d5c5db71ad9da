// The S3 side of the shared driver: immutable, uniquely named objects (`put` never overwrites a name
// in use, so no conditional writes are needed), ranged reads, deletes and listings through
// @aws-sdk/client-s3 v3. Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID, …).
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { CkptError } from '../../errors.js';

export interface S3ObjectsOptions {
  bucket: string;
  endpoint?: string;
  region: string;
  /** The redacted store URL, for messages. */
  where: string;
}

export interface S3Listed {
  name: string;
  size: number;
  mtimeMs: number;
}

export interface S3Objects {
  /**
   * Checks the bucket (creating it if missing). `put`, `deleteMany` and `list` make sure it was checked
   * once in this process (a failed check, S3 unreachable, is tried again by the next call); `get` and
   * `head` do not wait for it, and a read from a missing bucket is IO, never a missing object.
   */
  ensureBucket(): Promise<void>;
  put(name: string, data: Uint8Array): Promise<void>;
  /** The whole object, or `length` bytes from `offset`; undefined when the object is missing. */
  get(name: string, range?: { offset: number; length: number }): Promise<Buffer | undefined>;
  head(name: string): Promise<{ size: number; mtimeMs: number } | undefined>;
  deleteMany(names: readonly string[]): Promise<void>;
  list(prefix: string): Promise<S3Listed[]>;
  close(): void;
}

/**
 * Timeouts (the SDK has none by default: a partitioned S3 hung a command for ever). A socket idle for
 * SOCKET_TIMEOUT_MS (no byte either way) is given up; an 8 MiB pack upload keeps its socket busy, so
 * the limit does not bound a large transfer. A failed request is tried once more (MAX_ATTEMPTS), so an
 * unreachable S3 fails a call with IO after ~2 x 8 s at most (refused connections: at once).
 */
const CONNECTION_TIMEOUT_MS = 3_000;
const SOCKET_TIMEOUT_MS = 8_000;
const MAX_ATTEMPTS = 2;

const isMissing = (err: unknown): boolean =>
  err instanceof S3ServiceException && err.name !== 'NoSuchBucket' && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);

export function createS3Objects(options: S3ObjectsOptions): S3Objects {
  // ckpt supports Node 20; the SDK's notice about its own future Node requirement would otherwise
  // land on every CLI run's stderr.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    // Checksums on every request are not needed: every byte read back is verified by content hash.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS },
  });
  const Bucket = options.bucket;
  const ioError = (err: unknown, what: string): CkptError => {
    if (err instanceof CkptError) return err;
    const name = err instanceof Error ? err.name : 'Error';
    const message = err instanceof Error ? err.message : String(err);
    // The SDK's messages never carry the secret key; the endpoint and bucket are safe to name.
    return new CkptError('IO', `object store (bucket ${Bucket}): ${what}: ${name}: ${message}`, { bucket: Bucket, retryable: true }, { cause: err });
  };

  async function checkBucket(): Promise<void> {
    try {
      await client.send(new HeadBucketCommand({ Bucket }));
      return;
    } catch (err) {
      if (!isMissing(err)) throw ioError(err, 'head bucket');
    }
    try {
      await client.send(new CreateBucketCommand({ Bucket }));
    } catch (err) {
      const name = err instanceof Error ? err.name : '';
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw ioError(err, 'create bucket');
    }
  }
  let bucketChecked: Promise<void> | undefined;
  /** The bucket check, once: a failed one is forgotten so that the next call tries again. */
  const ensureBucket = (): Promise<void> =>
    (bucketChecked ??= checkBucket().catch((err: unknown) => {
      bucketChecked = undefined;
      throw err;
    }));

  return {
    ensureBucket,

    async put(name, data) {
      await ensureBucket();
      try {
        await client.send(new PutObjectCommand({ Bucket, Key: name, Body: data, ContentLength: data.length }));
      } catch (err) {
        throw ioError(err, `put ${name}`);
      }
    },

    async get(name, range) {
      if (range && range.length <= 0) return Buffer.alloc(0);
      try {
        const res = await client.send(
          new GetObjectCommand({ Bucket, Key: name, ...(range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}) }),
        );
        if (!res.Body) return Buffer.alloc(0);
        return Buffer.from(await res.Body.transformToByteArray());
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw ioError(err, `get ${name}`);
      }
    },

    async head(name) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket, Key: name }));
        return { size: res.ContentLength ?? 0, mtimeMs: res.LastModified?.getTime() ?? 0 };
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw ioError(err, `head ${name}`);
      }
    },

    async deleteMany(names) {
      await ensureBucket();
      for (let i = 0; i < names.length; i += 1000) {
        const batch = names.slice(i, i + 1000);
        try {
          const res = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
          const failed = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
          if (failed.length > 0) throw new Error(`${failed.length} deletes failed, first ${failed[0]!.Key}: ${failed[0]!.Code}`);
        } catch (err) {
          throw ioError(err, `delete ${batch.length} objects`);
        }
      }
    },

    async list(prefix) {
      await ensureBucket();
      const out: S3Listed[] = [];
      let token: string | undefined;
      try {
        do {
          const res = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }));
          for (const o of res.Contents ?? []) {
            if (o.Key) out.push({ name: o.Key, size: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 });
          }
          token = res.IsTruncated ? res.NextContinuationToken : undefined;
        } while (token);
      } catch (err) {
        throw ioError(err, `list ${prefix}`);
      }
      return out;
    },

    close() {
      client.destroy();
    },
  };
}
