// A read-only storage over the files of an opened folder (`File` objects): nothing is read
// until the package asks, and then only what it asks for (a range, a prefix, a whole
// session it opens), synchronously with FileReaderSync (dedicated workers only). An
// opened folder of gigabytes holds no bytes: listing it reads each session's head and
// index, opening a session reads that session.
import { MemoryStorage, rangeArgs } from '../pkg/memory-storage.mjs';

const NOTHING = new Uint8Array(0);

export class FileStorage extends MemoryStorage {
  #reader = new FileReaderSync();

  constructor() {
    super({ readOnly: true });
  }

  /** Lists `file` at `path` (creating its directories) without reading it. */
  putFile(path, file, mtimeMs = file.lastModified) {
    this.put(path, NOTHING, mtimeMs);
    const entry = this.files.get(path);
    entry.file = file;
    entry.size = file.size;
  }

  /** `length` bytes of `file` from `offset` (fewer at its end). */
  #slice(file, offset, length) {
    const end = Math.min(file.size, offset + length);
    if (offset >= end) return NOTHING;
    return new Uint8Array(this.#reader.readAsArrayBuffer(file.slice(offset, end)));
  }

  #file(path) {
    return this.files.get(path)?.file;
  }

  read(path) {
    const file = this.#file(path);
    return file ? this.#slice(file, 0, file.size) : super.read(path);
  }

  bytes(path) {
    return this.#file(path) ? this.read(path) : super.bytes(path);
  }

  readPrefix(path, maxBytes) {
    const file = this.#file(path);
    return file ? this.#slice(file, 0, Math.max(0, Number(maxBytes) || 0)) : super.readPrefix(path, maxBytes);
  }

  readRange(path, offset, length) {
    const file = this.#file(path);
    if (!file) return super.readRange(path, offset, length);
    [offset, length] = rangeArgs(offset, length);
    return this.#slice(file, offset, length);
  }
}
