// Workspace scans: the public surface (DESIGN §9 `ckpt scan`).
export { scan, scanIndexKey, type ScanChange, type ScanChangeKind, type ScanOptions, type ScanResult } from './scan.js';
