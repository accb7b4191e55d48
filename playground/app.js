// The playground: the `web` build of ozcheck's analyzer and lint (pkg/, made by
// ../wasm/build.sh) driven from plain DOM code. Every answer is the CLI's `--format json`; the
// page only renders it. The whole state lives in the URL's fragment, so a link reopens it.
import init, * as oz from './pkg/ozcheck_wasm.js';

const $ = (id) => document.getElementById(id);
const BOUNDS = ['limit', 'maxText', 'maxAttributes', 'maxHeader'];
// The sample plugin's flow (corpus/plugins/sample/flows/ci-watch.yaml).
const SAMPLE_FLOW = `name: ci-watch
trigger:
  event: { source: github-events, types: [pull_request], filter: "event.action == 'opened'" }
steps:
  - id: ci
    wait_for_event:
      source: github-events
      types: [check_suite]
      subject: \${{ trigger.event.subject }}
      filter: event.attributes.conclusion != ''
      timeout: 1h30m
  - id: tell
    when: steps.ci.matched && steps.ci.event.attributes.conclusion == 'failure'
    approval: { details: "CI failed on \${{ trigger.event.subject }}. Look at it?" }
`;

/** Timings the browser test reads (BENCHMARKS.md). */
window.ozTimings = { loadMs: null, lastCheckMs: null, keyToVerdictMs: null };

// ---- state in the URL ------------------------------------------------------------------------

const FIELDS = ['expr', 'context', 'extensions', ...BOUNDS, 'event', 'yaml', 'yaml-path'];

function stateFromPage() {
  const params = new URLSearchParams();
  for (const id of FIELDS) params.set(id, $(id).value);
  params.set('tab', $('panel-yaml').hidden ? 'filter' : 'yaml');
  return params;
}

function saveState() {
  const url = `#${stateFromPage().toString()}`;
  history.replaceState(null, '', url);
  $('share').href = url;
}

function loadState() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const id of FIELDS) if (params.has(id)) $(id).value = params.get(id);
  if (!params.has('yaml')) $('yaml').value = SAMPLE_FLOW;
  showTab(params.get('tab') === 'yaml' ? 'yaml' : 'filter');
}

// ---- tabs --------------------------------------------------------------------------------------

function showTab(name) {
  for (const tab of ['filter', 'yaml']) {
    const on = tab === name;
    $(`tab-${tab}`).setAttribute('aria-selected', String(on));
    $(`tab-${tab}`).tabIndex = on ? 0 : -1;
    $(`panel-${tab}`).hidden = !on;
  }
}

for (const tab of ['filter', 'yaml']) {
  $(`tab-${tab}`).addEventListener('click', () => { showTab(tab); saveState(); });
  $(`tab-${tab}`).addEventListener('keydown', (e) => {
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const other = tab === 'filter' ? 'yaml' : 'filter';
      showTab(other);
      $(`tab-${other}`).focus();
      saveState();
    }
  });
}

// ---- the filter ----------------------------------------------------------------------------------

function options(extra = {}) {
  const o = { context: $('context').value };
  const ext = $('extensions').value.trim();
  if (ext) o.extensions = ext;
  for (const id of BOUNDS) {
    const v = $(id).value.trim();
    if (v !== '') o[id] = Number(v);
  }
  return JSON.stringify({ ...o, ...extra });
}

const fmt = (n) => Number(n).toLocaleString('en-US');

/** Byte offsets of the UTF-8 source → offsets into the JavaScript string. */
function charOffset(text, byte) {
  const bytes = new TextEncoder().encode(text);
  return new TextDecoder().decode(bytes.slice(0, byte)).length;
}

function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

function highlight(text, span, cls) {
  const backdrop = $('backdrop');
  if (!span) {
    backdrop.innerHTML = `${escapeHtml(text)}\n`;
    return;
  }
  const a = charOffset(text, span.start);
  const b = charOffset(text, span.end);
  backdrop.innerHTML = `${escapeHtml(text.slice(0, a))}<mark class="${cls}" id="dominant">${escapeHtml(text.slice(a, b))}</mark>${escapeHtml(text.slice(b))}\n`;
}

function li(html, cls) {
  const item = document.createElement('li');
  if (cls) item.className = cls;
  item.innerHTML = html;
  return item;
}

