// Declarations of `xcsh-session/memory-storage` (memory-storage.mjs).
import type { JsStorage } from './xcsh_session.js';

export interface MemoryStorageOptions {
  /** Refuse every write (EACCES); `put` and `putDir` still fill the storage. */
  readOnly?: boolean;
  /** The modification times' clock, epoch ms (default `Date.now`). */
  clock?: () => number;
}

/** A new, empty storage in memory: nothing is kept when the process or tab ends. */
export function memoryStorage(options?: MemoryStorageOptions): MemoryStorage;

/**
 * A synchronous storage over Maps; paths are absolute and `/`-separated. Every method of
 * `JsStorage`, the optional ones included, and the loaders below.
 */
export interface MemoryStorage extends JsStorage {
  readonly readOnly: boolean;
  /** Store a file, creating its directories (bypasses `readOnly`). */
  put(path: string, data: Uint8Array, mtimeMs?: number): void;
  /** Create a directory and its parents (bypasses `readOnly`). */
  putDir(path: string, mtimeMs?: number): void;
  /** A file's bytes, or `undefined`. */
  bytes(path: string): Uint8Array | undefined;
  /** A file's text, or `undefined`. */
  text(path: string): string | undefined;
  exists(path: string): boolean;
  /** Every file path under `dir` (recursively), sorted. */
  filesUnder(dir: string): string[];
  /** The bytes of every file. */
  totalBytes(): number;
  readRange(path: string, offset: number, length: number): Uint8Array;
  createNew(path: string, data: Uint8Array): void;
  processIdentity(): { pid: number; host: string };
  processAlive(pid: number): boolean;
  nowMs(): number;
  randomU64(): bigint;
}

export const MemoryStorage: {
  new (options?: MemoryStorageOptions): MemoryStorage;
  readonly prototype: MemoryStorage;
};
