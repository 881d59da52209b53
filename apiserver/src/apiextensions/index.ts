export { CustomResourceDefinitions, CLEANUP_FINALIZER, type Crd, type CrdSpec, type CrdStatus, type CrdVersion, type CrdNames, type PrinterColumn } from './types.js';
export { crdStrategy, validateCrd, validateCrdUpdate, defaultCrd } from './crd-strategy.js';
export { CrdController, crdStatusFor, nameConflicts, type CrdControllerOptions } from './controller.js';
export { customResourceEntry, customResourceEntries, customDescriptor, customDefinitionName, customTablePrinter, customScale, sortVersions } from './custom-resource.js';
export { compileSchema, prune, unknownFieldPaths, applySchemaDefaults, structuralErrors, toAjvSchema, type JSONSchemaProps } from './schema.js';
export { parseJsonPath, evalJsonPath } from './jsonpath.js';
