export { registerOpenApi, type OpenApiOptions } from './register.js';
export { knownFieldsValidator, unknownFields } from './known-fields.js';
export { buildGroupVersionDocs, openApiIndex, type GroupVersionDoc } from './documents.js';
export { lookupSchema, definitionName, kindSchemaName, type Schema } from './schemas.js';
