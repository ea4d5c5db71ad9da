// The sha256 that names a blob (hex), for one whole buffer: Node's one-shot `crypto.hash` where it
// exists (Node 20.12+), else a Hash object. The one-shot call makes no Hash object: ~13 µs less per
// call in a process that has not warmed up (a hook's capture hashes the content it reads once).
import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: Uint8Array, encoding: 'hex') => string;
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

export function sha256Hex(data: Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
}
