// Shared-store URLs (issue 17): `postgres://user@host:port/db?blobs=s3://bucket[/prefix]&endpoint=…`
// selects the PostgreSQL + S3 driver instead of a folder. Parsing, validation, and the redacted form
// that is the only one ever shown (logs, errors, `store.dir`): credentials come from the environment
// (PGPASSWORD, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), and one written into the URL is never echoed.
import { CkptError } from '../../errors.js';

export interface SharedStoreLocation {
  /** The PostgreSQL connection string without the ckpt parameters (may hold a password: never print it). */
  pgConnectionString: string;
  /** Schema holding the store's tables (`schema=`, default `ckpt`). */
  schema: string;
  bucket: string;
  /** Key prefix inside the bucket (`s3://bucket/prefix`), '' or ending in `/`. */
  prefix: string;
  /** S3 endpoint (`endpoint=`); absent means AWS itself. Path-style addressing when given. */
  endpoint?: string;
  region: string;
  /** The URL with any password and secret removed: safe to print. */
  redacted: string;
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const CKPT_PARAMS = ['blobs', 'endpoint', 'region', 'schema'];

/** True when `store` names a shared store rather than a folder. */
export function isSharedStoreUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//i.test(store);
}

/** Removes user passwords and secret-looking query parameters from any URL-ish string. */
export function redactUrl(url: string): string {
  // A URL's user information runs to the *last* '@' before the end of its authority (the first '/',
  // '?' or '#'), as URL parsers read it: a password holding '@' or a space is hidden whole.
  const userInfo = (s: string) => s.replace(/(\/\/[^/:@?#\s]*):[^/?#]*@/g, '$1:***@');
  let out = userInfo(url);
  out = out.replace(/([?&](?:password|secret|sslpassword|token|aws_secret_access_key|aws_session_token)=)[^&#\s]*/gi, '$1***');
  // A parameter holding a URL percent-encoded (`endpoint=http%3A%2F%2Fkey%3Asecret%40host`) is read
  // decoded by the parser: its user information is hidden as decoded, then encoded again.
  return out.replace(/([?&][^=&#\s]+=)([^&#\s]*%[^&#\s]*)/g, (all, key: string, value: string) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      return all;
    }
    const hidden = userInfo(decoded);
    return hidden === decoded ? all : `${key}${encodeURIComponent(hidden)}`;
  });
}

export function parseSharedStoreUrl(url: string): SharedStoreLocation {
  const redacted = redactUrl(url);
  const fail = (why: string): never => {
    throw new CkptError('INVALID_ARGUMENT', `invalid store URL ${redacted}: ${why}`, { store: redacted });
  };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not parseable: where its user information ends is unclear (a password holding '/', '?' or '#'
    // not percent-encoded), so everything up to the last '@' is hidden.
    const hidden = url.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/is, '$1***@');
    throw new CkptError('INVALID_ARGUMENT', `invalid store URL ${redactUrl(hidden)}: not a URL (percent-encode '/', '?', '#' and '@' in a password)`, {
      store: redactUrl(hidden),
    });
  }
  if (!/^postgres(ql)?:$/i.test(parsed.protocol)) fail('expected postgres://');
  const q = parsed.searchParams;
  const blobs = q.get('blobs') ?? fail('missing blobs=s3://bucket (where blobs and packs are kept)');
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(blobs) ?? fail('blobs= must be s3://bucket[/prefix]');
  const bucket = m[1]!;
  if (!BUCKET_RE.test(bucket)) fail(`bad bucket name ${JSON.stringify(bucket)}`);
  let prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((s) => s === '.' || s === '..') || prefix.includes('\\')) fail('bad blob prefix');
  if (prefix) prefix += '/';
  const schema = q.get('schema') ?? 'ckpt';
  if (!SCHEMA_RE.test(schema)) fail(`schema must match ${SCHEMA_RE.source}`);
  const endpoint = q.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) fail('endpoint= must be http(s)://host[:port]');
  const region = q.get('region') ?? process.env.AWS_REGION ?? 'us-east-1';
  // What is left is PostgreSQL's own (sslmode, application_name, …): pass it on untouched.
  const pg = new URL(parsed.href);
  for (const p of CKPT_PARAMS) pg.searchParams.delete(p);
  return { pgConnectionString: pg.href, schema, bucket, prefix, endpoint, region, redacted };
}