function check(event) {
  const source = $('expr').value;
  let report;
  let summary;
  const started = performance.now();
  try {
    report = JSON.parse(oz.checkFilter(source, options()));
    summary = JSON.parse(oz.costSummary(source, options()));
  } catch (e) {
    $('verdict').textContent = `Error: ${e.message ?? e}`;
    $('verdict').className = 'verdict refused';
    return;
  }
  window.ozTimings.lastCheckMs = performance.now() - started;
  const verdict = $('verdict');
  verdict.className = `verdict ${report.verdict}`;
  verdict.dataset.verdict = report.verdict;
  verdict.textContent = report.verdict === 'accepted' ? 'Accepted' : 'Refused';

  const cost = $('cost');
  cost.innerHTML = '';
  const fact = (term, value, id) => {
    cost.insertAdjacentHTML('beforeend', `<dt>${term}</dt><dd${id ? ` id="${id}"` : ''}>${value}</dd>`);
  };
  if (report.cost) {
    fact('Cost range', `<span id="cost-min">${fmt(report.cost.min)}</span> – <span id="cost-max">${fmt(report.cost.max)}</span> of ${fmt(report.limit)}`, 'cost-range');
  }
  if (summary) {
    const dom = source.slice(charOffset(source, summary.dominant.start), charOffset(source, summary.dominant.end));
    fact('Dominated by', `<code>${escapeHtml(dom)}</code>: up to ${fmt(summary.dominant_max)} per evaluation, run up to ${fmt(summary.dominant_runs)} times`, 'dominant-fact');
    fact('Assuming', escapeHtml(summary.assumption));
  }
  fact('Checked in', `${window.ozTimings.lastCheckMs.toFixed(2)} ms`);
  const errorSpan = report.diagnostics.find((d) => d.severity === 'error' && d.code !== 'cost-over-limit')?.span;
  if (summary) highlight(source, summary.dominant, 'dominant');
  else highlight(source, errorSpan, 'error');
  $('backdrop').dataset.span = summary ? `${summary.dominant.start}-${summary.dominant.end}` : '';

  const list = $('diagnostics');
  list.innerHTML = '';
  for (const d of report.diagnostics) {
    list.append(li(`<strong>${d.severity}[${escapeHtml(d.code)}]</strong> ${escapeHtml(d.message)}${d.help ? `<br><span class="help">help: ${escapeHtml(d.help)}</span>` : ''}`, d.severity));
  }

  const wp = $('would-pass');
  wp.innerHTML = '';
  if (report.would_pass) {
    const names = { text: 'maxText', attributes: 'maxAttributes', header_field: 'maxHeader' };
    const items = report.would_pass.bounds.map((b) => `<li>${b.bound} at most <button class="link" data-bound="${names[b.bound]}" data-value="${b.at_most}">${fmt(b.at_most)}</button> bytes (now ${fmt(b.current)}; cost then ${fmt(b.cost)})</li>`);
    const floors = report.would_pass.not_enough.map((f) => `<li>${f.bound} even at its least (${fmt(f.least)}) still costs ${fmt(f.cost)}</li>`);
    wp.innerHTML = `<h2>Would pass with</h2><ul id="would-pass-list">${items.join('') || '<li>no single bound: the expression itself must change</li>'}${floors.join('')}</ul>`;
  }
  // Keystroke to verdict: from the input event's timestamp (same origin as performance.now())
  // to the verdict rendered.
  if (event?.timeStamp) window.ozTimings.keyToVerdictMs = performance.now() - event.timeStamp;
  saveState();
}

$('would-pass').addEventListener('click', (e) => {
  const button = e.target.closest('button[data-bound]');
  if (!button) return;
  $(button.dataset.bound).value = button.dataset.value;
  check();
});

for (const id of ['expr', 'context', 'extensions', ...BOUNDS]) $(id).addEventListener('input', check);
$('expr').addEventListener('scroll', () => { $('backdrop').scrollTop = $('expr').scrollTop; });

let witnessUrl = null;
$('build-witness').addEventListener('click', () => {
  const out = $('witness-cost');
  try {
    const w = JSON.parse(oz.witness($('expr').value, options()));
    if (!w) {
      out.textContent = 'No witness: the expression does not compile, or its environment is not an event filter.';
      return;
    }
    const text = JSON.stringify(w.event, null, 2);
    $('event').value = text;
    const report = JSON.parse(oz.checkFilter($('expr').value, options()));
    out.innerHTML = `Worst event built: metered cost <strong id="witness-metered">${fmt(w.cost)}</strong>${w.complete ? '' : ' (stopped there: more)'} beside the bound ${fmt(report.cost?.max ?? 0)} and the limit ${fmt(report.limit)}.`;
    if (witnessUrl) URL.revokeObjectURL(witnessUrl);
    witnessUrl = URL.createObjectURL(new Blob([`${JSON.stringify(w.event)}\n`], { type: 'application/json' }));
    $('download-witness').href = witnessUrl;
    $('download-witness').hidden = false;
    saveState();
  } catch (e) {
    out.textContent = `Error: ${e.message ?? e}`;
  }
});

