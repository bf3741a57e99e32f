// Declarations of `xcsh-session/memory-storage` (memory-storage.mjs).
import type { JsStorage, StorageDirEntry, StorageStat } from './xcsh_session.js';

export interface MemoryStorageOptions {
  /** Refuse every write (EACCES); `put` and `putDir` still fill the storage. */
  readOnly?: boolean;
  /** The modification times' clock, epoch ms (default `Date.now`). */
  clock?: () => number;
}

/** A new, empty storage in memory: nothing is kept when the process or tab ends. */
export function memoryStorage(options?: MemoryStorageOptions): MemoryStorage;

/** A synchronous storage over Maps; paths are absolute and `/`-separated. */
export class MemoryStorage implements JsStorage {
  constructor(options?: MemoryStorageOptions);
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
  read(path: string): Uint8Array;
  readPrefix(path: string, maxBytes: number): Uint8Array;
  write(path: string, data: Uint8Array): void;
  append(path: string, data: Uint8Array): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
  listDir(path: string): StorageDirEntry[];
  stat(path: string): StorageStat;
  mkdirAll(path: string): void;
  fsync(path: string): void;
  rmdir(path: string): void;
  createNew(path: string, data: Uint8Array): void;
  processIdentity(): { pid: number; host: string };
  processAlive(pid: number): boolean;
  nowMs(): number;
  randomU64(): bigint;
}
