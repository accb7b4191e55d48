// The npm package's entry point: the WebAssembly build's calls (pkg/, made by wasm-bindgen's
// `nodejs` target; see ../build.sh) with their options as objects and their answers parsed from
// the JSON the CLI prints with `--format json`. Types: index.d.ts.
'use strict';

const raw = require('./pkg/ozcheck_wasm.js');

const opts = (options) => JSON.stringify(options ?? {});

/** `ozcheck filter --format json`. */
function checkFilter(source, options) {
  return JSON.parse(raw.checkFilter(source, opts(options)));
}

/** What dominates the cost, or null when the expression does not compile. */
function costSummary(source, options) {
  return JSON.parse(raw.costSummary(source, opts(options)));
}

/** The cost tree of `ozcheck filter --explain`; throws with the first diagnostic. */
function explain(source, options) {
  return raw.explain(source, opts(options));
}

/** The heaviest event within the bounds and its metered cost, or null. */
function witness(source, options) {
  return JSON.parse(raw.witness(source, opts(options)));
}

/**
 * `ozcheck eval --format json`. `event` is JSON text or an object. Throws on a malformed event.
 */
function evaluate(source, event, options = {}) {
  const text = typeof event === 'string' ? event : JSON.stringify(event);
  const limit = options.limit ?? 1000000;
  const deadlineMs = options.deadlineMs ?? 250;
  return JSON.parse(raw.evaluate(source, text, limit, deadlineMs, options.staticCheck ?? true));
}

/** `ozcheck lint --format json` on one file's text. */
function lintText(text, path, options = {}) {
  return JSON.parse(raw.lintText(text, path, options.config ?? ''));
}

/** The safe fixes applied (`ozcheck lint --fix` on one file): the new text and what remains. */
function fixText(text, path, options = {}) {
  return JSON.parse(raw.fixText(text, path, options.config ?? ''));
}

/** The rule catalogue. */
function rules() {
  return JSON.parse(raw.rules());
}

module.exports = { checkFilter, costSummary, explain, witness, evaluate, lintText, fixText, rules };
