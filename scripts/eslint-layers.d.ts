// Types of scripts/eslint-layers.js for the tests that read the layer map.
export declare const LAYERS: Record<string, { may: string[]; types?: string[] }>;
export declare function layerOf(rel: string): string;
export declare const layersPlugin: unknown;
