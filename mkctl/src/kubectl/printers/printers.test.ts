import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '@mk8s/api';
import { tabwrite, DESCRIBE_TABWRITER } from './tabwriter.js';
import { printTable, WatchTableWriter, tableLines, type Table } from './table.js';
import { jsonpath } from './jsonpath.js';
import { parseOutput, printObjects, toYaml } from './output.js';
import { parseResourceArgs } from '../resources.js';
import { formatCliError } from '../errors.js';
import { CliError } from '../context.js';

describe('tabwriter (Go text/tabwriter as kubectl configures it)', () => {
  const cases: { name: string; in: string; out: string; opts?: typeof DESCRIBE_TABWRITER }[] = [
    { name: 'pads columns to the widest cell + 3, last column unpadded', in: 'NAME\tSTATUS\tAGE\ndefault\tActive\t39m\n', out: 'NAME      STATUS   AGE\ndefault   Active   39m\n' },
    { name: 'minwidth 6 for narrow columns', in: 'A\tB\nx\ty\n', out: 'A     B\nx     y\n' },
    { name: 'a blank line ends the column block', in: 'NAME\tX\nnamespace/default\t1\n\nNAME\tY\nnode/n\t2\n', out: 'NAME                X\nnamespace/default   1\n\nNAME     Y\nnode/n   2\n' },
    {
      name: 'describe: nested cells share a block with the lines around them',
      in: '    Environment:\n      A:\t1\n    Mounts:\t<none>\nConditions:\n', opts: DESCRIBE_TABWRITER,
      out: '    Environment:\n      A:     1\n    Mounts:  <none>\nConditions:\n',
    },
    { name: 'continuation lines with an empty first cell', in: 'Labels:\ta=b\n\tc=d\nStatus:\tok\n', opts: DESCRIBE_TABWRITER, out: 'Labels:  a=b\n         c=d\nStatus:  ok\n' },
  ];
  for (const tc of cases) test(tc.name, () => assert.equal(tabwrite(tc.in, tc.opts), tc.out));
});

describe('table printer', () => {
  const t: Table = {
    columnDefinitions: [{ name: 'Name', format: 'name', priority: 0 }, { name: 'Ready', priority: 0 }, { name: 'IP', priority: 1 }],
    rows: [
      { cells: ['web-1', '1/1', '10.244.0.5'], object: { metadata: { name: 'web-1', namespace: 'prod', labels: { app: 'web', tier: 'a' } } } },
      { cells: ['db', '0/1', null], object: { metadata: { name: 'db', namespace: 'prod' } } },
    ],
  };
  const cases: { name: string; opts: Parameters<typeof printTable>[1]; out: string }[] = [
    { name: 'priority-0 columns only', opts: {}, out: 'NAME    READY\nweb-1   1/1\ndb      0/1\n' },
    { name: '-o wide adds priority columns; nil cells print empty', opts: { wide: true }, out: 'NAME    READY   IP\nweb-1   1/1     10.244.0.5\ndb      0/1     \n' },
    { name: '-A puts NAMESPACE first', opts: { withNamespace: true }, out: 'NAMESPACE   NAME    READY\nprod        web-1   1/1\nprod        db      0/1\n' },
    { name: '--show-labels', opts: { showLabels: true }, out: 'NAME    READY   LABELS\nweb-1   1/1     app=web,tier=a\ndb      0/1     <none>\n' },
    { name: 'several kinds prefix the name', opts: { kindPrefix: 'pod' }, out: 'NAME        READY\npod/web-1   1/1\npod/db      0/1\n' },
    { name: '--no-headers', opts: { noHeaders: true }, out: 'web-1   1/1\ndb      0/1\n' },
  ];
  for (const tc of cases) test(tc.name, () => assert.equal(printTable(t, tc.opts), tc.out));

  test('watch rows keep the header widths (RememberWidths)', () => {
    const w = new WatchTableWriter();
    assert.equal(w.format(tableLines(t)), 'NAME    READY\nweb-1   1/1\ndb      0/1\n');
    assert.equal(w.format(['x\t0/1']), 'x       0/1\n');
  });
});

