// Declarations of `xcsh-session/inline` (inline.mjs): those of `xcsh-session` in browsers.
export * from './browser.mjs';
