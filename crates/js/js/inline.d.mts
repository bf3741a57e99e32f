// Declarations of `xcsh-session/inline` (inline.mjs), the same names as `xcsh-session`
// (api.d.mts).
export * from './api.mjs';
