export {
  wantsTable, toTable, tableColumns,
  type Table, type TableRow, type TableColumnDefinition, type TableRowCondition, type ToTableOptions, type IncludeObjectPolicy,
} from './table.js';
export { humanDuration, translateTimestampSince } from '@mk8s/api';
