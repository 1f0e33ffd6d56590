/**
 * Errors of mapping a payload to document data. A mapping error is a property of the payload and the
 * configuration, so trying again cannot help: every `MappingError` is non-retryable.
 */
import { DocrelayError } from '../commons/errors';

/** Stable codes of mapping problems. */
export type MappingErrorCode =
  /** An expression failed on this payload (e.g. arithmetic on a string). */
  | 'MAPPING_EXPRESSION_FAILED'
  /** An expression ran past its time budget. */
  | 'MAPPING_TIMEOUT'
  /** The payload or the evaluation nests too deeply. */
  | 'MAPPING_TOO_DEEP'
  /** An expression built a sequence or string too large. */
  | 'MAPPING_TOO_LARGE'
  /** A value cannot be converted to the property's type. */
  | 'MAPPING_INVALID_VALUE'
  /** A property the template file requires got no value. */
  | 'MAPPING_REQUIRED_MISSING'
  /** `data` names a property the template does not define (or one it marks read-only). */
  | 'MAPPING_UNKNOWN_PROPERTY'
  /** The template file cannot be chosen (unknown fileId, several files and no fileId, no files). */
  | 'MAPPING_TEMPLATE_FILE'
  /** Problems of several kinds at once. */
  | 'MAPPING_FAILED';

/** One problem found while mapping a rule. */
export interface MappingProblem {
  readonly code: Exclude<MappingErrorCode, 'MAPPING_FAILED'>;
  /** Rule the problem belongs to. */
  readonly rule?: string;
  /** Template property concerned, when there is one (`Tags[2]` for an element of a multi-value property). */
  readonly property?: string;
  /** What is wrong. Never contains secrets; may quote short payload values. */
  readonly message: string;
}

/** Formats one problem as `rule: "Property": message`. */
export function formatMappingProblem(problem: MappingProblem): string {
  const rule = problem.rule === undefined ? '' : `rule ${problem.rule}: `;
  const property = problem.property === undefined ? '' : `${JSON.stringify(problem.property)}: `;
  return `${rule}${property}${problem.message}`;
}

/** A payload could not be mapped; lists every problem found (of one rule, or of each failing rule). */
export class MappingError extends DocrelayError {
  override name = 'MappingError';
  /** Every problem found. */
  readonly problems: readonly MappingProblem[];
  /** Integration concerned, when known. */
  readonly integration?: string;

  constructor(problems: readonly MappingProblem[], options: { integration?: string; cause?: unknown } = {}) {
    const codes = new Set(problems.map((p) => p.code));
    const code: MappingErrorCode =
      codes.size === 1 ? (problems[0]?.code ?? 'MAPPING_FAILED') : 'MAPPING_FAILED';
    const where = options.integration === undefined ? '' : `${options.integration}: `;
    // One line: the CLI and job records show the message as is.
    super(code, `${where}${problems.map(formatMappingProblem).join('; ')}`, {
      retryable: false,
      cause: options.cause,
    });
    this.problems = problems;
    this.integration = options.integration;
  }
}
