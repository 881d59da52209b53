export * from './scheme.js';
export type * from './types.js';
export * from './errors.js';
export * from './selectors/labels.js';
export * as field from './validation/field.js';
export type { FieldError, FieldErrorType } from './validation/field.js';
export * from './validation/names.js';
export * from './selectors/fields.js';
export * from './quantity.js';
