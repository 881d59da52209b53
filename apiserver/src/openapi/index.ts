export { registerOpenApi, type OpenApiOptions, type OpenApiSource } from './register.js';
export { knownFieldsValidator, unknownFields } from './known-fields.js';
export { buildGroupVersionDocs, openApiIndex, type GroupVersionDoc, type OpenApiResource, type OwnSchemas } from './documents.js';
export { lookupSchema, definitionName, kindSchemaName, type Schema } from './schemas.js';
