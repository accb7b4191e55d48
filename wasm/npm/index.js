// The npm package's entry point: the WebAssembly build's calls (pkg/, made by wasm-bindgen's
// `nodejs` target; see ../build.sh) with their options as objects and their answers parsed from
// the JSON the CLI prints with `--format json`. Types: index.d.ts.
'use strict';

const raw = require('./pkg/ozcheck_wasm.js');

const opts = (options) => JSON.stringify(options ?? {});

/**
 * Refuses a value that is not a string before it reaches the module: wasm-bindgen's glue
 * copies strings into the module's memory and does not check the type itself.
 */
function text(value, name) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, not ${typeof value}`);
  return value;
}

/** `ozcheck filter --format json`. */
function checkFilter(source, options) {
  return JSON.parse(raw.checkFilter(text(source, 'source'), opts(options)));
}

/** What dominates the cost, or null when the expression does not compile. */
function costSummary(source, options) {
  return JSON.parse(raw.costSummary(text(source, 'source'), opts(options)));
}

/** The cost tree of `ozcheck filter --explain`; throws with the first diagnostic. */
function explain(source, options) {
  return raw.explain(text(source, 'source'), opts(options));
}

/** The heaviest event within the bounds and its metered cost, or null. */
function witness(source, options) {
  return JSON.parse(raw.witness(text(source, 'source'), opts(options)));
}

/**
 * `ozcheck eval --format json`. `event` is JSON text or an object. Throws on a malformed event.
 */
function evaluate(source, event, options = {}) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const limit = options.limit ?? 1000000;
  const deadlineMs = options.deadlineMs ?? 250;
  return JSON.parse(raw.evaluate(text(source, 'source'), text(body ?? '', 'event'), Number(limit), deadlineMs, options.staticCheck ?? true));
}

/** `ozcheck lint --format json` on one file's text. */
function lintText(source, path, options = {}) {
  return JSON.parse(raw.lintText(text(source, 'text'), text(path, 'path'), text(options.config ?? '', 'config')));
}

/** The safe fixes applied (`ozcheck lint --fix` on one file): the new text and what remains. */
function fixText(source, path, options = {}) {
  return JSON.parse(raw.fixText(text(source, 'text'), text(path, 'path'), text(options.config ?? '', 'config')));
}

/** The rule catalogue. */
function rules() {
  return JSON.parse(raw.rules());
}

module.exports = { checkFilter, costSummary, explain, witness, evaluate, lintText, fixText, rules };
