// The benchmark uses the same JsStorage over Node's synchronous fs API as the tests.
export { fsStorage } from '../tests/node/fs-storage.mjs';
