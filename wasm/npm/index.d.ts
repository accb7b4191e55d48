// Types of the npm package's calls. The shapes are those of the CLI's `--format json`
// (docs/cli.md); `costSummary`, `witness`, `fixText` and `rules` are the same data as the
// language server's hover, `--witness`, `--fix` and `ozcheck rules`.

/** The environment an expression runs in, its limit, the source's bounds, its extensions. */
export interface FilterOptions {
  /** `filter` (default), `sender`, `when` or `template`. */
  context?: 'filter' | 'sender' | 'when' | 'template';
  /** The cost limit in units (default 1,000,000). */
  limit?: number;
  /** Largest `event.text` in bytes (`--max-text`). */
  maxText?: number;
  /** Largest `event.attributes` in bytes of compact JSON (`--max-attributes`). */
  maxAttributes?: number;
  /** Largest header field in bytes (`--max-header`). */
  maxHeader?: number;
  /** Extension names separated by commas, or `none`; default Kubernetes' set. */
  extensions?: string;
  /** Build the witness too (adds `witness_cost`, `witness_complete`). */
  witness?: boolean;
  /** Add the cost tree (`explain`). */
  explain?: boolean;
}

export interface Span { start: number; end: number }
export interface CostRange { min: number; max: number }

export interface Diagnostic {
  code: string;
  severity: 'error' | 'warning' | 'info' | string;
  message: string;
  /** Byte offsets into the expression's UTF-8. */
  span: Span;
  label: string | null;
  help: string | null;
}

export type BoundName = 'text' | 'attributes' | 'header_field';

export interface WouldPass {
  bounds: { bound: BoundName; flag: string; current: number; at_most: number; cost: number }[];
  not_enough: { bound: BoundName; flag: string; least: number; cost: number }[];
}

export interface Report {
  verdict: 'accepted' | 'refused';
  cost: CostRange | null;
  limit: number;
  diagnostics: Diagnostic[];
  would_pass: WouldPass | null;
  witness_cost?: number;
  witness_complete?: boolean;
  explain?: string;
  /** The version of the cost table behind every figure (docs/cost-model.md). */
  cost_model_version: number;
}

export interface CostSummary {
  cost: CostRange;
  limit: number;
  /** The dominating sub-expression (byte offsets). */
  dominant: Span;
  /** Its own max per evaluation. */
  dominant_max: number;
  /** How many times it may run per evaluation of the whole. */
  dominant_runs: number;
  assumption: string;
  would_pass: WouldPass | null;
  cost_model_version: number;
}

export interface Witness {
  event: Record<string, unknown>;
  /** The metered cost on the event. */
  cost: number;
  /** False when the evaluation was stopped before it ended (the cost is then a lower bound). */
  complete: boolean;
  evaluations: number;
  cost_model_version: number;
}

export type Evaluation =
  | { value: unknown; cost: number; estimate: CostRange | null; elapsed_us: number; cost_model_version: number }
  | {
      error: {
        kind: 'refused' | 'cost-limit' | 'deadline' | 'memory' | 'runtime';
        message: string;
        cost: number;
        diagnostics?: { code: string; message: string; span: Span }[];
      };
      cost_model_version: number;
    };

export interface EvaluateOptions {
  /** Cost limit in units; 0 turns it off (the deadline alone stops). Default 1,000,000. */
  limit?: number;
  /** Wall-clock budget in milliseconds, read from `performance.now()`. Default 250. */
  deadlineMs?: number;
  /** Run the static check first (default true); a refused filter is not evaluated. */
  staticCheck?: boolean;
}

export interface Edit {
  content: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
}

export interface Finding {
  code: string;
  severity: 'error' | 'warning' | string;
  message: string;
  help: string | null;
  fix: { message: string; edits: Edit[] } | null;
  file: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
}

export interface LintOptions {
  /** The text of an `ozcheck.toml` (rule levels, source bounds, extensions). */
  config?: string;
}

export interface Rule {
  id: string;
  severity: string;
  summary: string;
  what: string;
  why: string;
  example: string;
  use_instead: string;
  fix: string;
}

export function checkFilter(source: string, options?: FilterOptions): Report;
export function costSummary(source: string, options?: FilterOptions): CostSummary | null;
export function explain(source: string, options?: FilterOptions): string;
export function witness(source: string, options?: FilterOptions): Witness | null;
export function evaluate(
  source: string,
  event: string | Record<string, unknown>,
  options?: EvaluateOptions,
): Evaluation;
export function lintText(
  text: string,
  path: string,
  options?: LintOptions,
): { diagnostics: Finding[]; cost_model_version: number };
export function fixText(
  text: string,
  path: string,
  options?: LintOptions,
): { text: string; applied: number; diagnostics: Finding[]; cost_model_version: number };
export function rules(): Rule[];