$('evaluate').addEventListener('click', () => {
  const out = $('eval-result');
  const text = $('event').value;
  try {
    JSON.parse(text);
  } catch (e) {
    out.innerHTML = `<p class="error" id="eval-error">The event is not valid JSON: ${escapeHtml(e.message)}</p>`;
    return;
  }
  try {
    const limit = Number($('limit').value || 1000000);
    // The page's own check already judged the filter under the page's bounds; the CLI's eval
    // would check again under the default bounds and refuse a filter that the page's bounds
    // accept, so the evaluation here runs unchecked and shows that check's range beside.
    const report = JSON.parse(oz.checkFilter($('expr').value, options()));
    const r = JSON.parse(oz.evaluate($('expr').value, text, limit, 250, false));
    r.estimate ??= report.cost;
    if (r.error) {
      out.innerHTML = `<p class="error" id="eval-error">${escapeHtml(r.error.kind)}: ${escapeHtml(r.error.message)} (cost ${fmt(r.error.cost)})</p>`;
    } else {
      out.innerHTML = `<dl class="facts"><dt>Result</dt><dd id="eval-value"><code>${escapeHtml(JSON.stringify(r.value))}</code></dd><dt>Cost</dt><dd>${fmt(r.cost)}${r.estimate ? ` (estimate ${fmt(r.estimate.min)} – ${fmt(r.estimate.max)})` : ''}</dd><dt>Time</dt><dd>${fmt(r.elapsed_us)} µs</dd></dl>`;
    }
  } catch (e) {
    out.innerHTML = `<p class="error" id="eval-error">${escapeHtml(e.message ?? String(e))}</p>`;
  }
  saveState();
});
$('event').addEventListener('input', saveState);

// ---- the YAML tab ---------------------------------------------------------------------------

function lintYaml() {
  const text = $('yaml').value;
  let report;
  try {
    report = JSON.parse(oz.lintText(text, $('yaml-path').value, ''));
  } catch (e) {
    $('yaml-summary').textContent = `Error: ${e.message ?? e}`;
    return;
  }
  const findings = report.diagnostics;
  const fixable = findings.filter((f) => f.fix).length;
  $('yaml-summary').textContent = findings.length === 0
    ? 'No findings.'
    : `${findings.length} finding${findings.length === 1 ? '' : 's'}${fixable ? `, ${fixable} with a safe fix` : ''}.`;
  $('apply-fix').disabled = fixable === 0;
  const view = $('yaml-view');
  view.innerHTML = '';
  text.split('\n').forEach((line, i) => {
    const item = li(`<code>${escapeHtml(line) || ' '}</code>`);
    for (const f of findings.filter((d) => d.line === i + 1)) {
      const note = document.createElement('div');
      note.className = `finding ${f.severity}`;
      note.dataset.code = f.code;
      note.dataset.at = `${f.line}:${f.column}`;
      note.innerHTML = `<span class="at">${f.line}:${f.column}</span> <strong>${escapeHtml(f.code)}</strong> ${escapeHtml(f.message)}${f.fix ? ` <em>(fix: ${escapeHtml(f.fix.message)})</em>` : ''}`;
      item.append(note);
    }
    view.append(item);
  });
  saveState();
}

$('yaml').addEventListener('input', lintYaml);
$('yaml-path').addEventListener('input', lintYaml);
$('apply-fix').addEventListener('click', () => {
  const fixed = JSON.parse(oz.fixText($('yaml').value, $('yaml-path').value, ''));
  $('yaml').value = fixed.text;
  lintYaml();
  $('yaml-summary').textContent = `Applied ${fixed.applied} fix${fixed.applied === 1 ? '' : 'es'}. ${$('yaml-summary').textContent}`;
});

// ---- start ---------------------------------------------------------------------------------------

const started = performance.now();
init().then(() => {
  window.ozTimings.loadMs = performance.now() - started;
  $('status').textContent = `Analyzer loaded in ${window.ozTimings.loadMs.toFixed(0)} ms.`;
  loadState();
  check();
  lintYaml();
  document.body.dataset.ready = 'true';
}).catch((e) => {
  $('status').textContent = `The analyzer could not load: ${e.message ?? e}`;
});