describe('jsonpath', () => {
  const data = { items: [{ metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'x' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }, { metadata: { name: 'b' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } }] };
  const cases: [string, string][] = [
    ['{.items[*].metadata.name}', 'a b'],
    ['{.items[0].metadata.name}', 'a'],
    ['{.items[-1].metadata.name}', 'b'],
    ['{range .items[*]}{.metadata.name}{"\\n"}{end}', 'a\nb\n'],
    ["{.items[0].metadata.labels['app\\.kubernetes\\.io/name']}", ''],
    ["{.items[0].metadata.labels['app.kubernetes.io/name']}", 'x'],
    ['{.items[?(@.metadata.name=="b")].status.conditions[0].status}', 'False'],
    ['{.missing}', ''],
    ['{..name}', 'a b'],
    ['names: {.items[*].metadata.name}', 'names: a b'],
    ['.items[1].metadata.name', 'b'],
  ];
  for (const [tpl, want] of cases) test(tpl, () => assert.equal(jsonpath(tpl, data), want));
});

describe('object printers', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  test('yaml sorts keys and does not indent sequences (sigs.k8s.io/yaml)', () => {
    assert.equal(toYaml(pod), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: d\nspec:\n  containers:\n  - image: i\n    name: c\n');
  });
  test('-o name uses kind.group', () => {
    assert.equal(printObjects([pod, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w' } }], { kind: 'name' }, false), 'pod/p\ndeployment.apps/w\n');
  });
  test('several objects print as a List', () => {
    assert.match(printObjects([pod], { kind: 'json' }, false), /"kind": "List"/);
  });
  test('unknown -o is a one-line error', () => assert.throws(() => parseOutput('xml'), /unable to match a printer/));
});

describe('resource arguments', () => {
  test('short names, several kinds and all', () => {
    assert.deepEqual(parseResourceArgs(['po,svc']).map((r) => r.resource.resource), ['pods', 'services']);
    assert.deepEqual(parseResourceArgs(['all']).map((r) => r.resource.resource), ['pods', 'services', 'daemonsets', 'deployments', 'replicasets', 'statefulsets']);
    assert.deepEqual(parseResourceArgs(['deployment.apps', 'web']).map((r) => [r.resource.kind, r.names]), [['Deployment', ['web']]]);
    assert.deepEqual(parseResourceArgs(['deploy/web', 'po/x']).map((r) => [r.resource.kind, r.names]), [['Deployment', ['web']], ['Pod', ['x']]]);
  });
  test('unknown kind', () => assert.throws(() => parseResourceArgs(['foo']), { message: 'error: the server doesn\'t have a resource type "foo"' }));
});

describe('errors are one actionable line', () => {
  const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) });
  const cases: { name: string; err: unknown; want: string }[] = [
    { name: 'connection refused', err: refused, want: 'error: cannot reach the API server at http://127.0.0.1:6443: is the cluster up? run make up' },
    { name: 'not found', err: new ApiError('NotFound', 'pods "x" not found'), want: 'Error from server (NotFound): pods "x" not found' },
    {
      name: '422 with a field path', want: 'The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      err: new ApiError('Invalid', 'Deployment.apps "web" is invalid: ...', { details: { name: 'web', kind: 'Deployment', causes: [{ field: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0', reason: 'FieldValueInvalid' }] } }),
    },
    { name: 'CLI errors keep their exit code', err: new CliError('command terminated with exit code 3', 3), want: 'command terminated with exit code 3' },
  ];
  for (const tc of cases) test(tc.name, () => assert.equal(formatCliError(tc.err, 'http://127.0.0.1:6443').message, tc.want));
  test('exit code of a failed exec', () => assert.equal(formatCliError(new CliError('x', 3)).exitCode, 3));
});
