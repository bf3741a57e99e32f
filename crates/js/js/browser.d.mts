// Declarations of `xcsh-session` in browsers and bundlers (browser.mjs), the same names as
// in Node (api.d.mts).
export * from './api.mjs';
